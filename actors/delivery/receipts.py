"""The delivery core's steps for receipts and recovery claims (DEL-12, DEL-13). Pure.

Split from ``actors/delivery/table.py`` (the transition table and the retry steps) as a mixin of
:class:`~actors.delivery.table.DeliveryCore`: a correction from the producer while an older receipt
is in flight or after it was delivered (a new delivery generation), and a restart's checkpoint
reconciliation (``actors/records/claims.py`` decides; these steps turn the decision into effects).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from actors import events, mutants
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
    Change,
    ClaimMoved,
    FindingsFrozen,
    Reopened,
    RunRecord,
    apply,
)
from actors.states import ACTIVE_CLAIMS, ClaimPhase, DeliveryStatus, EvidenceKind, Waiting


@attrs.define
class Active:
    """In-memory state of a run whose delivery is in flight in this incarnation."""

    record: RunRecord
    key: str
    text: str | None = None  # the rendered announce block, made once per run and target
    target: str | None = None  # the session this attempt sends to (a fallback, DEL-4)
    failed_tries: int = 0
    token: int = 0  # identifies the current transport try; stale timers carry another
    waiting: Waiting = Waiting.IDLE
    # The latest error a send was refused with (DEL-9): an unanswered try does not replace it.
    concrete_error: str | None = None
    # The last try went unanswered: the requester may have it, so only an answer (not a yield
    # batch) may settle it.
    ambiguous: bool = False


# The error a completion waits on when its nested requester is gone with no fallback (DEL-4).
REQUESTER_UNAVAILABLE = "requester session unavailable"


def carried_error(active: Active | None, record: RunRecord) -> str | None:
    """The concrete error a restarted actor, or a run's next delivery generation (reopened,
    redriven), is still blocked on (DEL-9: kept across retries): the in-flight delivery's, else
    the row's persisted one. A "requester unavailable" wait was no refusal of a send (DEL-4)."""
    if active is not None and active.concrete_error is not None:
        return active.concrete_error
    return None if record.last_error == REQUESTER_UNAVAILABLE else record.last_error


class ReceiptSteps:
    """What the steps below need of the core (it provides all of them)."""

    incarnation: int
    _active: dict[str, Active]
    _mutants: frozenset[str]
    _probe: Callable[[str], None]
    _checkpoint: Callable[[RunRecord, bool], tuple[str, int] | None]
    _pending_descendants: Callable[[RunRecord], int]
    _findings: Callable[[RunRecord], str | None]

    def _key(self, record: RunRecord) -> str:
        raise NotImplementedError

    def _start_attempt(self, active: Active, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def _cleanup(self, record: RunRecord, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def handle(self, event: Input, now_ms: int) -> list[Effect]:
        raise NotImplementedError

    def _persist(self, active: Active, change: Change) -> Persist:
        raise NotImplementedError

    def _freeze_findings(self, active: Active) -> list[Effect]:
        """DEL-6: a run's findings are rendered once per delivery generation and stored with
        the run before its first send, so a resend after a restart carries the same text under
        the same key. A child's later correction reaches the child's own requester (this run's
        session), never an already rendered payload (docs/nesting.md)."""
        record = active.record
        if (record.findings_text is not None
                and mutants.MUTANT_FINDINGS_RERENDERED not in self._mutants):
            return []
        section = self._findings(record)
        if section is None:  # the run spawned no children: nothing to keep
            return []
        return [self._persist(active, FindingsFrozen(section)),
                events.FindingsFrozen(record.run_id, active.key)]

    def _private_gate(self, record: RunRecord, now_ms: int
                      ) -> tuple[RunRecord, list[Effect], bool]:
        raise NotImplementedError  # actors/delivery/private_steps.py

    def restore(self, records: Iterable[RunRecord], now_ms: int) -> list[Effect]:
        """Pick up every ended run whose required delivery is still pending, and finish the
        cleanup of every resolved run the previous incarnation did not reach (after a restart)."""
        effects: list[Effect] = []
        for record in records:
            if record.ended_at_ms is None:
                continue
            if record.delivery_status == DeliveryStatus.PENDING:
                if record.delivery_disposition is None:  # else its yield batch owns it
                    effects += self.handle(Restored(record), now_ms)
            elif self._newer_receipt(record):
                self._probe("delivery.restart-finds-newer-receipt")
                effects += self.handle(RunFinished(record), now_ms)
            elif record.cleaned_up_at_ms is None:
                self._probe("delivery.cleanup-after-restart")
                effects += self._cleanup(record, now_ms)
        return effects

    def _restored(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, Restored)
        record = event.record
        resolved = self._reconcile(record, now_ms)
        if resolved is not None:
            return resolved
        record, released, goes_on = self._private_gate(record, now_ms)  # PRV-3, PRV-5
        if not goes_on:
            return released
        # An active claim replays its own attempt key, never a fresh one (DEL-13, §c12).
        key = record.claim_key if record.claim_phase in ACTIVE_CLAIMS and record.claim_key \
            else self._key(record)
        if mutants.MUTANT_FRESH_KEY_AFTER_RESTART in self._mutants and self.incarnation > 1:
            key = f"{key}:restart-{self.incarnation}"
        concrete = carried_error(None, record)
        # Whether an earlier try was answered is not persisted: after a restart any earlier
        # attempt may have reached the requester (a refusal seen since proves nothing about it),
        # so a yield batch never takes this run's result over
        # (actors/delivery/wakes/batch_handover.py).
        active = self._active[record.run_id] = Active(record, key, concrete_error=concrete,
                                                      ambiguous=record.attempt_count > 0)
        due = record.next_attempt_at_ms
        if record.attempt_count == 0:
            self._probe("delivery.restart-before-first-attempt")
        elif due is None:
            self._probe("delivery.restart-between-send-and-record")
        elif due <= now_ms:
            self._probe("delivery.restart-after-backoff-due")
        if self._pending_descendants(record):
            self._probe("delivery.restart-during-deferral")
        if due is not None and due > now_ms:
            self._probe("delivery.restart-during-backoff")
            active.waiting = Waiting.ATTEMPT_WAIT
            return [*released,
                    StartTimer(due - now_ms, AttemptDue(record.run_id, record.generation))]
        return released + self._start_attempt(active, now_ms)

    def _duplicate_end(self, active: Active | None, event: Input, now_ms: int) -> list[Effect]:
        assert isinstance(event, RunFinished) and active is not None
        record = event.record
        current = active.record.receipt_at_ms
        if record.receipt_at_ms is not None and current is not None and (
                record.receipt_at_ms > current):
            # A correction while the older receipt is in flight (DEL-12).
            if active.record.claim_phase in (ClaimPhase.ATTEMPTED, ClaimPhase.CONSUMED):
                return self._reopen(active, record, now_ms)  # the older one may be out there
            self._probe("delivery.corrected-before-send")
            active.record = attrs.evolve(active.record, result_text=record.result_text,
                                         receipt_ended_at_ms=record.receipt_ended_at_ms)
            active.text = None
            return []
        self._probe("delivery.child-ended-twice")
        return []  # restore already picked the run up; the notification is a duplicate

    def _newer_receipt(self, record: RunRecord) -> bool:
        """A delivered run whose producer has since written a newer receipt (DEL-12)."""
        if mutants.MUTANT_DELIVERED_IGNORES_CORRECTION in self._mutants:
            return False  # the bug: delivered is final, the newer receipt is never sent
        return (record.delivery_status == DeliveryStatus.DELIVERED and record.required
                and not claims.has_evidence(record))

    def _reopen(self, active: Active | None, record: RunRecord, now_ms: int) -> list[Effect]:
        """The next delivery generation carries the newer receipt under its own key."""
        self._probe("delivery.reopened-in-flight" if active else "delivery.reopened-after-delivery")
        # The next generation is one above the last one handed to the gateway under the run's
        # own key (DEL-3). A generation resolved without a send of its own (a yield batch took
        # it over at once, and its wake carried the older receipt) never went out: it carries
        # the newer receipt still, under its own key, rather than leave a number unsent.
        unsent = (record.generation > 1 and record.attempt_count == 0
                  and record.claim_phase is None)
        record, persist = persisted(
            record, Reopened(record.generation if unsent else record.generation + 1))
        key = self._key(record)
        if mutants.MUTANT_REOPEN_KEEPS_KEY in self._mutants:
            key = self._key(attrs.evolve(record, generation=record.generation - 1))  # the bug
        fresh = self._active[record.run_id] = Active(record, key,
                                                     concrete_error=carried_error(active, record))
        return [persist,
                events.DeliveryReopened(record.run_id, record.generation, record.receipt_at_ms),
                *self._start_attempt(fresh, now_ms)]

    def _reconcile(self, record: RunRecord, now_ms: int) -> list[Effect] | None:
        """A restart's checkpoint reconciliation (actors/records/claims.py); None: replay or
        resume."""
        lookup = None
        if record.claim_phase in claims.SENT_CLAIMS:
            lookup = self._checkpoint(record, mutants.MUTANT_OTHER_RUN_PROOF in self._mutants)
        verdict = claims.reconcile(record, lookup, self._mutants)
        if verdict is claims.Reconcile.REOPEN:
            self._probe("delivery.restart-reopens-for-newer-receipt")
            return self._reopen(None, record, now_ms)
        if verdict is claims.Reconcile.REPLAY:
            self._probe("delivery.restart-checkpoint-missing")  # replays the claim's key
        if verdict in (claims.Reconcile.REPLAY, claims.Reconcile.RESUME):
            return None
        effects: list[Effect] = []
        if verdict is claims.Reconcile.RESOLVED:
            self._probe("delivery.restart-evidence-saved")  # no send: the claim only clears
            kind, key, ended = EvidenceKind.REPLY_SENT, record.evidence_key, None
        else:
            assert lookup is not None
            self._probe("delivery.restart-checkpoint-found")
            # The checkpoint proves the receipt the claim carried reached the requester.
            key, kind = lookup[0], EvidenceKind.SILENT_CHECKPOINT
            ended = record.claim_ended_at_ms if record.claim_ended_at_ms is not None \
                else lookup[1]
            if record.claim_phase is ClaimPhase.CONSUMED:
                self._probe("delivery.restart-claim-consumed")
            else:
                change = ClaimMoved(ClaimPhase.CONSUMED, record.claim_key,
                                    record.claim_ended_at_ms)
                record, persist = persisted(record, change)
                effects.append(persist)
        note: Effect = events.DeliveryRecorded(record.run_id, key or "", True)
        if record.evidence_kind is EvidenceKind.SEND_SUPPRESSED:
            note = events.AnnounceSkipped(record.run_id)  # the skip, finished after a restart
        resolved = self._resolve(record, kind, key, ended, now_ms, note)
        effects += resolved
        for effect in resolved:  # the row as it now stands
            if isinstance(effect, Persist):
                record = apply(record, effect.change)
        if self._newer_receipt(record):
            # The requester took the older receipt; a correction came since (DEL-12).
            self._probe("delivery.restart-finds-newer-receipt")
            effects += self._reopen(None, record, now_ms)
        return effects

    def _resolve(self, record: RunRecord, kind: EvidenceKind, key: str | None,
                 ended_at_ms: int | None, now_ms: int, note: Effect) -> list[Effect]:
        """Evidence saved, then the claim cleared, then delivered (each durable); the trace
        ``note``; then the cleanup."""
        effects: list[Effect] = []
        for change in claims.resolution(record, kind, key, ended_at_ms, now_ms, self._mutants):
            record, persist = persisted(record, change)
            effects.append(persist)
        return [*effects, note, *self._cleanup(record, now_ms)]
