"""Stop 46 (issue 38): two oracle false positives of the default world on 8aed921, each kept
clean by its regression scenario (scenarios/regressions/), and each oracle still naming the
scenario's trace forged into the broken variant next to it (the fact its fix reads, changed)."""

from __future__ import annotations

from typing import Any

from sim.trace import Record
from tests.invariants.regression_traces import check as _check
from tests.invariants.regression_traces import edit as _edit
from tests.invariants.regression_traces import trace as _trace

WAKE = "announce:requester-settle:main:agent:main:main:run-10,run-8:yield-1"
BATCH = "batch:turn:agent:main:main:1:t4"


def _one(trace: list[Record], record_kind: str, **data: Any) -> Record:
    [found] = [r for r in trace if r.kind == record_kind
               and all(r.data.get(k) == v for k, v in data.items())]
    return found


def _taken_twice(trace: list[Record]) -> tuple[Record, Record, list[Record]]:
    """The wake's first send's two answers at 10:37 (the take and the duplicated copy's
    answer) and the two acknowledgement faults noted after both."""
    take = _one(trace, "requester.accept", key=WAKE)
    [again] = [r for r in trace if r.kind == "requester.duplicate" and r.t_ms == take.t_ms
               and r.data["key"] == WAKE]
    held = [r for r in trace if r.kind == "fault" and r.t_ms == take.t_ms
            and r.data.get("run_id") == BATCH and r.data["kind"] in ("send-ambiguous", "ack-slow")]
    return take, again, held


def test_wake_sends_budget_reads_two_faults_after_two_answers_as_holding_both() -> None:
    # The session took the wake and answered the network's copy as a duplicate; the gateway
    # lost one acknowledgement and held the other 150 s (seed 49389): the process never had
    # an answer in time, so the replay after the 120 s timeout was owed.
    trace = _trace("wake-two-acks-both-held-seed-49389")
    assert _check("wake-sends-budget", trace) == []
    take, again, held = _taken_twice(trace)
    assert take.seq < again.seq < held[0].seq < held[1].seq
    assert [f.data["kind"] for f in held] == ["send-ambiguous", "ack-slow"]
    # Without the faults both acknowledgements went at once: the replay had no reason.
    bare = [r for r in trace if r not in held]
    assert any(f"sent {WAKE} again" in m for m in _check("wake-sends-budget", bare))
    # One fault holds one acknowledgement: had both been 60 s holds, the take was had in time
    # whichever of them was its, and the replay had no reason.
    short = [_edit(r, kind="ack-slow", delay_ms=60_000, lost=None) if r in held else r
             for r in trace]
    assert any(f"sent {WAKE} again" in m for m in _check("wake-sends-budget", short))
    # One fault after the two answers may be either's: the take may have been the held one.
    one = [r for r in trace if r is not held[1]]
    assert _check("wake-sends-budget", one) == []


def test_blocked_warning_leaves_a_public_sibling_to_its_own_refusal() -> None:
    # run-3 (public) and run-2 (private) were frozen in one batch; run-3 was refused for good,
    # then redriven on its own while the wake waited on the busy session; the wake's refusal
    # for good closed the batch with run-2 only (seed 94596). run-3's warning keeps its own
    # refusal: ordinary siblings keep their own completion delivery (PRV-5, seed 002).
    trace = _trace("public-sibling-not-blocked-by-wake-seed-94596")
    assert _check("blocked-warning", trace) == []
    warning = _one(trace, "delivery.warning", run_id="run-3")
    own = "Forbidden: bot is not a member of the supergroup chat"
    assert warning.data["error"] == own
    wake_error = "Session transcript keyed user is outside the current turn: announce:v1"
    # A warning carrying the private batch's refusal is not run-3's: still named.
    taken = [_edit(r, error=wake_error) if r is warning else r for r in trace]
    assert any(f"says {wake_error!r}" in m for m in _check("blocked-warning", taken))
    # Had run-2 been an ordinary child too, the batch owned both and its refusal was run-3's
    # (seed 19164): the warning with run-3's older refusal is named.
    ask = _one(trace, "world.spawn", child="c4")
    assert ask.data["completion_target"] == "parent"
    public = [_edit(r, completion_target=None) if r is ask else r for r in trace]
    assert any(f"says {own!r}" in m for m in _check("blocked-warning", public))

