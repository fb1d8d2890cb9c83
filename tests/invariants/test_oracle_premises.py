"""Oracles never take the model's own verdict records as premises (issue 12, wave 7): each
rewritten oracle still catches its broken variant on a trace whose registry records (settle,
give-up, skip, close, cleanup, reopen, dismiss) were removed, or forged so that believing them
would excuse the bug. (The YLD oracles' own cases: tests/yields/test_wake_oracles_outside.py.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

import actors.delivery.wakes.delivery_wakes
from actors import events
from actors.delivery.table import DeliveryCore
from actors.records.run_record import RunRecord
from actors.states import DeliveryStatus, GiveUpReason
from sim.invariants.base import Violation
from sim.invariants.delivery.lifecycle import cleanup_once
from sim.invariants.delivery.reached import eventually_resolved
from sim.invariants.delivery.recovery import lost_answer_recovery
from sim.invariants.delivery.redrive import given_up_waits_for_operator, redrive_from_retained
from sim.invariants.delivery.retries import expiry_ends_attempts, retry_timing
from sim.invariants.nesting.findings import findings_scoped
from sim.invariants.nesting.requesters import descendants_first
from sim.invariants.yields.wake_message import wake_message
from sim.invariants.yields.waves import wave_is_overlapping_set
from sim.trace import Record
from tests.yields.test_wake_oracles_outside import REGISTRY, _run


def _stripped(records: Sequence[Record], keep: tuple[str, ...] = ()) -> list[Record]:
    """The trace without any registry record (what an outsider cannot see) but the claims
    under test (``keep``)."""
    return [r for r in records if not r.kind.startswith(REGISTRY) or r.kind.startswith(keep)]


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


def _checks_clean(check: Callable[[Sequence[Record]], list[Violation]], name: str,
                  keep: tuple[str, ...] = ()) -> None:
    assert check(_run(name)) == []
    assert check(_stripped(_run(name), keep)) == []


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


@pytest.mark.parametrize(("name", "mutant", "check", "keep"), [
    # The registry's give-up, delivered, reopen and dismiss records are gone: a give-up is read
    # from the gateway's refusals and the expiry, a redrive from the operator's request.
    ("mutant-give-up-correction-sent.toml", None, given_up_waits_for_operator, ()),
    ("mutant-redrive-same-generation.toml", None, redrive_from_retained, ()),
    # (no output) delivered as the requester took it; the recovery table is the claim.
    ("lost-answer-recovery.toml", "no-answer-recovery", lost_answer_recovery, ("recovery.",)),
    ("lost-answer-recovery.toml", "recovery-unbounded", lost_answer_recovery, ("recovery.",)),
    # Its give-up is the claim under test (never before the expiry but on a refusal for good).
    ("expiry.toml", "give-up-after-tries", retry_timing, ("delivery.give_up",)),
    # (Not expiry.toml since issue 34: its child ends 10 s after its spawn and its last backoff
    # now runs past both deadlines; here the public sibling's resume falls between them.)
    ("private-batch-public-sibling-retries.toml", "expiry-from-spawn", retry_timing,
     ("delivery.give_up",)),
    # Attempts' starts are read from the gateway's sends and refusals alone.
    ("mutant-expiry-inclusive.toml", "expiry-inclusive", expiry_ends_attempts, ()),
    # A wave's members settle as an outsider tells: no cleanup or give-up record is read.
    ("mutant-wave-stale-sibling.toml", None, wave_is_overlapping_set, ()),
])
def test_each_rewritten_oracle_catches_its_bug_without_the_registrys_records(
    name: str, mutant: str | None, check: Callable[[Sequence[Record]], list[Violation]],
    keep: tuple[str, ...],
) -> None:
    kwargs: dict[str, Any] = {} if mutant is None else {"mutants": [mutant]}
    broken = _run(name, **kwargs)
    if mutant is not None:
        # (Without any mutant: a mutant-*.toml file switches its own on.)
        assert check(_run(name, mutants=[])) == []
        assert check(_stripped(_run(name, mutants=[]), keep)) == []
    assert check(_stripped(broken, keep))
    # Every run forged as given up and delivered at the start changes nothing.
    runs = sorted({r.data["run_id"] for r in broken if r.kind == "spawn"})
    forged = _forged(_stripped(broken, keep), lambda r: r.kind == "child.end",
                     lambda r: [(kind, {"run_id": run_id, "status": "failed", "key": "",
                                        "generation": 2, "ended_at": 0})
                                for run_id in runs for kind in ("delivery.give_up",
                                                                "delivery.delivered",
                                                                "delivery.reopen")])
    assert check(forged) == check(_stripped(broken, keep))


def test_retry_timing_reads_a_new_generation_from_the_correction() -> None:
    # No delivery.reopen: the correction and the new key sent after it say so.
    _checks_clean(retry_timing, "receipt-correction-supersedes.toml", ("delivery.give_up",))
    _checks_clean(retry_timing, "redrive-new-generation.toml", ("delivery.give_up",))


def test_wake_message_reads_no_give_up_or_skip_record(monkeypatch: pytest.MonkeyPatch) -> None:
    _checks_clean(wake_message, "yield-batch.toml")
    _checks_clean(wake_message, "announce-skip.toml")
    monkeypatch.setattr(actors.delivery.wakes.delivery_wakes, "_announced", lambda record: True)
    broken = _run("yield-batch.toml")
    assert wake_message(_stripped(broken))
    # A forged give-up of every member no longer decides what the wake owes.
    runs = sorted({r.data["run_id"] for r in broken if r.kind == "spawn"})
    forged = _forged(_stripped(broken), lambda r: r.kind == "gateway.send",
                     lambda r: [("delivery.give_up", {"run_id": run_id}) for run_id in runs])
    assert wake_message(forged) == wake_message(_stripped(broken))


def test_findings_scoped_checks_when_the_registry_says_it_froze_them() -> None:
    _checks_clean(findings_scoped, "findings-frozen.toml", ("delivery.findings-frozen",))
    clean = _run("nested-children.toml")
    parent = next(r.data["run_id"] for r in clean if r.kind == "spawn")
    # A registry claiming to have frozen a run's findings the moment it ended, before its
    # children ended, is caught: its word would otherwise scope what they must hold.
    early = _forged(clean, lambda r: r.kind == "child.end" and r.data["run_id"] == parent,
                    lambda r: [("delivery.findings-frozen", {"run_id": parent, "key": "k"})])
    found = findings_scoped(early)
    assert found and "before the run ended" in found[0].message
    g2 = [r.data["run_id"] for r in clean if r.kind == "spawn"][2]  # outlives c1
    unsettled = _forged(clean, lambda r: r.kind == "child.end" and r.data["run_id"] == g2,
                        lambda r: [("delivery.findings-frozen", {"run_id": parent, "key": "k"})])
    found = findings_scoped(unsettled)
    assert found and f"before its children {g2} had settled" in found[0].message
