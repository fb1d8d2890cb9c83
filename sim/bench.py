"""``handoff bench``: the simulator measuring itself (SPEC §5).

Every figure is a ratio or a rate measured in the same process run, because these machines are
noisy: the scheduled hand-off against a bare Trio request/reply round trip, seeds per second of the
default world on one core, how one run's time and memory grow with its children, and the
160,000-character formatter's throughput and linearity. Wall-clock reads are the point here and
never enter a simulated run.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any, ClassVar

import attrs
import trio
import trio.testing

from actors.announce import DEFAULT_CAP, ChildResult, format_results
from actors.events import Event, register
from sim import scenario as scenario_mod
from sim import world
from sim.choices import Chooser
from sim.determinism import seed_trio_scheduler
from sim.kernel import ActorPort, Kernel, run_trio

# A fixed, escape-heavy pattern: every tenth character needs escaping, so the measurement
# includes the escaped-length arithmetic, not only plain copying.
_PATTERN = "result <b>&</b> line of child output, "


def make_children(count: int, text_chars: int) -> list[ChildResult]:
    """Deterministic children, handed over in reverse delivery order so sorting does work."""
    base = (_PATTERN * (text_chars // len(_PATTERN) + 1))[:text_chars]
    return [
        ChildResult(
            session_key=f"agent:main:subagent:{i:06d}",
            session_id=f"sid-{i:06d}",
            task=f"task {i}",
            status="ok" if i % 7 else "error",
            error=None if i % 7 else "tool crashed",
            # Distinct texts (a unique prefix), so no two children share one string object.
            text=f"{i}:" + base,
            created_at=float(count - i),
            ended_at=None if i % 5 == 0 else float(count - i + 1),
        )
        for i in range(count)
    ]


def _input_chars(children: Sequence[ChildResult]) -> int:
    return sum(len(c.text or "") for c in children)


def _best_seconds(children: Sequence[ChildResult], cap: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()  # wall-clock ok: benchmark
        result = format_results(children, cap=cap)
        elapsed = time.perf_counter() - start  # wall-clock ok: benchmark
        if result.length > cap:  # a broken cap would make the figure meaningless
            raise AssertionError(f"payload {result.length} exceeds cap {cap}")
        best = min(best, elapsed)
    return best


def formatter_chars_per_second(
    children: int = 1_000, text_chars: int = 20_000, cap: int = DEFAULT_CAP, repeats: int = 3
) -> float:
    """Input characters (children's texts) formatted per second, best of ``repeats``."""
    batch = make_children(children, text_chars)
    return _input_chars(batch) / _best_seconds(batch, cap, repeats)


def formatter_linearity(
    sizes: Sequence[int] = (1_000, 2_000, 4_000, 8_000),
    text_chars: int = 4_000,
    cap: int = DEFAULT_CAP,
    repeats: int = 3,
) -> dict[str, object]:
    """Time per input character at each size, and its ratio to the smallest size.

    Linear cost keeps every ratio near 1; quadratic cost would double it with each doubling."""
    rows: list[dict[str, float | int]] = []
    for size in sizes:
        batch = make_children(size, text_chars)
        seconds = _best_seconds(batch, cap, repeats)
        chars = _input_chars(batch)
        rows.append(
            {
                "children": size,
                "input_chars": chars,
                "seconds": seconds,
                "ns_per_char": seconds / chars * 1e9,
            }
        )
    first = rows[0]["ns_per_char"]
    for row in rows:
        row["ratio"] = row["ns_per_char"] / first
    return {"text_chars": text_chars, "rows": rows, "max_ratio": max(r["ratio"] for r in rows)}


# -- the scheduled hand-off against a bare Trio round trip -------------------------------------


def trio_round_trips_per_second(n: int = 20_000) -> float:
    """Request/reply pairs over two memory channels, with nothing else running (and Trio's
    deterministic batch ordering on, as in every simulated run)."""
    seed_trio_scheduler(0)

    async def main() -> None:
        requests_send, requests_recv = trio.open_memory_channel[int](0)
        replies_send, replies_recv = trio.open_memory_channel[int](0)

        async def server() -> None:
            async for request in requests_recv:
                await replies_send.send(request)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(server)
            for i in range(n):
                await requests_send.send(i)
                await replies_recv.receive()
            nursery.cancel_scope.cancel()

    start = time.perf_counter()  # wall-clock ok: benchmark
    trio.run(main)
    return n / (time.perf_counter() - start)  # wall-clock ok: benchmark


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


def scheduled_handoffs_per_second(n: int = 20_000) -> float:
    """Hand-offs through the kernel: the harness picks the next agenda entry (a recorded choice
    whenever two are due together), wakes the actor, the actor handles it and leaves a trace
    record. A requester pings two echo actors at once, so every other pick is a real choice."""
    seed_trio_scheduler(0)
    clock = trio.testing.MockClock(rate=0)
    kernel = Kernel(Chooser(0), clock=clock)
    rounds = n // 4  # each round is four hand-offs: two pings, two echoes

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
            await kernel.run(until_ms=1, max_steps=n + 10)
            kernel.closed = True
            nursery.cancel_scope.cancel()

    start = time.perf_counter()  # wall-clock ok: benchmark
    run_trio(main, clock)
    elapsed = time.perf_counter() - start  # wall-clock ok: benchmark
    assert kernel.steps == 4 * rounds, kernel.steps
    return kernel.steps / elapsed


# -- exploration and scale ----------------------------------------------------------------------


def default_world() -> scenario_mod.Scenario:
    return scenario_mod.load(str(resources.files("sim").joinpath("default_world.toml")))


def seeds_per_second(seeds: int = 200) -> float:
    """The default world (one requester, eight children, all fault kinds on), invariants
    included, in this one process."""
    all_faults = default_world()
    start = time.perf_counter()  # wall-clock ok: benchmark
    for seed in range(1, seeds + 1):
        world.run(all_faults, seed=seed)
    return seeds / (time.perf_counter() - start)  # wall-clock ok: benchmark


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _scale_run(children: int, queue: Any) -> None:
    text = default_world_text().replace("children = 8", f"children = {children}")
    loaded = scenario_mod.loads(text, f"<default world with {children} children>")
    before = _rss_mib()
    start = time.perf_counter()  # wall-clock ok: benchmark
    result = world.run(loaded, seed=1)
    seconds = time.perf_counter() - start  # wall-clock ok: benchmark
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put({"children": children, "seconds": seconds, "peak_mib": max(0.0, peak - before),
               "records": len(result.trace), "violations": len(result.violations)})


def default_world_text() -> str:
    return resources.files("sim").joinpath("default_world.toml").read_text(encoding="utf-8")


def scale(sizes: Sequence[int] = (1_000, 2_000, 4_000, 8_000)) -> list[dict[str, Any]]:
    """One run per size, each in a fresh forked process so its peak memory is its own.

    The children of the default world are flat: nested requesters are not modelled yet, so the
    SPEC's nesting depth of 3 is not part of this figure."""
    context = multiprocessing.get_context("fork")
    rows = []
    for size in sizes:
        queue = context.Queue()
        process = context.Process(target=_scale_run, args=(size, queue))
        process.start()
        rows.append(queue.get())
        process.join()
    for row, previous in zip(rows[1:], rows, strict=False):
        row["time_ratio"] = row["seconds"] / previous["seconds"]
    return rows


def bench(quick: bool = False) -> dict[str, Any]:
    """Every figure of ``handoff bench`` (``quick``: smaller sizes, for a first look)."""
    n = 4_000 if quick else 20_000
    round_trips = trio_round_trips_per_second(n)
    handoffs = scheduled_handoffs_per_second(n)
    per_core = seeds_per_second(40 if quick else 200)
    return {
        "overhead_ratio": round_trips / handoffs,
        "trio_round_trips_per_second": round_trips,
        "scheduled_handoffs_per_second": handoffs,
        "seeds_per_second_per_core": per_core,
        "scale": scale((250, 500, 1_000) if quick else (1_000, 2_000, 4_000, 8_000)),
        "formatter_chars_per_second": formatter_chars_per_second(
            children=200 if quick else 1_000),
        "formatter_linearity": formatter_linearity(
            sizes=(250, 500, 1_000) if quick else (1_000, 2_000, 4_000, 8_000)),
    }
