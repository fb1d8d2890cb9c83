"""A requester reset or delete kills its unended children with delivery suppressed (reference
§c17): the model does it, and `reset-kills-children` catches broken variants of it."""

from __future__ import annotations

from typing import Any

import pytest

from actors.child.steps import KILLED_ERROR
from actors.records.run_record import Change, DeliverySuppressed, RunRecord
from actors.states import DeliveryStatus
from actors.store.durable import RunStore
from sim import scenario
from sim.invariants.observations import killed_by_reset
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


def test_a_reset_kills_the_running_children_and_spares_the_ended_one() -> None:
    result = _run("reset-kills-running-children.toml")
    assert result.violations == ()
    runs = {r.child_id: r for r in result.runs}
    for child in ("slow", "reviewer"):
        assert runs[child].outcome_error == KILLED_ERROR
        assert runs[child].delivery_status == DeliveryStatus.NOT_REQUIRED
    assert runs["quick"].delivery_status == DeliveryStatus.DELIVERED
    killed = killed_by_reset(result.trace.records)
    assert set(killed) == {runs["slow"].run_id, runs["reviewer"].run_id}
    reset = next(r for r in result.trace.records if r.kind == "requester.lifecycle")
    accepted = [r for r in result.trace.records if r.kind == "requester.accept"]
    # The ended child is still delivered, after the reset, into the new conversation.
    assert [r.data["run_id"] for r in accepted] == [runs["quick"].run_id]
    assert accepted[0].seq > reset.seq


def test_a_delete_kills_a_running_member_of_a_yielded_batch() -> None:
    result = _run("yield-delete-kills-running-member.toml")
    assert result.violations == ()
    runs = {r.child_id: r for r in result.runs}
    assert runs["b"].outcome_error == KILLED_ERROR
    assert runs["b"].delivery_status == DeliveryStatus.NOT_REQUIRED
    assert runs["a"].outcome_error is None


def test_the_oracle_catches_a_reset_that_leaves_children_running() -> None:
    result = _run("mutant-reset-keeps-children.toml")
    assert "reset-kills-children" in _names(result)
    assert _run("mutant-reset-keeps-children.toml", mutants=[]).violations == ()


def test_the_oracle_catches_a_kill_whose_delivery_was_not_suppressed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    apply = RunStore.apply

    def forgetful(self: RunStore, run_id: str, change: Change,
                  known: tuple[RunRecord, RunRecord] | None = None) -> None:
        if not isinstance(change, DeliverySuppressed):
            apply(self, run_id, change, known)

    monkeypatch.setattr(RunStore, "apply", forgetful)
    result = _run("reset-kills-running-children.toml")
    messages = [v.message for v in result.violations if v.invariant == "reset-kills-children"]
    assert any("handed to the gateway" in m for m in messages), messages


def test_a_deleted_nested_session_kills_its_running_children_only() -> None:
    """The world deletes c1's session once its run is over (DEL-4): g2, still running, is
    killed with delivery suppressed (reference §c17); g1, ended and delivered before, is not."""
    result = _run("nested-delete-kills-running-children.toml")
    assert result.violations == ()
    runs = {r.child_id: r for r in result.runs}
    assert runs["g2"].outcome_error == KILLED_ERROR
    assert runs["g2"].delivery_status == DeliveryStatus.NOT_REQUIRED
    assert runs["g1"].outcome_error is None
    assert runs["g1"].delivery_status == DeliveryStatus.DELIVERED
    deleted = next(r for r in result.trace.records if r.kind == "world.delete-session")
    recorded = next(r for r in result.trace.records if r.kind == "requester.lifecycle")
    # The session's own record of the deletion, in the same instant, dates the kill.
    assert recorded.actor == "requester:agent:main:subagent:c1"
    assert (recorded.t_ms, recorded.data["what"]) == (deleted.t_ms, "delete")
    assert killed_by_reset(result.trace.records) == {runs["g2"].run_id: recorded}


def test_the_oracle_dates_the_kill_by_the_worlds_deletion_when_the_session_is_silent() -> None:
    result = _run("mutant-nested-delete-keeps-children.toml")
    assert _names(result) == {"reset-kills-children"}
    deleted = next(r for r in result.trace.records if r.kind == "world.delete-session")
    assert not any(r.kind == "requester.lifecycle" for r in result.trace.records)
    runs = {r.child_id: r for r in result.runs}
    assert killed_by_reset(result.trace.records) == {runs["g2"].run_id: deleted}
    assert _run("mutant-nested-delete-keeps-children.toml", mutants=[]).violations == ()
