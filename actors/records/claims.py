"""Recovery claims, delivery evidence and checkpoint reconciliation (DEL-13, reference §c12). Pure.

A delivery generation's durable state keeps its recovery claim apart from its delivery status:
the claim is *reserved* when an attempt starts, *attempted* before the first send is handed to
the gateway (from then on the requester may have the receipt), and cleared as *accepted* once
confirmed delivery evidence is saved, or *abandoned* when delivery gives up. Evidence says what
proved it: a reply the requester acknowledged to this process (``reply-sent``), a send
suppressed on purpose (``send-suppressed``), or the requester's own checkpoint of this run's
receipt found by a restart (``silent-checkpoint``); the three stay distinct.

A restart reconciles each open generation before anything is sent again: evidence already saved
resolves it; an attempted or consumed claim looks for the requester's checkpoint of *this* run's
receipt (never another run's, even of the same child session) and, if found, marks the claim
consumed, saves the evidence and only then clears the claim; otherwise it replays the claim's own
attempt key. Every one of those writes has a crash point before it.
"""

from __future__ import annotations

import enum

from actors import mutants
from actors.records.run_record import ClaimMoved, Delivered, EvidenceSaved, RunRecord
from actors.states import ACTIVE_CLAIMS, ClaimPhase, DeliveryStatus, EvidenceKind

# Claims whose receipt may be at the requester: handed over (attempted), found there (consumed),
# or abandoned by a give-up the process died before recording (the status is still pending).
SENT_CLAIMS = (ClaimPhase.ATTEMPTED, ClaimPhase.CONSUMED, ClaimPhase.ABANDONED)


class Reconcile(enum.Enum):
    RESOLVED = "resolved"  # evidence of the current receipt is saved: record it delivered
    CHECKPOINT = "checkpoint"  # an active claim, and the requester has its receipt
    REOPEN = "reopen"  # an active claim on an older receipt, not at the requester: a newer
    #                    receipt came meanwhile, so the next generation carries it (DEL-12)
    REPLAY = "replay"  # an active claim, no checkpoint: send again under the claim's key
    RESUME = "resume"  # no claim in flight: carry on as the row says


def has_evidence(record: RunRecord) -> bool:
    """Is the generation's current receipt (or a newer one) proven delivered?"""
    proven, current = record.evidence_ended_at_ms, record.receipt_at_ms
    return record.evidence_kind is not None and (
        proven is None or current is None or proven >= current)


def _claim_proven(record: RunRecord) -> bool:
    """Is there saved evidence for the receipt this generation's claim carried (or for the
    current receipt)? A reopened generation has no claim yet: its older evidence proves
    nothing for it."""
    if has_evidence(record):
        return True
    proven, claimed = record.evidence_ended_at_ms, record.claim_ended_at_ms
    return (record.evidence_kind is not None and record.claim_phase is not None
            and record.claim_phase is not ClaimPhase.ABANDONED
            and (proven is None or claimed is None or proven >= claimed))


def reconcile(record: RunRecord, checkpoint: tuple[str, int] | None,
              active_mutants: frozenset[str] = frozenset()) -> Reconcile:
    """What a restart does with a pending generation, given the requester's newest checkpoint
    of its run (key, producer end time) if any."""
    if record.delivery_status == DeliveryStatus.PENDING and _claim_proven(record):
        return Reconcile.RESOLVED
    if record.claim_phase not in SENT_CLAIMS:
        return Reconcile.RESUME
    claimed = record.claim_ended_at_ms
    if checkpoint is not None and (
            checkpoint[0] == record.claim_key or claimed is None or checkpoint[1] >= claimed
            or mutants.MUTANT_OTHER_RUN_PROOF in active_mutants):
        return Reconcile.CHECKPOINT
    current = record.receipt_at_ms
    if claimed is not None and current is not None and current > claimed:
        return Reconcile.REOPEN
    return Reconcile.REPLAY


def resolution(record: RunRecord, kind: EvidenceKind, key: str | None, ended_at_ms: int | None,
               now_ms: int, active_mutants: frozenset[str]) -> list[
                   ClaimMoved | EvidenceSaved | Delivered]:
    """The writes that resolve a generation as delivered, in the order the rule demands: save
    the evidence (unless saved already), then clear the claim, then record the status."""
    changes: list[ClaimMoved | EvidenceSaved | Delivered] = []
    if not _claim_proven(record):
        changes.append(EvidenceSaved(kind, key, ended_at_ms))
    if record.claim_phase in ACTIVE_CLAIMS:
        clear = ClaimMoved(ClaimPhase.ACCEPTED, record.claim_key, record.claim_ended_at_ms)
        if mutants.MUTANT_CLAIM_CLEARED_FIRST in active_mutants:
            changes.insert(0, clear)  # the bug: the claim goes before the evidence is durable
        else:
            changes.append(clear)
    changes.append(Delivered(now_ms))
    return changes
