"""Issue 36's last two boundary draws, as scenarios land on them: an attempt one ms under, at and
one ms over the 30-minute expiry (a restart of the delivery process at 1,810 s,
``expiry-ends-attempts``, ``retry-timing``), and two receipts of one reply with an equal end
time (a held first generation and a redrive, ``newest-receipt-owns``). Each oracle passes the
model's run and catches a forged variant one ms, or one rule, off."""

from __future__ import annotations

from typing import Any

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

DEADLINE_MS = 1_810_000  # c1's: it ended at 10 s


def _run(name: str, **kwargs: Any) -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / name), **kwargs).trace.records)


def _check(records: list[Record], name: str) -> list[str]:
    return [v.message for v in invariants.check(records, [name])]


def _run_of(records: list[Record], child: str) -> str:
    return next(r.data["run_id"] for r in records if r.kind == "spawn"
                and r.data["child"] == child)


def test_the_restart_lands_one_ms_under_at_and_over_the_expiry() -> None:
    records = _run("expiry-restart-one-ms-around.toml")
    assert invariants.check(records) == []
    sends = {_run_of(records, c): [r.t_ms for r in records if r.kind == "gateway.send"
                                   and r.data["run_id"] == _run_of(records, c)]
             for c in ("c1", "c2", "c3")}
    # c3 ended at 10.001 s: its attempt at 1,810 s is one ms inside its window and goes out.
    assert sends[_run_of(records, "c3")][-1] == DEADLINE_MS
    # c1 (at its deadline) and c2 (one ms past it) send nothing after the restart.
    assert max(sends[_run_of(records, "c1")]) < DEADLINE_MS - 60_000
    assert max(sends[_run_of(records, "c2")]) < DEADLINE_MS - 60_000


def test_an_attempt_at_or_one_ms_past_the_expiry_is_caught_one_under_is_not() -> None:
    """expiry-ends-attempts: c3's send at 1,810 s is one ms under its expiry (allowed); the
    same send moved to c1 (its deadline's instant) or c2 (one ms past its deadline) is caught."""
    records = _run("expiry-restart-one-ms-around.toml")
    c3 = _run_of(records, "c3")
    last = max((r for r in records if r.kind == "gateway.send" and r.data["run_id"] == c3),
               key=lambda r: r.seq)
    assert last.t_ms == DEADLINE_MS and _check(records, "expiry-ends-attempts") == []
    for child, past in (("c1", "at or after its expiry at 1810000 ms"),
                        ("c2", "at or after its expiry at 1809999 ms")):
        run_id = _run_of(records, child)
        key = next(r.data["key"] for r in records if r.kind == "gateway.send"
                   and r.data["run_id"] == run_id)
        forged = [attrs.evolve(r, data={**r.data, "run_id": run_id, "key": key})
                  if r is last else r for r in records]
        assert any(past in m for m in _check(forged, "expiry-ends-attempts")), child


def test_a_give_up_one_ms_before_the_expiry_is_caught() -> None:
    found = invariants.check(_run("expiry-restart-one-ms-around.toml",
                                  mutants=["expiry-one-ms-early"]))
    assert "retry-timing" in {v.invariant for v in found}
    assert any("before its expiry at 1810001 ms" in v.message for v in found)


def test_equal_end_time_keeps_the_first_receipt() -> None:
    records = _run("equal-end-receipts-keep-first.toml")
    assert _check(records, "newest-receipt-owns") == []
    ties = [r for r in records if r.kind == "requester.duplicate"
            and r.data["why"] == "equal-end"]
    assert len(ties) == 2
    # The forged variant: the second receipt of the tie accepted, replacing the first.
    tie = ties[0]
    accepted = next(r for r in records if r.kind == "requester.accept"
                    and r.data["run_id"] == tie.data["run_id"])
    forged = [attrs.evolve(r, kind="requester.accept", data={
        **accepted.data, "key": tie.data["key"],
        "replaces": {"run_id": tie.data["run_id"], "key": accepted.data["key"],
                     "ended_at": accepted.data["ended_at"]}}) if r is tie else r
              for r in records]
    assert any("an equal end time keeps the first accepted" in m
               for m in _check(forged, "newest-receipt-owns"))


def test_the_equal_end_mutant_is_caught() -> None:
    found = invariants.check(_run("equal-end-receipts-keep-first.toml",
                                  mutants=["equal-end-replaces"]))
    assert {v.invariant for v in found} == {"newest-receipt-owns", "at-most-once"}
