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
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from multiprocessing import get_context
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import Synchronized

    from sim.explore.seed import SeedOutcome, Sweep

_T = TypeVar("_T")

# About a second and a half of work per batch at ~150 seeds/s on one core.
MIN_BATCH = 200
# At most this many batches per worker: enough to even out slow batches.
BATCHES_PER_WORKER = 4
# ... unless batches would grow past this (about three seconds): progress stays visible, a
# worker never holds a huge batch's outcomes, and Ctrl-C loses little work in flight (the
# batches done are reported; a hand-off per three seconds costs nothing measurable).
MAX_BATCH = 400

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
    the pool noticing its parent's pipe close, which needs the parent to end cleanly.

    Ctrl-C reaches every process of the terminal's group; in a worker it (or SIGUSR1, which the
    sweeping process sends when only it got the Ctrl-C) asks the batch in hand to stop after
    its current seed and return the seeds done (:func:`stop_requested`)."""
    _STOP.clear()
    signal.signal(signal.SIGINT, _request_stop)
    signal.signal(signal.SIGUSR1, _request_stop)
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


# Set by Ctrl-C while a sweep runs (:func:`stop_on_interrupt`), in a worker by SIGUSR1 too: the
# sweep stops after the seed in hand, keeping every seed done.
_STOP = threading.Event()


def stop_requested() -> bool:
    return _STOP.is_set()


def _request_stop(signum: int, frame: object) -> None:
    if _STOP.is_set() and signum == signal.SIGINT and os.getpid() == _SWEEPER[0]:
        raise KeyboardInterrupt  # a second Ctrl-C: stop now, whatever is in flight
    _STOP.set()


_SWEEPER = [0]  # the process that installed the handler (a worker inherits the handler)


@contextmanager
def stop_on_interrupt() -> Iterator[None]:
    """While a sweep runs: Ctrl-C asks it to stop after the seeds in hand (workers are told,
    queued batches dropped) so that the seeds done can be reported; a second Ctrl-C raises
    ``KeyboardInterrupt`` at once. Outside the main thread (no signals there) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _STOP.clear()
    _SWEEPER[0] = os.getpid()
    previous = signal.signal(signal.SIGINT, _request_stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _tell_workers(pool: ProcessPoolExecutor) -> None:
    """Pass a stop request on to every worker (SIGUSR1: see :func:`die_with_parent`)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            os.kill(process.pid, signal.SIGUSR1)
        except (OSError, TypeError):  # gone already, or not started
            pass


def wait(future: Future[_T], pool: ProcessPoolExecutor,
         tick: Callable[[], None] | None = None) -> _T:
    """``future.result()``, passing a stop request on to the workers as soon as it is made (a
    plain wait would not notice one), and calling ``tick`` while it waits (a progress bar)."""
    told = False
    while True:
        try:
            return future.result(timeout=PROGRESS_POLL_SECONDS)
        except FutureTimeout:
            if stop_requested() and not told:
                _tell_workers(pool)
                told = True
            if tick is not None:
                tick()


@contextmanager
def workers(jobs: int, done: Synchronized[int] | None = None) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``jobs`` forked workers that die with this process (and count their seeds into
    ``done``, if given: :func:`start_worker`). Left by an exception (Ctrl-C's
    ``KeyboardInterrupt`` included) or abandoned (a generator closed), it kills its workers and
    drops the queued batches at once instead of waiting for them to finish."""
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork"),
                               initializer=start_worker, initargs=(os.getpid(), done))
    try:
        yield pool
    except BaseException:
        stop(pool)
        raise
    pool.shutdown()


def stop(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers and cancel what is queued (``shutdown`` alone waits for the
    running batches; Python 3.14's ``terminate_workers`` does this)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        try:
            process.kill()
        except (OSError, ValueError):  # gone already
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.join(timeout=1)


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
    """The batch's outcomes: all of them, or the first ones when a stop was requested."""
    from sim.explore.seed import run_seeds
    from sim.gc_tuning import tune_for_sweeps

    if stop_requested():
        return []
    tune_for_sweeps()  # a Dask worker's process (a forked one is tuned already)
    with _ONE_RUN_AT_A_TIME:
        return run_seeds(spec, seeds, _count_seed if _done is not None else None,
                         stop=stop_requested)


def local(spec: Sweep, seeds: Sequence[int], jobs: int,
          progress: Callable[[int], None] | None = None) -> list[SeedOutcome]:
    """Forked local workers (they inherit the sweeping process's imports and hash seed)."""
    return _in_order(local_parts(spec, seeds, jobs, progress), None)


def local_parts(spec: Sweep, seeds: Sequence[int], jobs: int,
                progress: Callable[[int], None] | None = None) -> Iterator[list[SeedOutcome]]:
    """Each batch's outcomes, in seed order. Batches are submitted a few per worker at a time,
    so a long sweep never holds all its futures. ``progress`` hears of seeds as the workers
    finish them (a count they share), so a bar moves during the first batch too. A stop request
    (:func:`stop_on_interrupt`) ends it after the seeds done in order, the first cut batch's
    included; closing the iterator stops the workers at once."""
    parts = batches(seeds, jobs)
    window = BATCHES_PER_WORKER * jobs
    pending: deque[tuple[Future[list[SeedOutcome]], int]] = deque()
    counted = get_context("fork").Value("q", 0) if progress is not None else None
    told = 0

    def tell() -> None:
        nonlocal told
        if progress is not None and counted is not None and counted.value > told:
            now = counted.value
            progress(now - told)
            told = now

    with workers(min(jobs, len(parts)), counted) as pool:
        for part in parts:
            if stop_requested():
                break
            pending.append((pool.submit(run_batch, spec, part), len(part)))
            while len(pending) >= window or (pending and part is parts[-1]):
                future, size = pending.popleft()
                done = wait(future, pool, tell)
                tell()
                yield done
                if len(done) < size:  # cut short: later batches would leave a gap
                    stop(pool)
                    return
        stop(pool)


# How long a Dask sweep waits for its scheduler, and for a worker when it has none (seconds).
DASK_TIMEOUT = 10.0


def dask(spec: Sweep, seeds: Sequence[int], address: str,
         progress: Callable[[int], None] | None = None,
         timeout: float = DASK_TIMEOUT) -> list[SeedOutcome]:
    """The same batches on a Dask distributed cluster (``pip install 'handoff-sim[dask]'``)."""
    return _in_order(dask_parts(spec, seeds, address, timeout), progress)


def dask_parts(spec: Sweep, seeds: Sequence[int], address: str, timeout: float = DASK_TIMEOUT,
               workers_seen: Callable[[int], None] | None = None
               ) -> Iterator[list[SeedOutcome]]:
    """Each batch's outcomes from the cluster, in seed order. The scheduler must answer within
    ``timeout`` (:class:`DaskUnreachable` otherwise); a cluster that loses its scheduler, or
    has no worker for ``timeout`` seconds, ends the sweep with :class:`DaskLost` instead of
    waiting forever. ``workers_seen`` is told the cluster's worker threads."""
    try:
        from dask.distributed import Client
        from distributed import TimeoutError as DaskTimeout
    except ImportError as err:
        raise DaskMissing("--dask needs dask.distributed: pip install 'handoff-sim[dask]'") \
            from err
    _check_address(address)
    try:
        client = Client(address, set_as_default=False,  # type: ignore[no-untyped-call,unused-ignore]
                        timeout=timeout)
    except (OSError, ValueError, TypeError, DaskTimeout) as err:
        raise DaskUnreachable(f"cannot reach the scheduler within {timeout:g} s: {_why(err)}") \
            from None
    try:
        threads = _threads(client, timeout)
        if workers_seen is not None:
            workers_seen(threads)
        parts = batches(seeds, threads)
        futures = client.map(run_batch, [spec] * len(parts), parts, pure=False)
        for future in futures:
            done = _await(client, future, timeout)
            if done is None:  # stop requested: the batches in flight are dropped
                return
            yield done
    finally:
        client.close(timeout=2)  # type: ignore[no-untyped-call,unused-ignore]


def _check_address(address: str) -> None:
    """A scheduler address Dask can dial (``tcp://HOST:PORT``...), checked before a client is
    made (a client made from a malformed one fails only as it is collected, noisily)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address, strict=False)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss", "ucx"):
            host, port = parse_host_port(location)
            if not host or not port:
                raise ValueError(f"no host or port in {address!r}")
    except (ValueError, TypeError) as err:
        raise DaskUnreachable(f"not a scheduler address: {_why(err)}") from None


def _why(err: BaseException) -> str:
    return " ".join(str(err).split())[:200] or type(err).__name__


def _threads(client: object, timeout: float) -> int:
    """The cluster's worker threads, waiting up to ``timeout`` for a first worker."""
    import time

    waited = 0.0
    while True:
        try:
            threads = sum(client.nthreads().values())  # type: ignore[attr-defined]
        except (OSError, TimeoutError) as err:
            raise DaskLost(f"lost the scheduler: {_why(err)}") from None
        if threads:
            return int(threads)
        if waited >= timeout:
            raise DaskLost(f"the cluster has had no worker for {timeout:g} s")
        time.sleep(0.5)  # wall-clock ok: waiting for a cluster, never inside a run
        waited += 0.5


def _await(client: object, future: object, timeout: float) -> list[SeedOutcome] | None:
    """A batch's outcomes, checking every second that the cluster still has a worker (None:
    a stop was requested)."""
    from distributed import TimeoutError as DaskTimeout

    while True:
        try:
            return future.result(timeout=1)  # type: ignore[attr-defined,no-any-return]
        except (DaskTimeout, TimeoutError):
            pass
        if stop_requested():
            return None
        if getattr(client, "status", "running") != "running":
            raise DaskLost("lost the scheduler")
        _threads(client, timeout)


class DaskMissing(RuntimeError):
    pass


class DaskUnreachable(RuntimeError):
    """The ``--dask`` address is malformed or no scheduler answered there in time."""


class DaskLost(RuntimeError):
    """The cluster went away (its scheduler, or every worker for too long) during a sweep."""


def _in_order(parts: Iterable[list[SeedOutcome]],
              progress: Callable[[int], None] | None) -> list[SeedOutcome]:
    outcomes: list[SeedOutcome] = []
    for part in parts:
        outcomes += part
        if progress is not None:
            progress(len(part))
    return outcomes

