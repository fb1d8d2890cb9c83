"""Stop 44's waves past seed 20,000 (scenarios/regressions/README.md, "Stop 44: waves and released
wakes"): each oracle fix's default-world seed passes, and its broken variant, forged from that
trace, is still named."""

from __future__ import annotations

import attrs

from sim import invariants, scenario
from sim.cli import root as cli
from sim.trace import Record
from sim.world import core as world
from tests.invariants.regression_traces import trace as regression_trace


def _trace(seed: int) -> list[Record]:
    return list(world.run(scenario.load(cli.default_world_path()), seed=seed).trace)


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def _take_moved(trace: list[Record], run_id: str, key_end: str, t_ms: int) -> list[Record]:
    """The trace with the requester's take of ``run_id``'s key ending ``key_end`` moved to
    ``t_ms`` (kept in time order)."""
    take = next(r for r in trace if r.kind == "requester.accept" and r.data["run_id"] == run_id
                and r.data["key"].endswith(key_end))
    moved = [attrs.evolve(r, t_ms=t_ms) if r is take else r for r in trace]
    return sorted(moved, key=lambda r: (r.t_ms, r.seq))


def test_a_lone_wave_redriven_before_its_descendant_settled_is_consumed() -> None:
    # Seed 28862: run-2's own send is refused for good; an operator's redrive 47 s later is
    # taken (6:51) before its descendant run-3's slowed answer settles it (8:19): the wave of
    # run-2 alone is due already delivered, and consumed (reference §c9).
    trace = _trace(28862)
    assert _check("wave-woken", trace) == []
    # Forged: the redrive's take a week on, after the wave was due: the wave was owed a wake.
    late = _take_moved(trace, "run-2", ":run-2:g2", trace[-2].t_ms - 1)
    assert any("the wave run-2 " in m for m in _check("wave-woken", late))


def test_a_lone_wave_held_by_a_queued_sibling_is_judged_when_the_sibling_settles() -> None:
    # Seed 35745, shrunk (the default world's seed moved when issue 34's draws were re-aimed):
    # run-2 waits behind its session's earlier run, spanning from its spawn while it waits, so
    # it holds run-3's wave until it settles (8 s); run-3's redrive was taken at 6.999 s, so the
    # wave of run-3 alone is consumed.
    trace = regression_trace("lone-wave-held-by-queued-sibling-seed-35745")
    assert _check("wave-woken", trace) == []
    # Forged: the redrive taken after run-2 settled: the wave of run-3 was then owed a wake.
    late = _take_moved(trace, "run-3", ":run-3:g2", 9_000)
    assert any("the wave run-3 " in m for m in _check("wave-woken", late))


def test_a_wake_copy_held_past_the_answer_timeout_releases_nothing() -> None:
    # Seed 34975: the wake's last send is held 123 s on its way; the registry gives the try up
    # at the 120 s answer timeout and closes the batch as ambiguous before the copy is taken.
    trace = _trace(34975)
    assert _check("wake-releases-suspended", trace) == []
    # Forged: the same hold under the answer timeout (the take then is the try's own answer,
    # which the registry hears): the members left suspended are named again.
    held = next(r for r in trace if r.kind == "fault" and r.data.get("kind") == "delay"
                and int(r.data.get("delay_ms") or 0) >= 120_000)
    short = [attrs.evolve(r, data={**r.data, "delay_ms": 119_000}) if r is held else r
             for r in trace]
    assert any("carried run-2's result" in m for m in _check("wake-releases-suspended", short))


def test_a_lone_wave_whose_first_answer_no_live_process_heard_is_judged_on_its_retake() -> None:
    # Seed 77937 (and 44506, 51564, 71589): run-2's first send breaks after part of it went out,
    # but the delivery process dies in the send's instant, before it records the answer; the
    # producer's correction then reopens it (a second generation), which is taken, and the
    # wave of run-2 alone is judged then, already delivered: consumed (reference §c9).
    for seed in (44506, 51564, 71589, 77937):
        assert _check("wave-woken", _trace(seed)) == [], seed
    trace = _trace(77937)
    send = next(r for r in trace if r.kind == "gateway.send" and r.data.get("run_id") == "run-2")
    crash = next(r for r in trace if r.kind == "crash" and r.t_ms == send.t_ms)
    # Forged: the process died 1 ms before the send (so a live process heard its answer):
    # the first generation settled then, undelivered, and the wave was owed a wake.
    early = sorted((attrs.evolve(r, t_ms=r.t_ms - 1) if r is crash else r for r in trace),
                   key=lambda r: (r.t_ms, r.seq))
    assert any("the wave run-2 " in m for m in _check("wave-woken", early))
