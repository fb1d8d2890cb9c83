"""A steer (reference §c18): the running run is aborted without an announce and a replacement run
in the same child session answers once, under its own run id; a steer of an ended run changes
nothing. The model does it, and `steer-replaces` (with `kill-suppresses`) catches broken
variants of it."""

from __future__ import annotations

from typing import Any

import attrs

from actors.child.steps import KILLED_ERROR
from actors.states import DeliveryStatus
from sim import scenario
from sim.invariants.nesting.kills import steer_replaces
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(**kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "steer.toml"), **kwargs)


def test_a_steer_replaces_the_running_run_and_spares_the_ended_one() -> None:
    result = _run()
    assert result.violations == ()
    writer = [r for r in result.runs if r.child_id == "writer"]
    assert len(writer) == 2
    steered, replacement = writer
    assert steered.child_session_key == replacement.child_session_key
    assert steered.run_id != replacement.run_id
    assert steered.outcome_error == KILLED_ERROR
    assert steered.delivery_status == DeliveryStatus.NOT_REQUIRED
    assert replacement.delivery_status == DeliveryStatus.DELIVERED
    records = result.trace.records
    accepted = [r.data["run_id"] for r in records if r.kind == "requester.accept"]
    assert accepted.count(replacement.run_id) == 1 and steered.run_id not in accepted
    answers = [(r.data["child"], r.data["killed"]) for r in records if r.kind == "steer"]
    assert answers == [("done", False), ("writer", True)]
    assert len([r for r in result.runs if r.child_id == "done"]) == 1


def test_the_oracle_catches_a_steer_without_replacement() -> None:
    result = _run(mutants=["steer-no-replacement"])
    messages = [v.message for v in result.violations if v.invariant == "steer-replaces"]
    assert any("no replacement run of writer started" in m for m in messages), messages


def test_the_oracle_catches_a_replacement_in_another_session() -> None:
    result = _run()
    replacement = [r for r in result.runs if r.child_id == "writer"][1].run_id

    def moved(r: Record) -> Record:
        if r.kind == "spawn" and r.data["run_id"] == replacement:
            return attrs.evolve(r, data={**r.data,
                                         "child_session_key": "agent:main:subagent:other"})
        return r

    messages = [v.message for v in steer_replaces([moved(r) for r in result.trace.records])]
    assert any("runs in agent:main:subagent:other" in m for m in messages), messages
