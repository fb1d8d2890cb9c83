"""wake-sends-budget (YLD-3, issue 24): a batch wake's sends counted at the gateway. The timeout
tie and the busy requester, the two ways 961f94d's outbox lost a wake's budget, come back with
the ``wake-token-reused`` mutant; the oracle finds both on a trace stripped of the outbox's own
records (its attempt and replay counts), so it reads only the gateway's and requester's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.mutants import MUTANT_WAKE_TOKEN_REUSED
from sim import scenario
from sim.invariants.yields.wake_sends import (
    NEVER,
    _Answer,
    _KeySends,
    _match,
    _Send,
    wake_sends_budget,
)
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

TIE = "yield-wake-timeout-tie.toml"
BUSY = "yield-busy-requester-400s.toml"


def _run(name: str, **kwargs: Any) -> list[Record]:
    return world.run(scenario.load(SCENARIOS / name), **kwargs).trace.records


def _outside(records: list[Record]) -> list[Record]:
    return [r for r in records if not r.kind.startswith(("batch.", "delivery.", "run.cleanup"))]


@pytest.mark.parametrize("name", [TIE, BUSY])
def test_the_fixed_outbox_keeps_the_budget(name: str) -> None:
    assert wake_sends_budget(_run(name)) == []


def test_the_tie_resends_an_answered_key_with_the_old_tokens() -> None:
    found = wake_sends_budget(_outside(_run(TIE, mutants=[MUTANT_WAKE_TOKEN_REUSED])))
    assert any("retry-2 again at 190000 ms" in v.message for v in found), found


def test_the_busy_requester_loses_its_wake_with_the_old_tokens() -> None:
    found = wake_sends_budget(_outside(_run(BUSY, mutants=[MUTANT_WAKE_TOKEN_REUSED])))
    assert any("never sent again" in v.message for v in found), found


def test_the_tie_keeps_three_keys_and_closes_retries_exhausted() -> None:
    records = _run(TIE)
    sends = [r.data["key"] for r in records
             if r.kind == "gateway.send" and ":requester-settle:" in r.data["key"]]
    assert len(sends) == 3 and len(set(sends)) == 3
    assert [r.data["outcome"] for r in records if r.kind == "batch.closed"] == [
        "retries_exhausted"]


def test_the_busy_requester_takes_the_wake_after_its_turn() -> None:
    records = _run(BUSY)
    taken = [r for r in records if r.kind == "requester.accept"
             and ":requester-settle:" in r.data["key"]]
    assert len(taken) == 1 and taken[0].t_ms >= 405_000
    refusals = [r for r in records if r.kind == "requester.wake_refused"]
    assert len(refusals) >= 13  # every 30 s from 10 s to 400 s, none spent


def _match_by_scan(sends: list[_Send], answers: list[_Answer], before_seq: int) -> None:
    """``_match`` as first written: every send scanned for every answer."""
    for answer in answers:
        if answer.record.seq >= before_seq:
            break
        before = [s for s in sends if s.record.seq < answer.record.seq]
        if before and before[-1].answer is None and not any(s.answer is answer for s in sends):
            before[-1].answer = answer


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), max_size=30), st.booleans())
def test_match_gives_each_answer_as_the_scan_did(marks: list[tuple[bool, bool]],
                                                 stand_in: bool) -> None:
    """The bisecting, resuming ``_match`` (the sends' positions and the answers given kept as
    they grow, ``_KeySends``) against the scan, called as ``wake_sends_budget`` calls it: before
    each send (after the maybe-sent stand-in, when there is one, from the first answer again),
    then once at the end. Each position of a made-up trace holds a send, an answer, or both in
    turn."""
    records = [Record(seq, seq, "gateway", "gateway.send", {}) for seq in range(len(marks))]
    answers = [_Answer(r, r.t_ms, r.t_ms) for r, (_, answer) in zip(records, marks, strict=True)
               if answer]
    results = []
    for resuming in (True, False):
        key = _KeySends()
        sends = key.sends
        for r, (send, _) in zip(records, marks, strict=True):
            if send:
                if resuming:
                    _match(key, answers, r.seq)
                else:
                    _match_by_scan(sends, answers, r.seq)
                if stand_in and not sends:
                    key.add(_Send(Record(-1, 0, "gateway", "gateway.send", {})))
                    key.resume = 0
                key.add(_Send(r))
        if resuming:
            _match(key, answers, NEVER)
        else:
            _match_by_scan(sends, answers, NEVER)
        results.append([(s.record.seq, s.answer and s.answer.record.seq) for s in sends])
    assert results[0] == results[1]
