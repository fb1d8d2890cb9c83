"""Receipts with producer end times (DEL-12), recovery claims and checkpoint reconciliation
(DEL-13), re-runs of one child session (DEL-15): the pure pieces, the delivery core's order of
writes, a crash at every step, and each oracle catching a broken model."""

from __future__ import annotations

import textwrap
from typing import Any

import attrs
import pytest

from actors import mutants
from actors.delivery.edge import Persist
from actors.delivery.table import DeliveryCore
from actors.messages import Completion, CompletionAck
from actors.mutants import MUTANT_RECEIPT_BY_ARRIVAL
from actors.records.claims import Reconcile, reconcile, resolution
from actors.records.run_record import (
    ClaimMoved,
    Delivered,
    EvidenceSaved,
    RunRecord,
    completion_key,
    generation_key,
)
from actors.requester.session import Receipt, SessionCore, reply_key
from actors.states import ClaimPhase, DeliveryStatus, EvidenceKind, OutcomeStatus
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS

KEY = completion_key("agent:main:subagent:c1", "run-1")


def _completion(ended_at_ms: int, generation: int = 1, run_id: str = "run-1",
                key: str | None = None) -> Completion:
    return Completion(key or generation_key(KEY, generation), run_id, "agent:main:subagent:c1",
                      "agent:main:main", "ok", f"reply ending at {ended_at_ms}",
                      ended_at_ms=ended_at_ms, generation=generation)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


# -- the requester session: which receipt owns the reply --------------------------------------


def test_the_newer_end_time_owns_the_reply_in_any_arrival_order() -> None:
    session = SessionCore("agent:main:main")
    verdicts = [session.receive_completion(c, 0)[1] for c in (
        _completion(50_000, 2), _completion(30_000, 1), _completion(50_000, 2))]
    assert verdicts == [Receipt.ACCEPTED, Receipt.OLDER, Receipt.DUPLICATE]
    assert [e.ended_at_ms for e in session.transcript] == [50_000]


def test_a_correction_supersedes_and_an_equal_end_time_keeps_the_first() -> None:
    session = SessionCore("agent:main:main")
    assert session.receive_completion(_completion(30_000), 0)[1] is Receipt.ACCEPTED
    # A receipt of the same reply with the same end time under another key: the first stays.
    equal = _completion(30_000, 2)
    assert session.receive_completion(equal, 0)[1] is Receipt.EQUAL_END
    ack, verdict = session.receive_completion(_completion(60_000, 3), 0)
    assert verdict is Receipt.SUPERSEDED and ack.accepted
    assert session.transcript[-1].replaces is session.transcript[0]


def test_receipts_survive_a_compaction() -> None:
    # DEL-7 and DEL-12 together: a compaction folds the reply, yet a resend of its receipt is
    # still known and a correction still supersedes the (folded) reply it replaces.
    session = SessionCore("agent:main:main")
    session.receive_completion(_completion(30_000), 0)
    folded = session.transcript[0]
    assert session.compact(1) == 1
    assert session.receive_completion(_completion(30_000), 2)[1] is Receipt.DUPLICATE
    assert session.compacted_since(KEY)
    _, verdict = session.receive_completion(_completion(60_000, 2), 3)
    assert verdict is Receipt.SUPERSEDED and session.transcript[-1].replaces is folded


def test_the_arrival_order_bug_lets_an_older_receipt_win() -> None:
    session = SessionCore("agent:main:main", mutants=frozenset({MUTANT_RECEIPT_BY_ARRIVAL}))
    session.receive_completion(_completion(50_000, 2), 0)
    assert session.receive_completion(_completion(30_000, 1), 0)[1] is Receipt.SUPERSEDED


def test_a_reply_key_drops_only_its_own_generation_suffix() -> None:
    assert reply_key(generation_key(KEY, 3), 3) == KEY
    assert reply_key(KEY, 1) == KEY
    assert reply_key(f"{KEY}:g2", 3) == f"{KEY}:g2"


# -- reconciliation decisions (actors/records/claims.py) ------------------------------------------


def _row(**changes: Any) -> RunRecord:
    record = RunRecord("run-2", "c1", "agent:main:subagent:c1", "agent:main:main", "t", True, 0,
                       ended_at_ms=10_000, outcome_status=OutcomeStatus.OK, result_text="r")
    return attrs.evolve(record, **changes)


OWN = completion_key("agent:main:subagent:c1", "run-2")  # the reconciled row's own key
ATTEMPTED = {"claim_phase": ClaimPhase.ATTEMPTED, "claim_key": OWN, "claim_ended_at_ms": 10_000}


@pytest.mark.parametrize(("row", "checkpoint", "verdict"), [
    ({}, None, Reconcile.RESUME),
    ({"claim_phase": ClaimPhase.RESERVED, "claim_key": OWN}, None, Reconcile.RESUME),
    (ATTEMPTED, None, Reconcile.REPLAY),
    (ATTEMPTED, (OWN, 10_000), Reconcile.CHECKPOINT),
    ({**ATTEMPTED, "claim_phase": ClaimPhase.CONSUMED}, (OWN, 10_000), Reconcile.CHECKPOINT),
    ({**ATTEMPTED, "evidence_kind": EvidenceKind.REPLY_SENT, "evidence_key": OWN,
      "evidence_ended_at_ms": 10_000}, None, Reconcile.RESOLVED),
    # A correction came after the claim's receipt was attempted, and it never arrived.
    ({**ATTEMPTED, "receipt_ended_at_ms": 20_000}, None, Reconcile.REOPEN),
    # Another run's checkpoint (an older end time, another key) proves nothing...
    (ATTEMPTED, (KEY, 5_000), Reconcile.REPLAY),
    # A give-up the process died before recording: the requester may have the receipt.
    ({**ATTEMPTED, "claim_phase": ClaimPhase.ABANDONED}, (OWN, 10_000), Reconcile.CHECKPOINT),
    ({**ATTEMPTED, "claim_phase": ClaimPhase.ABANDONED}, None, Reconcile.REPLAY),
])
def test_reconcile(row: dict[str, Any], checkpoint: tuple[str, int] | None,
                   verdict: Reconcile) -> None:
    assert reconcile(_row(**row), checkpoint) is verdict


def test_the_other_run_bug_takes_any_checkpoint_as_proof() -> None:
    other = (KEY, 5_000)  # run-1's receipt, for run-2
    bug = frozenset({mutants.MUTANT_OTHER_RUN_PROOF})
    assert reconcile(_row(**ATTEMPTED), other, bug) is Reconcile.CHECKPOINT


def test_evidence_is_saved_before_the_claim_is_cleared() -> None:
    changes = resolution(_row(**ATTEMPTED), EvidenceKind.REPLY_SENT, OWN, 10_000, 99,
                         frozenset())
    assert [type(c) for c in changes] == [EvidenceSaved, ClaimMoved, Delivered]
    bug = resolution(_row(**ATTEMPTED), EvidenceKind.REPLY_SENT, OWN, 10_000, 99,
                     frozenset({mutants.MUTANT_CLAIM_CLEARED_FIRST}))
    assert [type(c) for c in bug] == [ClaimMoved, EvidenceSaved, Delivered]


def test_the_core_acknowledged_path_writes_claim_then_evidence_then_status() -> None:
    core: DeliveryCore[str] = DeliveryCore(1, lambda: 0.0, lambda r, k: "text", lambda s: "top")
    record = _row(run_id="run-1", attempt_count=0)
    sent = core.child_ended(record, 10_000)
    acked = core.handle(CompletionAck(KEY, "run-1", True), 10_500)
    writes = [e.change for e in [*sent, *acked] if isinstance(e, Persist)]
    phases = [(type(c).__name__, getattr(c, "claim_phase", None)) for c in writes]
    assert phases == [("AttemptStarted", None), ("ClaimMoved", ClaimPhase.RESERVED),
                      ("ClaimMoved", ClaimPhase.ATTEMPTED), ("EvidenceSaved", None),
                      ("ClaimMoved", ClaimPhase.ACCEPTED), ("Delivered", None),
                      ("CleanedUp", None)]


# -- a crash at every step: nothing resent, delivered once, evidence distinct -----------------

CRASH = textwrap.dedent("""\
    name = "crash at {point}"
    [[sessions]]
    key = "agent:main:main"
    [[children]]
    id = "c1"
    run_for = 30
    reply = "Done: 3 files."
    [[timeline]]
    at = 0
    fault = "crash"
    actor = "delivery"
    point = "{point}"
    restart_after = 5
    """)


@pytest.mark.parametrize("point", [
    "before-claim-reserved", "before-claim-attempted", "before-send", "before-save-evidence",
    "before-clear-claim", "before-record-delivered", "before-record-cleanup"])
def test_a_crash_at_each_step_of_a_delivery_resends_nothing_confirmed(point: str) -> None:
    result = world.run(scenario.loads(CRASH.format(point=point), f"{point}.toml"))
    assert _names(result) == []
    (run,) = result.runs
    assert run.delivery_status == DeliveryStatus.DELIVERED
    assert run.claim_phase == ClaimPhase.ACCEPTED
    sends = [r for r in result.trace if r.kind == "gateway.send"]
    accepts = [r for r in result.trace if r.kind == "requester.accept"]
    assert len(accepts) == 1
    # Before anything was handed over the restart sends it (once); after, it never sends again.
    assert len(sends) == 1
    evidence = {"before-save-evidence": EvidenceKind.SILENT_CHECKPOINT}
    assert run.evidence_kind == evidence.get(point, EvidenceKind.REPLY_SENT)
    assert run.evidence_key == KEY


def test_a_suppressed_send_is_its_own_evidence() -> None:
    text = CRASH.format(point="before-persist").replace('"Done: 3 files."', '"ANNOUNCE_SKIP"')
    result = world.run(scenario.loads(text.split("[[timeline]]")[0], "skip.toml"))
    (run,) = result.runs
    assert run.evidence_kind == EvidenceKind.SEND_SUPPRESSED and run.claim_phase is None


# -- each oracle catches its broken model -------------------------------------------------------


@pytest.mark.parametrize(("name", "found"), [
    ("mutant-receipt-by-arrival.toml", ["newest-receipt-owns"]),
    ("mutant-claim-cleared-first.toml", ["evidence-before-claim"]),
    ("mutant-other-run-proof.toml", ["cleanup-once", "delivered-means-received",
                                     "evidence-is-own"]),
    ("mutant-key-without-run-id.toml", ["announce-key", "rerun-keeps-answer"]),
])
def test_each_oracle_catches_its_mutant(name: str, found: list[str]) -> None:
    assert _names(world.run(scenario.load(SCENARIOS / name))) == found


def test_the_same_timelines_pass_without_the_bugs() -> None:
    for name in ("receipt-out-of-order.toml", "restart-after-confirmed-send.toml",
                 "rerun-own-checkpoint.toml"):
        assert _names(world.run(scenario.load(SCENARIOS / name))) == [], name


def test_newest_receipt_owns_catches_a_session_that_drops_the_newer_receipt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = SessionCore.receive_completion

    def keep_first(self: SessionCore, completion: Completion, now_ms: int) -> Any:
        ack, verdict = original(self, completion, now_ms)
        if verdict is Receipt.SUPERSEDED:  # the bug: a correction is never taken
            self.transcript.pop()
            return attrs.evolve(ack, accepted=False), Receipt.OLDER
        return ack, verdict

    monkeypatch.setattr(SessionCore, "receive_completion", keep_first)
    result = world.run(scenario.load(SCENARIOS / "receipt-correction-supersedes.toml"))
    assert "newest-receipt-owns" in _names(result)
