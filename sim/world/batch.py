"""Many seeds of one configuration in one Trio run: a sweep's seeds, one after another.

A ``trio.run`` of its own costs each seed ~1.3 M instructions and a handful of system calls (an
epoll instance, two socket pairs, the SIGINT handler, the system tasks): a few per cent of a
default-world seed, for nothing a simulated run uses. Here one run hosts a batch of seeds, and
each seed's world still runs as in :func:`sim.world.core.run`: its actors are Trio tasks in its
own nurseries, under a task of its own (a fresh copy of the run's context), with a clock of its
own and Trio's batch-order stream reset to exactly where a fresh run's main task finds it. No
Trio deadline is ever set (the kernel keeps virtual time), every task of a seed has ended before
the next one starts, and the task creation counter Trio sorts each batch by only grows, so its
order is unchanged. A seed therefore gives the same trace in a batch as alone;
tests/world/test_batch.py checks it, and that it fails when the batch-order stream is not reset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import trio

from sim.choices import Schedule
from sim.determinism import as_if_run_started, lone, run_trio, seed_trio_scheduler
from sim.scenario import Scenario
from sim.world import core
from sim.world.clock import VirtualClock
from sim.world.result import RunResult


class SeedClock(trio.abc.Clock):
    """The shared run's clock: whichever seed's own clock is current (each seed's kernel jumps
    its own, from zero, as in a run of its own)."""

    def __init__(self) -> None:
        self.current = VirtualClock()

    def start_clock(self) -> None:
        self.current.start_clock()

    def current_time(self) -> float:
        return self.current.time  # what its current_time() gives, one call fewer per batch

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return self.current.deadline_to_sleep_time(deadline)


def run_each(
    scenario: Scenario,
    seeds: Sequence[int],
    take: Callable[[int, RunResult | Exception], None],
    *,
    strategy: str | None = None,
    mutants: Sequence[str] | None = None,
    fault_kinds: Sequence[str] | None = None,
    replay: Schedule | None = None,
    replay_steps: int | None = None,
) -> None:
    """Run ``scenario`` for each seed in turn (the other arguments as
    :func:`sim.world.core.run`'s) and hand ``take`` each seed's result, or the model exception
    its run raised (with the steps it took, as :func:`~sim.world.core.run` raises it). An
    exception ``take`` raises ends the batch."""
    clock = SeedClock()

    async def one(world: core.World, failed: list[Exception]) -> None:
        try:
            await world.main()
        except Exception as exc:  # a model exception, as run_trio would re-raise it
            leaf = lone(exc)
            failed.append(leaf if isinstance(leaf, Exception) else exc)

    async def batch() -> None:
        for seed in seeds:
            try:
                world = core.prepare(scenario, seed=seed, strategy=strategy, mutants=mutants,
                                     fault_kinds=fault_kinds, replay=replay,
                                     replay_steps=replay_steps)
            except Exception as exc:  # the world's build failed: this seed's, as core.run's
                take(seed, exc)
                continue
            clock.current = world.clock
            failed: list[Exception] = []
            seed_trio_scheduler(0)  # as core.run does, then as its fresh run starts
            as_if_run_started()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(one, world, failed)
            try:
                result: RunResult | Exception = world.finish(failed[0] if failed else None)
            except Exception as exc:
                result = exc
            take(seed, result)

    run_trio(batch, clock)
