"""The harness as scheduler: exact virtual times, one actor at a time, recorded choices."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest
import trio

from actors.events import Event, register
from actors.runtime import Crash
from sim.choices import Chooser, ScheduleDiverged
from sim.determinism import seed_trio_scheduler
from sim.kernel import ActorPort, Kernel, run_trio
from sim.world.clock import VirtualClock


def run_kernel(build: Any, seed: int = 0, strategy: str = "random",
               replay: Any = None) -> tuple[Kernel, str]:
    seed_trio_scheduler(seed)
    chooser = Chooser(seed, strategy, replay=replay)
    clock = VirtualClock()
    kernel = Kernel(chooser, clock=clock)
    reason = ""

    async def main() -> None:
        nonlocal reason
        async with trio.open_nursery() as nursery:
            build(kernel, nursery)
            reason = await kernel.run(until_ms=10_000_000, max_steps=10_000)
            kernel.closed = True
            nursery.cancel_scope.cancel()

    run_trio(main, clock)
    return kernel, reason


def test_sleep_and_timers_advance_virtual_time_exactly() -> None:
    seen: list[tuple[str, int]] = []

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def sleeper(port: ActorPort) -> None:
            await port.sleep(1500)
            seen.append(("woke", port.now_ms))
            port.set_timer(250, "tick")
            assert await port.receive() == "tick"
            seen.append(("tick", port.now_ms))

        kernel.spawn(nursery, "a", sleeper)

    kernel, reason = run_kernel(build)
    assert seen == [("woke", 1500), ("tick", 1750)]
    assert reason == "quiescent"
    assert kernel.now_ms == 1750


def test_a_cancelled_sleeps_wake_up_is_inert_for_the_next_sleep() -> None:
    """A sleep cut short by a cancel leaves its wake-up on the agenda; when due it is inert
    (another sleep's token) and no step, and the next sleep ends on its own time."""
    seen: list[tuple[str, int]] = []

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        scope = trio.CancelScope()

        async def sleeper(port: ActorPort) -> None:
            with scope:
                await port.sleep(100)
            seen.append(("cancelled", port.now_ms))
            await port.sleep(200)
            seen.append(("woke", port.now_ms))

        kernel.spawn(nursery, "a", sleeper)
        kernel.at(50, "cancel", scope.cancel)

    kernel, _ = run_kernel(build)
    assert seen == [("cancelled", 50), ("woke", 250)]
    assert kernel.steps == 2  # the cancel and the second wake-up; the first is inert


def test_messages_wait_in_the_mailbox_while_an_actor_sleeps() -> None:
    got: list[tuple[Any, int]] = []

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def busy(port: ActorPort) -> None:
            await port.sleep(100)
            while True:
                got.append((await port.receive(), port.now_ms))

        async def sender(port: ActorPort) -> None:
            port.send("busy", "early")
            await port.sleep(200)
            port.send("busy", "late")

        kernel.spawn(nursery, "busy", busy)
        kernel.spawn(nursery, "sender", sender)

    run_kernel(build)
    assert got == [("early", 100), ("late", 200)]


@register
@attrs.frozen(slots=True)
class _Got(Event):
    kind: ClassVar[str] = "got"
    m: Any


def test_ties_are_chosen_by_the_strategy_and_recorded() -> None:
    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def listener(port: ActorPort) -> None:
            while True:
                port.emit(_Got(await port.receive()))

        kernel.spawn(nursery, "l", listener)
        for i in range(5):
            kernel.at(10, f"send {i}", lambda i=i: kernel.send("x", "l", i))

    orders = set()
    for seed in range(12):
        kernel, _ = run_kernel(build, seed=seed)
        orders.add(tuple(r.data["m"] for r in kernel.trace if r.kind == "got"))
    assert len(orders) > 1  # different seeds interleave differently
    fifo, _ = run_kernel(build, strategy="fifo")
    assert [r.data["m"] for r in fifo.trace if r.kind == "got"] == [0, 1, 2, 3, 4]


def test_a_schedule_replays_and_a_changed_one_diverges() -> None:
    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def listener(port: ActorPort) -> None:
            while True:
                message = await port.receive()
                port.emit(_Got(message))
                if message == 0:
                    port.send("l", "extra")  # the run's shape depends on the order

        kernel.spawn(nursery, "l", listener)
        for i in range(4):
            kernel.at(5, f"send {i}", lambda i=i: kernel.send("x", "l", i))

    first, _ = run_kernel(build, seed=3)
    schedule = first.chooser.schedule({})
    again, _ = run_kernel(build, seed=99, replay=schedule)
    assert again.trace.digest() == first.trace.digest()

    step, (sub, n, index) = 0, schedule.choices[0]
    tampered = (*schedule.choices[:step], (sub, n + 1, index), *schedule.choices[step + 1:])
    with pytest.raises(ScheduleDiverged, match="schedule diverged at step 0"):
        run_kernel(build, replay=type(schedule)(schedule.seed, schedule.strategy, {},
                                                schedule.subsystems, tampered))


def test_a_modelled_crash_kills_only_that_incarnation_and_its_timers() -> None:
    events: list[tuple[str, int, int]] = []

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def fragile(port: ActorPort) -> None:
            events.append(("start", port.incarnation, port.now_ms))
            port.set_timer(1000, f"from-incarnation-{port.incarnation}")
            while True:
                message = await port.receive()
                events.append((message, port.incarnation, port.now_ms))

        def restart(port: ActorPort, crash: Crash) -> None:
            kernel.at(kernel.now_ms + 300, "restart",
                      lambda: kernel.spawn(nursery, "f", fragile, on_crash=restart))

        kernel.spawn(nursery, "f", fragile, on_crash=restart)
        kernel.at(500, "crash", lambda: kernel.crash_parked("f"))

    kernel, _ = run_kernel(build)
    # Incarnation 1's timer (due at 1000) died with it; incarnation 2's fired at 800 + 1000.
    assert events == [("start", 1, 0), ("start", 2, 800), ("from-incarnation-2", 2, 1800)]
    crash = [r for r in kernel.trace if r.kind == "crash"]
    assert [(r.t_ms, r.data["incarnation"]) for r in crash] == [(500, 1)]
    # Steps: the crash, the restart and incarnation 2's timer; the dead one's timer is none.
    assert kernel.steps == 3


def test_a_timer_no_longer_wanted_when_due_is_dropped_unseen() -> None:
    got: list[tuple[str, int]] = []
    wanted = {"a": True, "b": True}

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def asks(port: ActorPort) -> None:
            port.set_timer(100, "a", lambda: wanted["a"])
            port.set_timer(200, "b", lambda: wanted["b"])
            wanted["b"] = False  # asked when due, not when set
            while True:
                got.append((await port.receive(), port.now_ms))

        kernel.spawn(nursery, "w", asks)

    kernel, _ = run_kernel(build)
    assert got == [("a", 100)]
    assert (kernel.steps, kernel.now_ms) == (1, 200)


def test_a_sleep_cut_short_leaves_a_wake_that_is_no_step() -> None:
    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def sleeper(port: ActorPort) -> None:
            await port.sleep(1000)

        kernel.spawn(nursery, "s", sleeper)
        kernel.at(500, "crash", lambda: kernel.crash_parked("s"))

    kernel, reason = run_kernel(build)
    # The crash is the only step; the wake due at 1000 finds no sleeper and does nothing.
    assert (kernel.steps, reason, kernel.now_ms) == (1, "quiescent", 1000)


def test_an_unexpected_actor_error_crashes_the_run() -> None:
    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        async def buggy(port: ActorPort) -> None:
            await port.sleep(10)
            raise ValueError("model bug")

        kernel.spawn(nursery, "b", buggy)

    with pytest.raises(ValueError, match="model bug"):
        run_kernel(build)


def test_cancelling_an_actor_scope_is_waited_for() -> None:
    log: list[tuple[str, int]] = []

    def build(kernel: Kernel, nursery: trio.Nursery) -> None:
        scope = trio.CancelScope()

        async def child(port: ActorPort) -> None:
            with scope:
                await port.sleep(10_000)
            log.append(("aborted" if scope.cancelled_caught else "finished", port.now_ms))

        kernel.spawn(nursery, "c", child)
        kernel.at(42, "abort", scope.cancel)

    run_kernel(build)
    assert log == [("aborted", 42)]
