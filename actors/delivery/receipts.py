"""The delivery core's steps for receipts and recovery claims (DEL-12, DEL-13). Pure.

Plain functions of the core's state (:class:`~actors.delivery.core.CoreState`), which the
table (``actors/delivery/table.py``) calls by reference: a correction from the producer while an
older receipt is in flight or after it was delivered (a new delivery generation), and a
restart's checkpoint reconciliation (``actors/records/claims.py`` decides; these steps turn the
decision into effects). The restart's pick-up itself is the core's entry point
(:meth:`~actors.delivery.table.DeliveryCore.restore`).
"""

from __future__ import annotations

import attrs

from actors import events, mutants
from actors.delivery import attempts, private_steps
from actors.delivery.core import Active, Core, carried_error
from actors.delivery.edge import (
    AttemptDue,
    Effect,
    Input,
    Persist,
    Restored,
    RunFinished,
    StartTimer,
    persisted,
)
from actors.records import claims
from actors.records.run_record import (
    ClaimMoved,
    Reopened,
    RunRecord,
    apply,
)
from actors.states import ACTIVE_CLAIMS, ClaimPhase, EvidenceKind, Waiting


def restored(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, Restored)
    record = event.record
    resolved = reconcile(core, record, now_ms)
    if resolved is not None:
        return resolved
    record, released, goes_on = private_steps.private_gate(core, record, now_ms)  # PRV-3, PRV-5
    if not goes_on:
        return released
    # An active claim replays its own attempt key, never a fresh one (DEL-13, §c12).
    key = record.claim_key if record.claim_phase in ACTIVE_CLAIMS and record.claim_key \
        else core._key(record)
    if mutants.MUTANT_FRESH_KEY_AFTER_RESTART in core._mutants and core.incarnation > 1:
        key = f"{key}:restart-{core.incarnation}"
    concrete = carried_error(None, record)
    # Whether an earlier try was answered is not persisted: after a restart any earlier
    # attempt may have reached the requester (a refusal seen since proves nothing about it),
    # so a yield batch never takes this run's result over
    # (actors/delivery/wakes/batch_handover.py).
    active = core._active[record.run_id] = Active(record, key, concrete_error=concrete,
                                                  ambiguous=record.attempt_count > 0)
    due = record.next_attempt_at_ms
    if record.attempt_count == 0:
        core._probe("delivery.restart-before-first-attempt")
    elif due is None:
        core._probe("delivery.restart-between-send-and-record")
    elif due <= now_ms:
        core._probe("delivery.restart-after-backoff-due")
    if core._pending_descendants(record):
        core._probe("delivery.restart-during-deferral")
    if due is not None and due > now_ms:
        core._probe("delivery.restart-during-backoff")
        active.waiting = Waiting.ATTEMPT_WAIT
        return [*released,
                StartTimer(due - now_ms, AttemptDue(record.run_id, record.generation))]
    return released + attempts.start_attempt(core, active, now_ms)


def duplicate_end(core: Core, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
    assert isinstance(event, RunFinished) and active is not None
    record = event.record
    current = active.record.receipt_at_ms
    if record.receipt_at_ms is not None and current is not None and (
            record.receipt_at_ms > current):
        # A correction while the older receipt is in flight (DEL-12).
        if active.record.claim_phase in (ClaimPhase.ATTEMPTED, ClaimPhase.CONSUMED):
            return reopen(core, active, record, now_ms)  # the older one may be out there
        core._probe("delivery.corrected-before-send")
        active.record = attrs.evolve(active.record, result_text=record.result_text,
                                     receipt_ended_at_ms=record.receipt_ended_at_ms)
        active.text = None
        return []
    core._probe("delivery.child-ended-twice")
    return []  # restore already picked the run up; the notification is a duplicate


def reopen(core: Core, active: Active | None, record: RunRecord, now_ms: int) -> list[Effect]:
    """The next delivery generation carries the newer receipt under its own key."""
    core._probe("delivery.reopened-in-flight" if active else "delivery.reopened-after-delivery")
    # The next generation is one above the last one handed to the gateway under the run's
    # own key (DEL-3). A generation resolved without a send of its own (a yield batch took
    # it over at once, and its wake carried the older receipt) never went out: it carries
    # the newer receipt still, under its own key, rather than leave a number unsent.
    unsent = (record.generation > 1 and record.attempt_count == 0
              and record.claim_phase is None)
    record, persist = persisted(
        record, Reopened(record.generation if unsent else record.generation + 1))
    key = core._key(record)
    if mutants.MUTANT_REOPEN_KEEPS_KEY in core._mutants:
        key = core._key(attrs.evolve(record, generation=record.generation - 1))  # the bug
    fresh = core._active[record.run_id] = Active(record, key,
                                                 concrete_error=carried_error(active, record))
    return [persist,
            events.DeliveryReopened(record.run_id, record.generation, record.receipt_at_ms),
            *attempts.start_attempt(core, fresh, now_ms)]


def reconcile(core: Core, record: RunRecord, now_ms: int) -> list[Effect] | None:
    """A restart's checkpoint reconciliation (actors/records/claims.py); None: replay or
    resume."""
    lookup = None
    if record.claim_phase in claims.SENT_CLAIMS:
        lookup = core._checkpoint(record, mutants.MUTANT_OTHER_RUN_PROOF in core._mutants)
    verdict = claims.reconcile(record, lookup, core._mutants)
    if verdict is claims.Reconcile.REOPEN:
        core._probe("delivery.restart-reopens-for-newer-receipt")
        return reopen(core, None, record, now_ms)
    if verdict is claims.Reconcile.REPLAY:
        core._probe("delivery.restart-checkpoint-missing")  # replays the claim's key
    if verdict in (claims.Reconcile.REPLAY, claims.Reconcile.RESUME):
        return None
    effects: list[Effect] = []
    if verdict is claims.Reconcile.RESOLVED:
        core._probe("delivery.restart-evidence-saved")  # no send: the claim only clears
        kind, key, ended = EvidenceKind.REPLY_SENT, record.evidence_key, None
    else:
        assert lookup is not None
        core._probe("delivery.restart-checkpoint-found")
        # The checkpoint proves the receipt the claim carried reached the requester.
        key, kind = lookup[0], EvidenceKind.SILENT_CHECKPOINT
        ended = record.claim_ended_at_ms if record.claim_ended_at_ms is not None \
            else lookup[1]
        if record.claim_phase is ClaimPhase.CONSUMED:
            core._probe("delivery.restart-claim-consumed")
        else:
            change = ClaimMoved(ClaimPhase.CONSUMED, record.claim_key,
                                record.claim_ended_at_ms)
            record, persist = persisted(record, change)
            effects.append(persist)
    note: Effect = events.DeliveryRecorded(record.run_id, key or "", True)
    if record.evidence_kind is EvidenceKind.SEND_SUPPRESSED:
        note = events.AnnounceSkipped(record.run_id)  # the skip, finished after a restart
    resolved = core._resolve(record, kind, key, ended, now_ms, note)
    effects += resolved
    for effect in resolved:  # the row as it now stands
        if isinstance(effect, Persist):
            record = apply(record, effect.change)
    if core._newer_receipt(record):
        # The requester took the older receipt; a correction came since (DEL-12).
        core._probe("delivery.restart-finds-newer-receipt")
        effects += reopen(core, None, record, now_ms)
    return effects
