"""wake-sends-budget (YLD-3, issue 24): a batch wake's sends counted at the gateway. The timeout
tie and the busy requester, the two ways 961f94d's outbox lost a wake's budget, come back with
the ``wake-token-reused`` mutant; the oracle finds both on a trace stripped of the outbox's own
records (its attempt and replay counts), so it reads only the gateway's and requester's."""

from __future__ import annotations

from typing import Any

import pytest

from actors.mutants import MUTANT_WAKE_TOKEN_REUSED
from sim import scenario
from sim.invariants.yields.wake_sends import wake_sends_budget
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
