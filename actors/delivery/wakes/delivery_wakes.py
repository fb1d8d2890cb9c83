"""The delivery actor's side of yield batches: the batch-wake outbox core
(``actors/delivery/wakes/batch_wake.py``) fed from the store, and the wake's text
(``actors/announce/wake.py``).

The delivery shell hands it the messages that are a batch's (a frozen batch, its timers, the
answers to a wake) and, after anything else it handled, lets it look at the open batches again:
a member or a member's descendant may have settled, which is what a wake waits for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from actors import events
from actors import mutants as mutant_names
from actors.announce import ChildResult
from actors.announce.labels import is_announce_skip
from actors.announce.wake import ROUTE_CAP, Wake, format_wake, route_section
from actors.delivery.edge import BatchClaim, Effect, RunFinished
from actors.delivery.store import DeliveryStore
from actors.delivery.table import DeliveryCore
from actors.delivery.wakes.batch_wake import BatchWakeCore
from actors.delivery.wakes.outbox_messages import (
    ClaimMember,
    Member,
    ReopenMember,
    Requester,
    SaveBatch,
    WakeAckTimeout,
    WakeDue,
    WakeTimer,
)
from actors.delivery.wakes.outbox_messages import Effect as WakeEffect
from actors.messages import BatchReady, CompletionAck, SendRejected
from actors.records.batch_record import SETTLE_KEY_PREFIX, BatchRow, BatchStatus
from actors.records.retention import summarize
from actors.records.run_record import RunRecord
from actors.runtime import Port
from actors.states import CrashPoint, DeliveryStatus, OutcomeStatus

_FLOOR_EDGES = {1: "batch.floor-heads-one-under-cap", 0: "batch.floor-heads-at-cap"}
KILLED = "subagent run terminated"  # an aborted child's error (it did not finish)
# One frozen ``Requester`` per incarnation, not one per batch look (one after every message of
# the delivery actor while a batch is open).
_requester = functools.cache(Requester)
# A batch look: what it read, the probes it hit, its answer (``Wakes._look``).
_Look = tuple[tuple[object, ...], tuple[str, ...], list[WakeEffect]]


def wake_text(row: BatchRow, records: list[RunRecord],
              child_result: Callable[[RunRecord], ChildResult],
              probe: Callable[[str], None]) -> str:
    """The settle wake of ``row`` (reference §c9): the findings are the members whose results
    the requester has not had (not delivered on their own), but a silent ok answer or an exact
    ANNOUNCE_SKIP of any status (which announces nothing on its own either, reference §c1)."""
    own = [r for r in records if r.run_id in row.members]
    findings = [child_result(r) for r in own if not _announced(r)
                and not is_announce_skip(r.result_text)
                and not (r.outcome_status == OutcomeStatus.OK and _silent(r.result_text))]
    interrupted = [r.child_session_key for r in own if r.outcome_status == OutcomeStatus.TIMEOUT
                   or (r.outcome_status == OutcomeStatus.ERROR and r.outcome_error == KILLED)]
    routes = [r.route_change for r in own if r.route_change]
    wake = format_wake(Wake(tuple(findings), tuple(interrupted), tuple(routes),
                            require_visible_reply=row.yielded and not row.private))
    if wake.findings is None:
        probe("batch.announced-individually")
    else:
        if any(shown.truncated for shown in wake.findings.shown):
            probe("batch.findings-truncated")
        if wake.findings.summarized:
            probe("batch.findings-summarized")
        # Floor-sized heads within a character of the cap (issue 36's floor draw,
        # sim/world/aims.py): one to spare, none, or one more child one over.
        if wake.findings.summarized and wake.findings.floor_room in _FLOOR_EDGES:
            probe(_FLOOR_EDGES[wake.findings.floor_room])
        if wake.findings.floor_short == 1:
            probe("batch.floor-heads-one-over-cap")
    if interrupted:
        probe("batch.reconcile-interrupted")
    if len(route_section(routes)) > ROUTE_CAP:
        probe("batch.route-notices-capped")
    return wake.text


def _announced(record: RunRecord) -> bool:
    """Delivered on its own (not by this batch: a handed-over run keeps its disposition)."""
    return record.delivery_status == DeliveryStatus.DELIVERED and \
        record.delivery_disposition is None


def _silent(text: str | None) -> bool:
    return text is not None and len(text) < 64 and text.strip() in ("NO_REPLY", "ANNOUNCE_SKIP")


class Wakes:
    def __init__(self, port: Port, store: DeliveryStore, core: DeliveryCore[Any],
                 mutants: frozenset[str], perform: Callable[[Iterable[Effect]], None],
                 child_result: Callable[[RunRecord], ChildResult]) -> None:
        self.port, self.store, self.core = port, store, core
        self._perform = perform
        self._earlier_turns = mutant_names.MUTANT_WAIT_EARLIER_TURN in mutants
        self.outbox = BatchWakeCore(
            lambda row, records: wake_text(row, records, child_result, port.probe),
            self._probe, mutants, core.incarnation)
        # By batch: what its last look after a message read, the probes it hit and the claims
        # it asked (:meth:`_look`); the probes a look is hitting, while one runs.
        self._last_look: dict[str, _Look] = {}
        self._hits: list[str] | None = None

    def owns(self, message: object) -> bool:
        if isinstance(message, (BatchReady, WakeDue, WakeAckTimeout)):
            return True
        return isinstance(message, (CompletionAck, SendRejected)) and \
            message.key.startswith(SETTLE_KEY_PREFIX)

    def restore(self) -> None:
        handed = False
        for row in self.store.open_batches():
            handed |= self.run(self.outbox.restore(row, self.members(row),
                                                    self.requester(row), self.port.now_ms))
        if handed:
            self.poke()  # a member it claimed may have been the last

    def handle(self, message: object) -> None:
        batch_id = message.batch_id if isinstance(message, (BatchReady, WakeDue,
                                                            WakeAckTimeout)) else None
        if isinstance(message, (CompletionAck, SendRejected)):
            batch_id = message.run_id
        assert batch_id is not None
        row = self.store.batch(batch_id)
        if row is None:
            return
        now, members = self.port.now_ms, self.members(row)
        if isinstance(message, BatchReady):
            effects = self.outbox.check(row, members, self.requester(row), now)
        elif isinstance(message, WakeDue):
            effects = self.outbox.due(row, members, self.requester(row), now)
        elif isinstance(message, WakeAckTimeout):
            effects = self.outbox.timed_out(row, members, message, now)
        elif isinstance(message, CompletionAck):
            effects = self.outbox.acked(row, members, message, now)
        else:
            assert isinstance(message, SendRejected)
            effects = self.outbox.rejected(row, members, message, now)
        self.run(effects)
        self.poke()

    def poke(self) -> None:
        """Look at every open batch again (something may have settled); once more if that
        handed a member over."""
        now = self.port.now_ms  # (no await in between: the time cannot move)
        for _ in range(2):
            claimed = False
            for row in self.store.open_batches():
                if self.outbox.waiting(row, now) or (
                        not row.yielded and row.status == BatchStatus.DISPATCHING):
                    continue  # (a wave's wake out: its members all settled before it went)
                effects = self._look(row, now)
                if effects:  # (most looks, one after every message, find nothing to do)
                    claimed |= self.run(effects)
            if not claimed:
                return

    def _look(self, row: BatchRow, now: int) -> list[WakeEffect]:
        """``outbox.check`` of the batch as it stands, without asking it again when the batch
        reads exactly what its last look read. A look after a message changes nothing nearly
        every time (the message was another run's), yet it built every member and asked the
        outbox; in a big tree a batch's members grow with the tree, so looking at them after
        every message grew as the square of it (docs/performance-log.md, wave 13d).

        A check whose answer is claims only (or nothing) is a pure function of what it reads:
        the row, each member's record, whether its own try is out and its descendants'
        counts, the requester's incarnation, and the time only as whether the row's persisted
        deadline is still ahead (it dispatches, defers or closes otherwise, which moves the
        outbox's tokens: never repeated). The same reads give the same answer: its probes are
        hit again in their order (a run's probe counts are part of its result) and its claims
        go again (whether the core takes one is its own state's, asked anew)."""
        run_ids = self._member_ids(row)
        records = self.store.get_many(run_ids)
        in_flight, below = self.core.in_flight(run_ids), self.store.descendant_counts(run_ids)
        requester, due = self.requester(row), row.next_attempt_at_ms
        read = (row, requester, due is not None and due > now, records, in_flight, below)
        last = self._last_look.get(row.batch_id)
        if last is not None and last[0] == read:
            for name in last[1]:
                self.port.probe(name)
            return last[2]
        hits: list[str] = []
        self._hits = hits
        try:
            effects = self.outbox.check(
                row, [Member(record, flag, *counts)
                      for record, flag, counts in zip(records, in_flight, below, strict=True)],
                requester, now)
        finally:
            self._hits = None
        if all(type(effect) is ClaimMember for effect in effects):
            self._last_look[row.batch_id] = (read, tuple(hits), effects)
        else:
            self._last_look.pop(row.batch_id, None)
        return effects

    def _probe(self, name: str) -> None:
        if self._hits is not None:
            self._hits.append(name)
        self.port.probe(name)

    # -- views and effects -----------------------------------------------------------------------

    def members(self, row: BatchRow) -> list[Member]:
        store, sending = self.store, self.core.sending
        return [Member(record, sending(record.run_id), *store.unsettled_descendants(record))
                for record in store.get_many(self._member_ids(row))]

    def _member_ids(self, row: BatchRow) -> Sequence[str]:
        if self._earlier_turns and row.yielded:
            # The bug: the batch also waits for the requester's children of earlier turns.
            return [*row.members, *(r.run_id for r in self.store.spawned_by_session(row.requester)
                                    if r.required and r.created_at_ms <= row.frozen_at_ms
                                    and r.requester_turn_id not in (None, row.turn_run_id))]
        return row.members

    def requester(self, row: BatchRow) -> Requester:
        entry = self.store.session(row.requester)
        return _requester(None if entry is None or entry[1] else entry[0])

    def run(self, effects: Iterable[object]) -> bool:
        """Perform the outbox's effects in order; whether a member was handed over. A member's
        resolution (its persist, its events, its cleanup) goes to the delivery shell as one
        list, as the core's own effects do: lost-answer recovery (DEL-2) starts only after the
        whole list, never between a persisted delivery and its event."""
        handed = False
        resolving: list[Effect] = []

        def flush() -> None:
            if resolving:
                self._perform(list(resolving))
                for effect in resolving:
                    if isinstance(effect, events.RunCleanedUp):
                        # The registry keeps a short summary of every resolved run (DEL-16).
                        self.core.remember([summarize(self.store.get(effect.run_id))])
                resolving.clear()

        for effect in effects:
            if isinstance(effect, SaveBatch):
                flush()
                self.port.crash_point(CrashPoint.BEFORE_PERSIST)
                self.store.save_batch(effect.row)
                if not effect.row.open:  # never looked at again: its last look goes
                    self._last_look.pop(effect.row.batch_id, None)
            elif isinstance(effect, ClaimMember):
                flush()
                if self.core.unowned(effect.run_id):
                    continue  # refused in every state, with no effect (``unowned``)
                claimed = self.core.handle(BatchClaim(self.store.get(effect.run_id)),
                                           self.port.now_ms)
                if claimed:  # (a member whose own try decides refuses: ~8 claims a seed)
                    handed = True
                    self._perform(claimed)
            elif isinstance(effect, ReopenMember):
                flush()
                self._perform(self.core.handle(RunFinished(self.store.get(effect.run_id)),
                                               self.port.now_ms))
            elif isinstance(effect, WakeTimer):
                flush()
                self.port.set_timer(effect.delay_ms, effect.payload)
            else:
                resolving.append(effect)  # type: ignore[arg-type]
        flush()
        return handed
