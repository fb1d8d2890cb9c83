"""The two message loops ``handoff bench`` compares: bare Trio and the simulator's kernel.

Both pass the same pattern of messages, a request and its reply, and both are counted per
message (a request/reply round trip is two messages), so their ratio is the kernel's cost per
message over Trio's. Trio's deterministic batch ordering is on in both, as in every simulated run.
Wall-clock reads are the point here and never enter a simulated run.
"""

from __future__ import annotations

import time
from typing import ClassVar

import attrs
import trio

from actors.events import Event, register
from sim.choices import Chooser
from sim.determinism import seed_trio_scheduler
from sim.kernel import ActorPort, Kernel, run_trio
from sim.world.clock import VirtualClock


def trio_messages_per_second(round_trips: int = 10_000) -> float:
    """Messages per second over two bare Trio memory channels: a client sends a request, a
    server replies; each send/receive pair is one message, so a round trip is two."""
    seed_trio_scheduler(0)

    async def main() -> None:
        requests_send, requests_recv = trio.open_memory_channel[int](0)
        replies_send, replies_recv = trio.open_memory_channel[int](0)

        async def server() -> None:
            async for request in requests_recv:
                await replies_send.send(request)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            for i in range(round_trips):
                await requests_send.send(i)
                await replies_recv.receive()
            nursery.cancel_scope.cancel()

    start = time.perf_counter()  # wall-clock ok: benchmark
    trio.run(main)
    return 2 * round_trips / (time.perf_counter() - start)  # wall-clock ok: benchmark


@register
@attrs.frozen(slots=True)
class _Echo(Event):
    kind: ClassVar[str] = "echo"
    n: int


@register
@attrs.frozen(slots=True)
class _Pong(Event):
    kind: ClassVar[str] = "pong"
    n: int


def kernel_messages_per_second(messages: int = 20_000) -> float:
    """Messages per second through the kernel: for each, the harness picks the next agenda entry
    (a recorded choice whenever two are due together), wakes the actor, which handles it and
    leaves a trace record. A requester pings two echo actors at once, so every other pick is a
    real choice; every message is one kernel step."""
    seed_trio_scheduler(0)
    clock = VirtualClock()
    kernel = Kernel(Chooser(0), clock=clock)
    rounds = messages // 4  # each round is four messages: two pings, two echoes

    async def echo(port: ActorPort) -> None:
        while True:
            message = await port.receive()
            port.emit(_Echo(message))
            port.send("pinger", message)

    async def pinger(port: ActorPort) -> None:
        for i in range(rounds):
            port.send("echo-a", i)
            port.send("echo-b", i)
            for _ in range(2):
                port.emit(_Pong(await port.receive()))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            kernel.spawn(nursery, "echo-a", echo)
            kernel.spawn(nursery, "echo-b", echo)
            kernel.spawn(nursery, "pinger", pinger)
            await kernel.run(until_ms=1, max_steps=messages + 10)
            kernel.closed = True
            nursery.cancel_scope.cancel()

    start = time.perf_counter()  # wall-clock ok: benchmark
    run_trio(main, clock)
    elapsed = time.perf_counter() - start  # wall-clock ok: benchmark
    if kernel.steps != 4 * rounds:  # the figure would not be per message
        raise AssertionError(f"{kernel.steps} kernel steps for {4 * rounds} messages")
    return kernel.steps / elapsed
