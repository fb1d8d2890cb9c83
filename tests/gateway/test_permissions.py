"""DEL-17: session control is checked against the current caller (actors/permissions.py), and the
control-permission oracle catches a model that lets a report borrow its spawner's permission."""

from __future__ import annotations

import attrs
import pytest

from actors.mutants import MUTANT_SPAWNER_PERMISSION
from actors.permissions import Caller, refusal
from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

ALICE = Caller("alice")
SPAWNERS = {"c1": ALICE}


@pytest.mark.parametrize(("caller", "allowed"), [
    (ALICE, True),
    (Caller("mallory"), False),
    (Caller(None, "c1"), False),  # c1's report: Alice spawned c1, yet the report holds nothing
    (Caller(None, "zz"), False),
])
def test_only_an_owner_in_person_may_control(caller: Caller, allowed: bool) -> None:
    for action in ("spawn", "abort", "history", "status", "cleanup", "archive-read"):
        reason = refusal(caller, action, ("alice",), SPAWNERS)
        assert (reason is None) == allowed
        if reason is not None:
            assert reason.startswith("forbidden: ") and action in reason


def test_the_mutant_lends_the_spawners_permission() -> None:
    assert refusal(Caller(None, "c1"), "abort", ("alice",), SPAWNERS,
                   (MUTANT_SPAWNER_PERMISSION,)) is None


def test_callers_read_as_written() -> None:
    assert Caller.parse("report:c1") == Caller(None, "c1")
    assert str(Caller.parse("report:c1")) == "report:c1"
    assert Caller.parse("alice") == ALICE and str(ALICE) == "alice"


def _permissions_run(mutants: tuple[str, ...] = ()) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "permissions.toml"), mutants=list(mutants))


def test_refusals_are_recorded_and_nothing_is_done() -> None:
    run = _permissions_run()
    refused = [r for r in run.trace.records if r.kind == "requester.refused"]
    got = [(r.data["action"], r.data["child"], r.data["caller"]) for r in refused]
    # The spawn and the abort are asked at the same instant: either may be refused first.
    assert sorted(got[:2]) == [("abort", "c2", "report:c1"), ("spawn", "c3", "report:c1")]
    assert got[2:] == [("history", "c1", "mallory")]
    assert not [r for r in run.trace.records if r.kind == "spawn" and r.data["child"] == "c3"]
    assert not [r for r in run.trace.records if r.kind == "child.abort"]
    assert not invariants.check(run.trace.records, ["control-permission"])


def test_the_oracle_catches_a_report_borrowing_permission() -> None:
    found = invariants.check(_permissions_run((MUTANT_SPAWNER_PERMISSION,)).trace.records,
                             ["control-permission"])
    assert any("report:c1 holds no permission" in v.message for v in found)


def test_the_oracle_catches_a_refusal_that_acts_anyway() -> None:
    """A broken session that records the refusal and performs the abort all the same."""
    records = list(_permissions_run().trace.records)
    at = next(i for i, r in enumerate(records)
              if r.kind == "requester.refused" and r.data["action"] == "abort")
    refusal_record = records[at]
    effect = attrs.evolve(refusal_record, kind="abort", data={"child": "c2", "running": True})
    found = invariants.check([*records[:at + 1], effect, *records[at + 1:]],
                             ["control-permission"])
    assert any("refused and performed" in v.message for v in found)


def test_the_oracle_catches_an_owner_refused() -> None:
    records = [r if r.kind != "world.session" else
               Record(r.seq, r.t_ms, r.actor, r.kind, {**r.data, "owners": ["alice", "mallory"]})
               for r in _permissions_run().trace.records]
    found = invariants.check(records, ["control-permission"])
    assert any("mallory owns" in v.message for v in found)
