"""The delivery actor's Trio shell: the registry core plus its durable store.

Every effect the core returns is performed in order, and before each one the hosting process may
die (a crash point named after the effect). What survives is what the store holds; a new
incarnation restores from it.

The shell also decides what the core cannot: how a completion reads (the announce formatter) and
what kind of requester reads it, and where a top-level requester's completion goes (its channel
target, resolved by actors/gateway/routing.py as the completion is handed to the gateway).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from actors import addresses, announce, events
from actors.child.frozen import cap_frozen_result
from actors.delivery.edge import AckTimeout, Effect, OperatorAsked, Persist, Send, StartTimer
from actors.delivery.payload import child_result as child_result
from actors.delivery.payload import findings_section as findings_section
from actors.delivery.payload import probed_render as probed_render
from actors.delivery.payload import render as render
from actors.delivery.payload import requester_kind as requester_kind
from actors.delivery.payload import transcript_path as transcript_path
from actors.delivery.payload import with_findings as with_findings
from actors.delivery.recovery import (
    RecoveryCore,
    RecoveryDue,
    RecoveryEffect,
    RecoveryTimeout,
    RecoveryTimer,
    RecoveryWrite,
    final_answer,
    needs_recovery,
)
from actors.delivery.store import DeliveryStore, fallback_route, private_hold_in
from actors.delivery.sweeper import SweepDue, SweeperShell
from actors.delivery.table import DeliveryCore
from actors.delivery.wakes.delivery_wakes import Wakes
from actors.delivery.wakes.delivery_waves import Waves
from actors.gateway import routing
from actors.messages import (
    ChildEnded,
    Completion,
    CompletionAck,
    OperatorRequest,
    RecoveredAnswer,
    SendRejected,
    TurnSettled,
)
from actors.mutants import (
    MUTANT_NESTED_TOP_LEVEL_INSTRUCTION,
    MUTANT_NO_ANSWER_RECOVERY,
    MUTANT_PAYLOAD_DROPPED_EARLY,
    MUTANT_PRIVATE_USAGE_STATS,
    MUTANT_RECOVERY_ONE_SHORT,
    MUTANT_RECOVERY_UNBOUNDED,
    MUTANT_SHARED_CAP_CUT_AT_LIMIT,
    MUTANT_STALE_FINDINGS,
)
from actors.nesting import findings
from actors.records import retry
from actors.records.keys import is_recovery_key, is_subagent
from actors.records.run_record import Delivered, GaveUp, RunRecord
from actors.runtime import Crash, Port
from actors.states import CrashPoint, OutcomeStatus, Waiting

# What an in-flight run was waiting for when its process died there.
_CRASH_IN_WAIT = {Waiting.ACK: "delivery.crash-in-ack-wait",
                  Waiting.TRY_WAIT: "delivery.crash-in-try-wait",
                  Waiting.ATTEMPT_WAIT: "delivery.crash-in-backoff"}


_NO_ROUTING = routing.SessionRouting()  # a session without routing facts (frozen: shared)


def routed(completion: Completion, routes: Mapping[str, routing.SessionRouting],
           mutants: frozenset[str], probe: Callable[[str], None]) -> Completion:
    """The agent call for ``completion``: a top-level requester's gets the channel target its
    session's routing resolves to (DEL-5; none: ``deliver=false``); a nested requester's is an
    internal injection (DEL-4)."""
    if requester_kind(completion.requester) is announce.RequesterKind.NESTED:
        return completion
    if completion.source_tool == "subagent_settle":
        return completion  # a batch wake is internal: the requester's reply is what goes out
    if completion.private:
        return completion  # the spawning session's own input: never on a channel (PRV-1)
    session = routes.get(completion.requester)
    resolution = routing.resolve(_NO_ROUTING if session is None else session, mutants)
    for name in resolution.probes:
        probe(name)
    return attrs.evolve(completion, target=resolution.target)


class _Recovery:
    """Lost-answer recovery beside the delivery core (DEL-2, actors/delivery/recovery.py): which
    ended runs are silent, and the recovery core that runs once their (no output) is delivered."""

    def __init__(self, port: Port, store: DeliveryStore, mutants: frozenset[str],
                 kind: Callable[[str], announce.RequesterKind]) -> None:
        self.port, self.store = port, store
        self.off = MUTANT_NO_ANSWER_RECOVERY in mutants
        self.drop_payload = MUTANT_PAYLOAD_DROPPED_EARLY in mutants  # a DEL-16 bug, not DEL-2's
        self.silent: dict[str, RunRecord] = {}
        self.due: list[RunRecord] = []  # recorded delivered: their recovery starts
        self.core = RecoveryCore(
            # The answer re-read from the transcript is frozen as the run's end freezes it
            # (capped, reference §c14).
            lambda key, run_id: cap_frozen_result(
                final_answer(store.run_transcript(key, run_id) or []), mutants),
            # The recovered answer alone: the findings went with the run's first announcement.
            store.get, lambda record: render(attrs.evolve(record, findings_text=None),
                                             kind(record.requester)), port.probe,
            unbounded=MUTANT_RECOVERY_UNBOUNDED in mutants,
            short=MUTANT_RECOVERY_ONE_SHORT in mutants)

    def note(self, records: Iterable[RunRecord]) -> None:
        for record in records:
            if not self.off and record.ended_at_ms is not None and needs_recovery(record) \
                    and record.owes:
                self.silent[record.run_id] = record

    def delivering(self, run_id: str) -> None:
        """The run is about to be recorded delivered: its recovery becomes durable first. A
        yield batch may deliver a member (in its wake) before this actor saw the member end:
        the store's record decides then."""
        record = self.silent.pop(run_id, None)
        if record is None and not self.off:
            stored = self.store.get(run_id)
            if stored.ended_at_ms is not None and needs_recovery(stored):
                record = stored
        if record is not None:
            self.store.open_recovery(run_id)
            self.due.append(record)

    def resume(self) -> list[RecoveryEffect]:
        effects: list[RecoveryEffect] = []
        for run_id, attempts in self.store.open_recoveries():
            effects += self.core.start(self.store.get(run_id), attempts)
        return effects

    def started(self) -> list[RecoveryEffect]:
        effects: list[RecoveryEffect] = []
        while self.due:
            effects += self.core.start(self.due.pop(0))
        return effects

    def perform(self, effects: Iterable[RecoveryEffect]) -> None:
        port = self.port
        for effect in effects:
            if isinstance(effect, RecoveryWrite):
                port.crash_point(CrashPoint.BEFORE_PERSIST)
                self.store.save_recovery(effect.run_id, effect.attempts, effect.outcome)
            elif isinstance(effect, RecoveredAnswer):
                port.crash_point(CrashPoint.BEFORE_SEND)
                port.send(addresses.GATEWAY, effect)
            elif isinstance(effect, RecoveryTimer):
                port.set_timer(effect.delay_ms, effect.payload)
            else:
                port.emit(effect)

    def handle(self, message: object) -> bool:
        """Take ``message`` if it is the recovery's (its timers, its hand-off's answers)."""
        if isinstance(message, RecoveryDue):
            self.perform(self.core.due(message))
        elif isinstance(message, RecoveryTimeout):
            self.perform(self.core.failed(message))
        elif isinstance(message, CompletionAck) and is_recovery_key(message.key):
            self.perform(self.core.acked(message))
        elif isinstance(message, SendRejected) and is_recovery_key(message.key):
            self.perform(self.core.failed(message))
        else:
            return False
        return True


class _AckTimers:
    """Starts the delivery's timers. An ack timeout asks, when due, whether its transport try
    still waits for its answer (a try's token is never reused in an incarnation): once the try
    is over (answered, refused, superseded or its run resolved), the kernel drops it unseen, as
    an implementation clears a timeout it no longer needs, where it would have found its try
    gone (the table's stale timer) and cost the run a step that does nothing."""

    def __init__(self, port: Port, awaits_ack: Callable[[str, int], bool],
                 sweeper: SweeperShell) -> None:
        self.port, self.awaits_ack = port, awaits_ack
        self.sweeper = sweeper  # the retention sweeper's timer (actors/delivery/sweeper.py)
        self._due: dict[int, str] = {}  # instant -> the run whose try or attempt is due then

    def start(self, effect: StartTimer) -> None:
        payload, wanted = effect.payload, None
        if isinstance(payload, AckTimeout):
            wanted = functools.partial(self.awaits_ack, payload.run_id, payload.token)
        else:
            self._note_due(self.port.now_ms + effect.delay_ms, payload.run_id)
        self.port.set_timer(effect.delay_ms, payload, wanted)

    def _note_due(self, at_ms: int, run_id: str) -> None:
        """Probe two runs' tries or attempts due in one instant (issue 36's tie draws: the
        kernel's order of simultaneous timers decides which goes first)."""
        now = self.port.now_ms
        for past in [t for t in self._due if t < now]:
            del self._due[past]
        other = self._due.setdefault(at_ms, run_id)
        if other != run_id:
            self.port.probe("delivery.tries-due-in-one-instant")


async def run_delivery(port: Port, store: DeliveryStore, mutants: frozenset[str],
                       routes: Mapping[str, routing.SessionRouting] | None = None,
                       expose: Callable[[Callable[[], dict[str, Any]]], None] | None = None,
                       archive_after_ms: int = 0) -> None:
    """``expose`` hands the harness a way to dump this incarnation's memory (DEL-16);
    ``archive_after_ms`` is archiveAfterMinutes (0: never; actors/delivery/sweeper.py)."""
    routes = routes or {}

    kind = requester_kind
    if MUTANT_NESTED_TOP_LEVEL_INSTRUCTION in mutants:
        def kind(session_key: str) -> announce.RequesterKind:
            return announce.RequesterKind.TOP_LEVEL_COMPLETION
    core = _delivery_core(port, store, mutants, kind)
    recovery = _Recovery(port, store, mutants, kind)
    core.remember(store.summaries())
    if expose is not None:
        expose(core.memory)
    port.emit(events.DeliveryStarted(port.incarnation))
    records = list(store.open_deliveries())
    recovery.note(records)
    # Runs cleaned up while handling a message: their requesters' unfrozen waves may be due.
    cleaned: list[str] = []
    acks = _AckTimers(port, core.awaits_ack, SweeperShell(port, store, mutants,
                                                               archive_after_ms))
    _perform(port, store, core.restore(records, port.now_ms), routes, mutants, recovery,
             cleaned, acks)
    acks.sweeper.restore()
    recovery.perform(recovery.resume())
    wakes = Wakes(port, store, core, mutants,
                  lambda effects: _perform(port, store, effects, routes, mutants, recovery,
                                           cleaned, acks),
                  child_result)
    wakes.restore()
    waves = Waves(wakes, mutants)
    waves.restore()
    acks.sweeper.arm()  # a wake or wave restored may have suspended runs
    while True:
        try:
            message = await port.receive()
        except Crash:
            # The process dies while it waits: name what its in-flight runs were waiting for.
            for waiting in dict.fromkeys(core.waits()):
                if waiting in _CRASH_IN_WAIT:
                    port.probe(_CRASH_IN_WAIT[waiting])
            raise
        if wakes.owns(message):
            # a yield batch's: its wake (actors/delivery/wakes/delivery_wakes.py)
            wakes.handle(message)
            _waves(waves, cleaned)
            acks.sweeper.arm()
            continue
        if recovery.handle(message):
            _waves(waves, cleaned)
            acks.sweeper.arm()
            continue
        effects: list[Effect] = []
        if isinstance(message, SweepDue):  # suspended results past their 7 days, archives
            acks.sweeper.due(message, functools.partial(
                _perform, port, store, routes=routes, mutants=mutants, recovery=recovery,
                cleaned=cleaned, acks=acks))
        else:
            if isinstance(message, ChildEnded):  # (only the archive mutant notes it here)
                acks.sweeper.ended(store.get(message.run_id))
            effects = _core_effects(port, store, core, recovery, waves, message)
        _perform(port, store, effects, routes, mutants, recovery, cleaned, acks)
        if store.has_open_batches():
            wakes.poke()  # a member or a member's descendant may have settled
        _waves(waves, cleaned)
        acks.sweeper.arm()  # last: a batch closed or a wave just now may have suspended runs


def _delivery_core(port: Port, store: DeliveryStore, mutants: frozenset[str],
                   kind: Callable[[str], announce.RequesterKind]
                   ) -> DeliveryCore[announce.RequesterKind]:
    """The delivery core of this incarnation, with what it asks of the world: the backoff's
    jitter (a choice), the store's checkpoints, findings, batch owners and private holds."""
    def jitter() -> float:
        return port.choose("jitter", retry.JITTER_STEPS) / (retry.JITTER_STEPS - 1)

    def checkpoint(record: RunRecord, any_run: bool) -> tuple[str, int] | None:
        # The session the completion goes to now holds the checkpoint: the requester's, or
        # (once that nested session was deleted, DEL-4) the fallback's. A deleted session's
        # checkpoint proves nothing: the transcript that took the completion is gone, so the
        # completion is sent again to the fallback (docs/nesting.md).
        reader = fallback_route(store, record)
        if reader is None:
            return None
        run_id = None if any_run else record.run_id
        found = store.checkpoint(reader, record.child_session_key, run_id)
        if found is None and reader == record.requester and is_subagent(reader):
            # A completion the fallback took while its nested requester was gone is
            # checkpointed there, also after a new run took that session key again and the
            # route leads back to it (seed 28302): the fallback, one level up, still has it.
            owner = store.latest_run(reader)
            if owner is not None and owner.requester != reader:
                found = store.checkpoint(owner.requester, record.child_session_key, run_id)
        return found

    def findings_of(record: RunRecord) -> str | None:
        children = store.direct_children(record.run_id)
        if not children and MUTANT_STALE_FINDINGS not in mutants:
            return None
        chosen = findings.select(record.run_id, children, store.latest_run, mutants,
                                 lambda: store.spawned_by_session(record.child_session_key))
        if chosen.rows:
            port.probe("delivery.findings")
        if chosen.stale:
            port.probe("delivery.findings-stale-row")
        if chosen.superseded:
            port.probe("delivery.findings-older-row")
        if any(row.outcome_status != OutcomeStatus.OK for row in chosen.rows):
            port.probe("delivery.findings-failed-child")
        return findings_section(chosen.rows)

    render_probed = probed_render(port.probe, MUTANT_PRIVATE_USAGE_STATS in mutants,
                                  MUTANT_SHARED_CAP_CUT_AT_LIMIT in mutants)
    return DeliveryCore(port.incarnation, jitter, render_probed, kind,
                        mutants, port.probe, pending_descendants=store.pending_descendants,
                        checkpoint=checkpoint, route=functools.partial(fallback_route, store),
                        findings=findings_of, batch_of=store.batch_owner,
                        private_hold=functools.partial(private_hold_in, store))


def _core_effects(port: Port, store: DeliveryStore, core: DeliveryCore[announce.RequesterKind],
                  recovery: _Recovery, waves: Waves, message: Any) -> list[Effect]:
    """What the core makes of a message no wake or recovery took."""
    if isinstance(message, ChildEnded):
        record = store.get(message.run_id)
        recovery.note((record,))
        if store.direct_children(record.run_id) and not store.pending_descendants(record):
            port.probe("delivery.children-ended-first")  # its descendants settled first
        effects = core.child_ended(record, port.now_ms)
    elif isinstance(message, OperatorRequest):
        # A redrive works from the row the store retained, never from the core's memory.
        record = store.get(message.run_id)
        effects = core.handle(OperatorAsked(record, message.action, message.request),
                              port.now_ms)
        if any(isinstance(effect, events.DeliveryRedriven) for effect in effects):
            recovery.note((record,))  # DEL-2: a redriven (no output) is recovered too
    elif isinstance(message, TurnSettled):
        # The turn finished or was abandoned: its retained private results go on (PRV-5).
        effects = [effect for record in store.retained_private(message.turn_run_id)
                   for effect in core.child_ended(record, port.now_ms)]
        waves.turn_finished(message.turn_run_id)  # its children may make waves now
    else:
        effects = core.handle(message, port.now_ms)
    return effects


def _waves(waves: Waves, cleaned: list[str]) -> None:
    """After a message: the waves of the requesters whose runs were cleaned up meanwhile (or,
    in a newer generation, resolved again)."""
    for run_id in cleaned:
        waves.settled(run_id)
    cleaned.clear()
    waves.check()


def _perform(port: Port, store: DeliveryStore, effects: Iterable[Effect],
             routes: Mapping[str, routing.SessionRouting], mutants: frozenset[str],
             recovery: _Recovery, cleaned: list[str], acks: _AckTimers) -> None:
    try:
        _perform_each(port, store, effects, routes, mutants, recovery, cleaned, acks)
        if recovery.due:  # (rarely: a silent run was just recorded delivered)
            recovery.perform(recovery.started())
    except Crash as crash:
        if crash.point in _CRASH_PROBES:
            port.probe(_CRASH_PROBES[crash.point])
        raise


# Where the process died on its way through the effects, for the rare points.
_CRASH_PROBES: dict[str, str] = {
    CrashPoint.BEFORE_SEND: "delivery.crash-before-send",
    CrashPoint.BEFORE_RECORD_DELIVERED: "delivery.crash-between-send-and-record",
    CrashPoint.BEFORE_CLAIM_ATTEMPTED: "delivery.crash-before-claim-attempted",
    CrashPoint.BEFORE_SAVE_EVIDENCE: "delivery.crash-before-save-evidence",
    CrashPoint.BEFORE_CLEAR_CLAIM: "delivery.crash-between-evidence-and-claim",
}


def _perform_each(port: Port, store: DeliveryStore, effects: Iterable[Effect],
                  routes: Mapping[str, routing.SessionRouting], mutants: frozenset[str],
                  recovery: _Recovery, cleaned: list[str], acks: _AckTimers) -> None:
    for effect in effects:
        if isinstance(effect, Persist):
            change = effect.change
            port.crash_point(CrashPoint.BEFORE_PERSIST)
            # Name the point after what is about to become durable, for scripted crashes.
            if change.crash_point is not None:
                port.crash_point(change.crash_point)
            if isinstance(change, Delivered):
                recovery.delivering(effect.run_id)  # DEL-2: (no output) delivered
            store.apply(effect.run_id, change, effect.known)
            acks.sweeper.persisted(effect.run_id, change)
            if isinstance(change, (Delivered, GaveUp)) \
                    and store.get(effect.run_id).cleaned_up_at_ms is not None:
                # A newer generation (DEL-12) resolved: no second cleanup follows, yet a wave
                # that waited for it is due a look now (seed 3195).
                cleaned.append(effect.run_id)
            if isinstance(change, GaveUp):
                recovery.silent.pop(effect.run_id, None)  # never delivered: nothing to recover
                if recovery.drop_payload:
                    store.forget_result(effect.run_id)
        elif isinstance(effect, Send):
            port.crash_point(CrashPoint.BEFORE_SEND)
            # Every completion is an agent call through the gateway (actors/gateway/shell.py).
            port.send(addresses.GATEWAY, routed(effect.completion, routes, mutants, port.probe))
        elif isinstance(effect, StartTimer):
            acks.start(effect)
        else:
            if isinstance(effect, events.RunCleanedUp):
                cleaned.append(effect.run_id)
            port.emit(effect)
