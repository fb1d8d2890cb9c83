"""Stop 44's waves past seed 20,000 (scenarios/regressions/README.md, "Stop 44: waves and released
wakes"): each oracle fix's default-world seed passes, and its broken variant, forged from that
trace, is still named."""

from __future__ import annotations

import attrs

from sim import invariants, scenario
from sim.cli import root as cli
from sim.trace import Record
from sim.world import core as world


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
    # Seed 35745: run-3 waits behind its session's earlier run, spanning from its spawn (16 s)
    # while it waits, so it holds run-4's wave until it settles (480 s). run-4's own send was
    # refused for good at 69 s; the saved run once took its operator's redrive at 131 s and
    # the wave was consumed. run-4 failed (its child errored), and since issue 34 a failed run
    # is not redriven (OpenClaw 2026.9.6): the redrive is refused and the wave is woken once
    # run-3 settles. The second generation's take is forged here (send and take at one
    # instant), standing for a suspended run's redrive.
    trace = _trace(35745)
    assert _check("wave-woken", trace) == []
    wave = "announce:requester-settle:main:agent:main:main:run-4"
    unwoken = [r for r in trace if not (r.kind in ("gateway.send", "gateway.inject",
                                                   "requester.accept", "requester.wake_refused")
                                        and str(r.data.get("key", "")).startswith(wave))]
    assert any("the wave run-4 " in m for m in _check("wave-woken", unwoken))
    first = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-4")
    accept = next(r for r in trace if r.kind == "requester.accept"
                  and r.data["run_id"] == "run-3")
    settled = accept.t_ms  # run-3's own take: the sibling settles
    g2 = first.data["key"] + ":g2"

    def taken(t_ms: int) -> list[Record]:
        send = attrs.evolve(first, t_ms=t_ms, data={**first.data, "key": g2})
        take = attrs.evolve(accept, t_ms=t_ms, data={**accept.data, "run_id": "run-4",
                                                     "key": g2, "ended_at": first.t_ms})
        out = sorted([*unwoken, send], key=lambda r: (r.t_ms, r.seq))
        at = out.index(send) + 1
        return [*out[:at], take, *out[at:]]

    # Taken by the instant run-3 settled (long after run-4's own settle): the wave is due
    # already delivered, and consumed without a wake.
    assert _check("wave-woken", taken(settled)) == []
    # Taken a millisecond after: the wave was then owed a wake.
    assert any("the wave run-4 " in m for m in _check("wave-woken", taken(settled + 1)))


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
