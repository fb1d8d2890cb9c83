"""Seed batches spread over local worker processes or a Dask cluster (SIM-9).

A sweep is cut into contiguous batches of seeds that each last seconds (a process hand-off costs
about a millisecond, a Dask task about as much again, so 25-seed batches wasted a tenth of the
time and balanced badly), a few batches per worker so a slow batch does not hold the others up.
Batches come back in seed order, so a parallel sweep reports exactly what a serial one does.

Hash seeds: a run's outcome does not depend on ``PYTHONHASHSEED`` (no set is iterated and string
seeds are hashed by SHA-512 in ``random.Random``; tests/explore/test_pool.py runs one sweep under
two hash seeds and compares digests), and local workers are forked from the sweeping process, so
they share its hash seed anyway. Dask workers are processes of their own; the same independence
makes their results equal to a serial sweep's, which tests/explore/test_pool.py checks seed for
seed.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import Synchronized

    from sim.explore.seed import SeedOutcome, Sweep

# About a second and a half of work per batch at ~150 seeds/s on one core.
MIN_BATCH = 200
# At most this many batches per worker: enough to even out slow batches.
BATCHES_PER_WORKER = 4
# ... unless batches would grow past this (about fifteen seconds): progress stays visible and a
# worker never holds a huge batch's outcomes.
MAX_BATCH = 2_000

# How often a waiting sweep reads the workers' shared count of seeds done (the progress bar moves
# per seed, not per batch); it never enters a run.
PROGRESS_POLL_SECONDS = 0.2

# Trio's scheduler seed is process-wide (sim/determinism.py): two runs in two threads of one
# process would disturb each other's schedules. A Dask worker may run tasks in several threads,
# so runs there take this lock one at a time.
_ONE_RUN_AT_A_TIME = threading.Lock()


def batches(seeds: Sequence[int], workers: int,
            min_batch: int = MIN_BATCH) -> list[Sequence[int]]:
    """Contiguous batches: ``workers`` times 1..BATCHES_PER_WORKER, each of >= ``min_batch``
    seeds where the sweep is large enough, sizes differing by at most one."""
    per_worker = max(1, min(BATCHES_PER_WORKER, len(seeds) // max(1, workers * min_batch)))
    count = max(1, min(len(seeds), workers * per_worker), -(-len(seeds) // MAX_BATCH))
    size, extra = divmod(len(seeds), count)
    out: list[Sequence[int]] = []  # slices: a range's batches are ranges
    start = 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(seeds[start:end])
        start = end
    return out


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """A worker's initializer: end when the sweeping process ends, however it ends (SIGTERM,
    SIGKILL, a crash): on Linux the kernel sends the worker SIGKILL then (PR_SET_PDEATHSIG). A
    parent gone before this ran is caught by the ``getppid`` check. Elsewhere workers rely on
    the pool noticing its parent's pipe close, which needs the parent to end cleanly."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


# A local worker's share of the sweep's count of seeds done (set by its initializer).
_done: Synchronized[int] | None = None


def start_worker(parent: int, done: Synchronized[int] | None) -> None:
    """A local worker's initializer: tied to its parent, counting its seeds into ``done``."""
    global _done
    die_with_parent(parent)
    _done = done


def _count_seed(_: int) -> None:
    if _done is not None:
        with _done.get_lock():
            _done.value += 1


def run_batch(spec: Sweep, seeds: Sequence[int]) -> list[SeedOutcome]:
    from sim.explore.seed import run_seeds
    from sim.gc_tuning import tune_for_sweeps

    tune_for_sweeps()  # a Dask worker's process (a forked one is tuned already)
    with _ONE_RUN_AT_A_TIME:
        return run_seeds(spec, seeds, _count_seed if _done is not None else None)


def local(spec: Sweep, seeds: Sequence[int], jobs: int,
          progress: Callable[[int], None] | None = None) -> list[SeedOutcome]:
    """Forked local workers (they inherit the sweeping process's imports and hash seed).

    Batches are submitted a few per worker at a time, so a long sweep never holds all its
    futures. ``progress`` hears of seeds as the workers finish them (a count they share), so a
    bar moves during the first batch too."""
    parts = batches(seeds, jobs)
    window = BATCHES_PER_WORKER * jobs
    outcomes: list[SeedOutcome] = []
    pending: deque[Future[list[SeedOutcome]]] = deque()
    context = get_context("fork")
    done = context.Value("q", 0) if progress is not None else None
    told = 0

    def tell() -> None:
        nonlocal told
        if progress is not None and done is not None and done.value > told:
            now = done.value
            progress(now - told)
            told = now

    def collect() -> None:
        future = pending.popleft()
        while True:
            try:
                part = future.result(timeout=PROGRESS_POLL_SECONDS)
                break
            except TimeoutError:
                tell()
        outcomes.extend(part)
        tell()

    with ProcessPoolExecutor(max_workers=min(jobs, len(parts)), mp_context=context,
                             initializer=start_worker, initargs=(os.getpid(), done)) as pool:
        for part in parts:
            pending.append(pool.submit(run_batch, spec, part))
            if len(pending) >= window:
                collect()
        while pending:
            collect()
    return outcomes


def dask(spec: Sweep, seeds: Sequence[int], address: str,
         progress: Callable[[int], None] | None = None) -> list[SeedOutcome]:
    """The same batches on a Dask distributed cluster (``pip install 'handoff-sim[dask]'``)."""
    try:
        from dask.distributed import Client
    except ImportError as err:
        raise DaskMissing("--dask needs dask.distributed: pip install 'handoff-sim[dask]'") \
            from err
    with Client(address, set_as_default=False) as client:  # type: ignore[no-untyped-call,unused-ignore]
        workers = max(1, sum(client.nthreads().values()))
        parts = batches(seeds, workers)
        futures = client.map(run_batch, [spec] * len(parts), parts, pure=False)
        return _in_order((future.result() for future in futures), progress)


class DaskMissing(RuntimeError):
    pass


def _in_order(parts: Iterable[list[SeedOutcome]],
              progress: Callable[[int], None] | None) -> list[SeedOutcome]:
    outcomes: list[SeedOutcome] = []
    for part in parts:
        outcomes += part
        if progress is not None:
            progress(len(part))
    return outcomes

