"""Seeded randomness for the simulator, and Trio's scheduler made deterministic.

Everything random in a run comes from one root seed, split by subsystem name into independent
``random.Random`` instances (never the global ``random`` module), so turning one fault kind on does
not shift the draws of another. String seeds are hashed with SHA-512 by ``random.Random`` itself,
so the split does not depend on ``PYTHONHASHSEED``.

Trio randomises the order of each scheduler batch with a module-level ``_r`` and only sorts batches
by task creation order when the private ``_ALLOW_DETERMINISTIC_SCHEDULING`` flag is set (importing
Hypothesis sets it too). Both are private, so this is the one place that touches them, and it
refuses to run on a Trio version it was not checked against. See
``shared/reference/trio-determinism.md`` for the measurements behind this.
"""

from __future__ import annotations

import functools
import importlib
import random
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import trio

# Trio is imported where a run needs it, not here: ``sim.choices`` (and through it the CLI's
# option lists) imports this module, and ``handoff --help`` should not pay for Trio.

# Versions whose ``_run.py`` was read and whose behaviour tests/test_determinism.py checks.
SUPPORTED_TRIO_VERSIONS = ("0.35.",)


class UnsupportedTrioVersion(RuntimeError):
    pass


def check_trio_version(version: str | None = None) -> None:
    if version is None:
        import trio

        version = trio.__version__
    if not version.startswith(SUPPORTED_TRIO_VERSIONS):
        raise UnsupportedTrioVersion(
            f"trio {version} is not a version handoff's deterministic scheduling was checked "
            f"against ({', '.join(v + 'x' for v in SUPPORTED_TRIO_VERSIONS)})"
        )


def seed_trio_scheduler(seed: int) -> None:
    """Make Trio's batch ordering a function of ``seed`` alone.

    Seeding ``_r`` is not enough: cancellation walks a set of tasks and equal deadlines break ties
    on ``id()``; with the flag on, each batch is first sorted by task creation counter.
    """
    import trio._core._run as _trio_run

    check_trio_version()
    setattr(_trio_run, "_ALLOW_DETERMINISTIC_SCHEDULING", True)  # noqa: B010 (Final in Trio)
    _trio_run._r.seed(rng_seed(seed, "trio-scheduler"))


@functools.cache
def _trio_run() -> ModuleType:
    """Trio's run loop module, imported once: an ``import`` statement in the two peeks below
    cost ~0.7 µs at each of a seed's few hundred hand-offs."""
    return importlib.import_module("trio._core._run")


def others_runnable() -> bool:
    """Whether Trio's run queue holds any task (the kernel's hand-off to the running task
    itself skips a yield when nothing else would share the next batch; sim/kernel.py)."""
    return bool(_trio_run().GLOBAL_RUN_CONTEXT.runner.runq)


def cancelled() -> bool:
    """Whether the running task's cancel scope is cancelled (it is woken with Cancelled at its
    next wait): ``trio.current_effective_deadline() == -inf`` without its walk up every
    enclosing scope, which the kernel paid at every hand-off (sim/kernel.py)."""
    task = _trio_run().GLOBAL_RUN_CONTEXT.task
    return bool(task._cancel_status.effectively_cancelled)


def rng_seed(seed: int, subsystem: str) -> str:
    return f"handoff:{seed}:{subsystem}"


def rng_for(seed: int, subsystem: str) -> random.Random:
    """An independent generator for one subsystem of one run."""
    return random.Random(rng_seed(seed, subsystem))


def run_trio(main: Callable[[], Awaitable[None]], clock: trio.abc.Clock) -> None:
    """``trio.run`` that re-raises a lone exception from its nursery group unwrapped.

    Trio wraps every nursery error in an ExceptionGroup; a run fails for one reason (a diverged
    replay, a bug in an actor), and callers want that reason itself.
    """
    import trio

    try:
        trio.run(main, clock=clock)
    except BaseExceptionGroup as group:
        leaf = lone(group)
        if leaf is group:
            raise
        raise leaf  # noqa: B904 (its cause is the group: see lone)


def lone(exc: BaseException) -> BaseException:
    """A group's lone leaf exception, its cause set to the group, else ``exc`` itself."""
    if isinstance(exc, BaseExceptionGroup):
        leaves = _leaves(exc)
        if len(leaves) == 1:
            leaves[0].__cause__ = exc
            return leaves[0]
    return exc


def as_if_run_started() -> None:
    """Leave Trio's batch order stream as a fresh ``trio.run`` leaves it when its main task
    first runs, for a seed that starts inside a run other seeds shared (sim/world/batch.py).

    Trio's init task starts the main task and its own ``run_sync_soon`` task together: the
    run's first batch of two, which the deterministic flag sorts and then shuffles with ``_r``.
    Every later batch of two or more (a cancelled scope waking several tasks) draws from what
    is left, so the seed's own first task must find ``_r`` where a fresh run's main task does;
    tests/world/test_batch.py compares the two states.
    """
    _trio_run()._r.shuffle([0, 1])


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    leaves: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            leaves += _leaves(exc)
        else:
            leaves.append(exc)
    return leaves
