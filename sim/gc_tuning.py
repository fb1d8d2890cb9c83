"""Garbage-collector settings for big runs (thousands of children), applied once per process.

A run makes reference cycles (Trio's tasks, nurseries and cancelled scopes), so the collector must
run, but at Python's defaults it spent 7 % of a default-world sweep's CPU time and 11 % of a
4,000-child run's (a third of that in full collections that walk every live object, including the
~100k objects of the imported modules). Measured with ``gc.callbacks`` on a busy 2-core machine:

| setting | 200 seeds, 8 children: GC share | one run, 4,000 children: GC share |
|---|---|---|
| defaults (700, 10, 10) | 7 % (0.24 s of 3.65 s) | 11 % (1.78 s of 15.9 s) |
| ``gc.freeze()`` after set-up | 4 % (0.15 s of 3.48 s) | |
| freeze + threshold (50,000, 20, 100) | 6 % (0.18 s of 3.27 s) | 2 % (0.25 s of 12.5 s) |

``gc.freeze()`` moves what exists after set-up (modules, the loaded world) out of the collector's
sight; a gen-0 threshold of 50,000 lets most of a seed's short-lived objects die by reference count
before any collection looks at them. The peak memory of the 4,000-child run rose from 191 to
210 MiB. GC timing never changes a run's outcome (no finalizer in the model has an effect on it).

Sweeps (``explore``, its workers, ``bench``) freeze what exists after set-up and use a gen-0
threshold of 10,000: the world's ~250 trace records and their actors' objects per seed mostly die
by reference count, and the full collections no longer walk the imported modules. Measured with
``gc.callbacks`` over 300 default-world seeds in one process after a 10-seed warm-up (the grown
world: gateway, receipts, recovery, routes), on a busy 2-core machine, the collector's share of
the CPU time:

| setting | GC share (runs) |
|---|---|
| defaults (700, 10, 10) | 4.8 %, 4.6 %, 5.1 % |
| ``gc.freeze()`` | 3.4 %, 3.6 % |
| freeze + (50,000, 20, 100) | 4.4 %, 4.2 % |
| freeze + (20,000, 10, 10) | 2.8 % |
| freeze + (10,000, 10, 10) | 2.3 %, 2.2 %, 2.1 % |

so about 2.5 % of a sweep's CPU time; the whole-process CPU time of such runs swung by 30 % with the
machine's load, which hides a gain of that size (an earlier A/B of a smaller world, with the big-run
thresholds, measured a median ratio of 1.01).
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 100)
SWEEP_THRESHOLDS = (10_000, 10, 10)

_tuned = False


def tune_for_sweeps() -> None:
    """Freeze what exists now and raise the gen-0 threshold for many small runs; a process tunes
    once (a forked worker inherits it), and a big run's tuning, if first, stays."""
    _tune_once(SWEEP_THRESHOLDS)


def tune_for_big_runs() -> None:
    """Freeze what exists now and raise the thresholds; later calls do nothing."""
    _tune_once(THRESHOLDS)


def _tune_once(thresholds: tuple[int, ...]) -> None:
    global _tuned
    if _tuned:
        return
    _tuned = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
