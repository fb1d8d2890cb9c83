"""Oracles never take the model's own verdict records as premises (issue 12, wave 7): each
rewritten oracle still catches its broken variant on a trace whose registry records (settle,
give-up, skip, close, cleanup, reopen, dismiss) were removed, or forged so that believing them
would excuse the bug. (The YLD oracles' own cases: tests/test_wake_oracles_outside.py.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from actors import events
from actors.registry import DeliveryCore
from actors.run_record import RunRecord
from actors.states import DeliveryStatus, GiveUpReason
from sim.invariants.base import Violation
from sim.invariants.delivery import eventually_resolved
from sim.invariants.lifecycle import cleanup_once
from sim.invariants.nesting import descendants_first
from sim.trace import Record
from tests.test_wake_oracles_outside import REGISTRY, _run


def _stripped(records: Sequence[Record]) -> list[Record]:
    """The trace without any registry record (what an outsider cannot see)."""
    return [r for r in records if not r.kind.startswith(REGISTRY)]


def _forged(records: Sequence[Record], before: Callable[[Record], bool],
            forge: Callable[[Record], list[tuple[str, dict[str, Any]]]]) -> list[Record]:
    """The trace with forged registry records (``forge``) just before each record ``before``
    picks, at its virtual time."""
    out: list[Record] = []
    for r in records:
        if before(r):
            out += [Record(r.seq, r.t_ms, "delivery", kind, data) for kind, data in forge(r)]
        out.append(r)
    return out


def _checks_clean(check: Callable[[Sequence[Record]], list[Violation]], name: str) -> None:
    assert check(_run(name)) == []
    assert check(_stripped(_run(name))) == []


def test_descendants_first_believes_no_forged_give_up() -> None:
    _checks_clean(descendants_first, "nested-children.toml")
    broken = _run("nested-children.toml", mutants=["no-descendant-gating"])
    assert descendants_first(_stripped(broken))
    # Every run the registry might call settled is given up just before each announcement: a
    # forged give-up of a descendant still running its own delivery excuses nothing.
    runs = sorted({r.data["run_id"] for r in broken if r.kind == "spawn"})
    forged = _forged(_stripped(broken), lambda r: r.kind == "requester.accept",
                     lambda r: [("delivery.give_up", {"run_id": run_id, "status": "failed"})
                                for run_id in runs])
    found = descendants_first(forged)
    assert found and {v.invariant for v in found} == {"descendants-first"}


def test_cleanup_once_believes_no_forged_resolution() -> None:
    _checks_clean(cleanup_once, "rerun-own-checkpoint.toml")
    # The registry takes another run's receipt as proof and cleans the run up before its
    # requester has it (other-run-proof); each cleanup (the claim under test) follows a forged
    # record of the run delivered and given up.
    broken = _run("mutant-other-run-proof.toml")
    claims = [r for r in broken if not r.kind.startswith(("delivery.", "batch.", "private."))]
    forged = _forged(claims, lambda r: r.kind == "run.cleanup",
                     lambda r: [("delivery.delivered", {"run_id": r.data["run_id"]}),
                                ("delivery.give_up", {"run_id": r.data["run_id"]})])
    found = cleanup_once(forged)
    assert [v.message for v in found] == [
        "run-2 was cleaned up before its obligations resolved"]


def _gives_up_on_paper(self: DeliveryCore, record: RunRecord, now_ms: int) -> list[object]:
    """A broken registry: it records a give-up the moment a run ends and does nothing else (the
    row stays pending, nothing is sent)."""
    return [events.DeliveryGaveUp(record.run_id, DeliveryStatus.FAILED, GiveUpReason.EXPIRY,
                                  None)]


def test_eventually_resolved_believes_no_give_up_on_paper(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _checks_clean(eventually_resolved, "transient-then-success.toml")
    _checks_clean(eventually_resolved, "expiry.toml")
    monkeypatch.setattr(DeliveryCore, "child_ended", _gives_up_on_paper)
    broken = _run("transient-then-success.toml")
    assert any(r.kind == "delivery.give_up" for r in broken)
    found = eventually_resolved(broken)
    assert found and all("still pending" in v.message for v in found)
