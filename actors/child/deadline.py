"""A run's deadline (reference §c18, ``runTimeoutSeconds``): whole seconds from the run's start.

OpenClaw's deadline is start + ``Math.floor(runTimeoutSeconds) * 1000`` ms, so 30.9 s gives 30 s;
0 or absent means no deadline (a value under one second floors to 0: none either). A run still
going at its deadline ends ``timeout`` there (its end time is the deadline, so the stats line's
runtime is the deadline minus the start); a run that ends first is unaffected. A scripted child
may also carry its own time budget (the scenario's ``timeout``, milliseconds): the earlier of
the two stops it.
"""

from __future__ import annotations

from actors.mutants import MUTANT_RUN_TIMEOUT_UNFLOORED


def run_timeout_budget_ms(run_timeout_ms: int | None,
                          mutants: frozenset[str] = frozenset()) -> int | None:
    """The deadline's distance from the start that ``runTimeoutSeconds`` (given in ms, as
    asked: 30900 for 30.9 s) sets, or None (no deadline)."""
    if not run_timeout_ms:
        return None
    budget = run_timeout_ms if MUTANT_RUN_TIMEOUT_UNFLOORED in mutants \
        else run_timeout_ms // 1000 * 1000
    return budget or None


def budget_ms(timeout_ms: int | None, run_timeout_ms: int | None,
              mutants: frozenset[str] = frozenset()) -> int | None:
    """How long after its start the run may go on: the earlier of its own budget and its
    spawn's ``runTimeoutSeconds`` deadline; None: no limit."""
    run_budget = run_timeout_budget_ms(run_timeout_ms, mutants)
    if run_budget is None:
        return timeout_ms
    return run_budget if timeout_ms is None else min(timeout_ms, run_budget)
