"""A kill (reference §c18): a running run and its unended descendants are stopped silently
(nothing announced; their rows keep their delivery pending, as OpenClaw 2026.9.6's kill path
does, issue 34); a kill of an ended run changes nothing. The model does it, and
`kill-suppresses` catches broken variants of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from actors.child.steps import KILLED_ERROR
from actors.states import DeliveryStatus
from sim import scenario
from sim.invariants.lineage import killed_silently, kills
from sim.invariants.nesting.kills import kill_suppresses
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(**kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "aborted-child.toml"), **kwargs)


def _edited(records: Sequence[Record], keep: Callable[[Record], Record | None]) -> list[Record]:
    """The trace with each record replaced by ``keep(record)`` (None drops it)."""
    return [k for r in records for k in [keep(r)] if k is not None]


def _messages(records: Sequence[Record]) -> list[str]:
    return [v.message for v in kill_suppresses(records)]


def test_a_kill_stops_the_running_tree_silently_and_spares_the_ended_run() -> None:
    result = _run()
    assert result.violations == ()
    runs = {r.child_id: r for r in result.runs}
    for child in ("long-job", "helper"):
        assert runs[child].outcome_error == KILLED_ERROR
        assert runs[child].delivery_status == DeliveryStatus.PENDING
    assert runs["quick"].delivery_status == DeliveryStatus.DELIVERED
    records = result.trace.records
    answers = [(r.data["child"], r.data["killed"]) for r in records if r.kind == "abort"]
    assert answers == [("quick", False), ("long-job", True)]
    # Nothing of the killed runs reached anyone; quick's completion, in flight at the kill,
    # was taken once, after it.
    accepted = [r for r in records if r.kind == "requester.accept"]
    assert [r.data["run_id"] for r in accepted] == [runs["quick"].run_id]
    kill_of_quick = next(r for r in records if r.kind == "abort")
    assert accepted[0].seq > kill_of_quick.seq
    found = kills(records)
    assert [k.stopped for k in found] == [(), (runs["long-job"].run_id, runs["helper"].run_id)]
    assert found[0].ended
    assert set(killed_silently(records)) == {runs["long-job"].run_id, runs["helper"].run_id}


def test_the_oracle_catches_a_kill_that_announces_the_killed_runs() -> None:
    result = _run(mutants=["kill-announced"])
    messages = [v.message for v in result.violations if v.invariant == "kill-suppresses"]
    assert any("handed to the gateway" in m for m in messages), messages
    assert any("not pending" in m for m in messages), messages


def test_the_oracle_catches_a_kill_that_records_the_killed_runs_not_required() -> None:
    # The built-in mutant: the older label (reference §c18) where the released kill path
    # leaves the status pending; and the same forged into the final rows of a correct run.
    result = _run(mutants=["kill-records-not-required"])
    messages = [v.message for v in result.violations if v.invariant == "kill-suppresses"]
    assert sum("records its delivery not_required, not pending" in m
               for m in messages) == 2, messages
    good = _run()
    killed = {r.run_id for r in good.runs if r.child_id in ("long-job", "helper")}

    def relabelled(r: Record) -> Record:
        if r.kind != "world.rows":
            return r
        rows = [{**row, "delivery_status": "not_required"} if row["run_id"] in killed else row
                for row in r.data["rows"]]
        return attrs.evolve(r, data={**r.data, "rows": rows})

    forged = _messages(_edited(good.trace.records, relabelled))
    assert sum("not_required, not pending" in m for m in forged) == 2, forged


def test_the_oracle_catches_a_wrong_answer() -> None:
    records = _run().trace.records
    lied = _edited(records, lambda r: attrs.evolve(r, data={**r.data, "killed": True})
                   if r.kind == "abort" and r.data["child"] == "quick" else r)
    assert any("answered killed=True, but its latest run had ended" in m
               for m in _messages(lied))


def test_the_oracle_catches_a_kill_that_suppresses_an_ended_run() -> None:
    result = _run()
    quick = next(r.run_id for r in result.runs if r.child_id == "quick")

    def suppressed(r: Record) -> Record:
        if r.kind != "world.rows":
            return r
        rows = [{**row, "delivery_status": "not_required"} if row["run_id"] == quick else row
                for row in r.data["rows"]]
        return attrs.evolve(r, data={**r.data, "rows": rows})

    assert any("which must change nothing" in m
               for m in _messages(_edited(result.trace.records, suppressed)))


def test_the_oracle_catches_a_descendant_left_running_or_ended_late() -> None:
    result = _run()
    helper = next(r.run_id for r in result.runs if r.child_id == "helper")
    records = result.trace.records
    never = _edited(records, lambda r: None
                    if r.kind == "child.end" and r.data["run_id"] == helper else r)
    assert any("never ended" in m for m in _messages(never))
    late = _edited(records, lambda r: attrs.evolve(r, t_ms=r.t_ms + 1)
                   if r.kind == "child.end" and r.data["run_id"] == helper else r)
    assert any("instead of killed then" in m for m in _messages(late))
