"""A requester session's Trio shell: it spawns child runs into its own nursery and receives
their completions.

The nursery mirrors ownership: the session owns its children's runs, and aborting a child is
cancelling that child's scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import trio

from actors import addresses, events
from actors.child.shell import run_child
from actors.delivery.wakes.batch_wake import SETTLE_TOOL
from actors.events.private import PrivateRefused
from actors.history import ArchiveStore, Reader, read_run_history, sessions_history
from actors.messages import (
    AbortChild,
    AbortRun,
    CheckStatus,
    ChildSpec,
    CleanupSession,
    Compact,
    Completion,
    EndTurn,
    HistoryRead,
    NestedSessionDeleted,
    RecoveredAnswer,
    ResetSession,
    RunHistoryRead,
    SendRejected,
    SessionActs,
    Spawn,
    StartTurn,
    StatusRead,
    SteerChild,
    StepSpec,
    TranscriptMirror,
)
from actors.mutants import (
    MUTANT_KILL_ANNOUNCED,
    MUTANT_NESTED_DELETE_KEEPS_CHILDREN,
    MUTANT_PRIVATE_AFTER_RESET,
    MUTANT_RESET_KEEPS_CHILDREN,
    MUTANT_RESET_SPARES_GRANDCHILDREN,
    MUTANT_SESSION_QUEUE_OFF,
    MUTANT_STEER_NO_REPLACEMENT,
)
from actors.nesting.lane import Lane
from actors.nesting.session_queue import SessionQueue
from actors.nesting.spawn_limits import NO_LIMITS, SpawnLimits, session_depth
from actors.nesting.spawn_limits import refusal as spawn_refusal
from actors.permissions import DEFAULT_OWNER, Caller, refusal
from actors.private.rules import COMPLETION_TARGET_PARENT
from actors.private.rules import spawn_refusal as private_refusal
from actors.records.keys import is_subagent
from actors.records.run_record import DeliverySuppressed, RunRecord
from actors.records.send_error import SendError
from actors.requester.session import Receipt, SessionCore, child_session_key
from actors.requester.store import RequesterStore
from actors.requester.turns import receive_wake, turn_act
from actors.requester.waves import receive_wave_wake
from actors.runtime import Port
from actors.states import DeliveryStatus
from actors.yields.turns import ReplyMode, TurnCore

# Session-control messages and the action each one is (DEL-17).
CONTROL_ACTIONS: dict[type, str] = {Spawn: "spawn", AbortChild: "abort", HistoryRead: "history",
                             StatusRead: "status", CleanupSession: "cleanup",
                             RunHistoryRead: "archive-read", SteerChild: "steer"}
# A receipt the session did not take, by why (DEL-3, DEL-12).
_LATE_RECEIPT_PROBES = {Receipt.DUPLICATE: "requester.duplicate-completion",
                        Receipt.EQUAL_END: "requester.duplicate-completion",
                        Receipt.OLDER: "requester.receipt-out-of-order"}


async def run_requester(
    port: Port, session_key: str, store: RequesterStore, mutants: frozenset[str] = frozenset(),
    owners: Sequence[str] = (DEFAULT_OWNER,),
    limits: SpawnLimits = NO_LIMITS, lane: Lane | None = None,
    reply_mode: ReplyMode = ReplyMode.AUTO, sessions: SessionQueue | None = None,
) -> None:
    core = SessionCore(session_key, mutants=mutants)
    turns = TurnCore(session_key, reply_mode)
    store.save_session(session_key, turns.incarnation, deleted=False)
    spawners: dict[str, Caller] = {}  # child id -> who asked for its spawn
    specs: dict[str, ChildSpec] = {}  # child id -> its latest spawn (what a steer replaces)
    scopes: dict[str, trio.CancelScope] = {}
    run_scopes: dict[str, trio.CancelScope] = {}  # run id -> its child's scope (a reset kills)
    # Each child's latest run and session key (a key may be reused by a later child).
    runs: dict[str, tuple[str, str]] = {}
    spawned: dict[str, str] = {}  # child session key -> its latest run id
    # Child actors still alive: one may outlive its run's end (a later correction, DEL-12).
    alive: set[str] = set()
    async with trio.open_nursery() as children:
        def handle(message: Any) -> None:
            action = CONTROL_ACTIONS.get(type(message))
            if action is not None:
                # Checked against the current caller, never the person behind a report (DEL-17).
                child_id = message.child.id if isinstance(message, Spawn) else message.child_id
                reason = refusal(message.caller, action, owners, spawners, mutants)
                if reason is not None:
                    port.probe("requester.refused-report" if message.caller.person is None
                               else "requester.refused-person")
                    port.emit(events.ActionRefused(message.request, action, child_id,
                                                   str(message.caller), reason))
                    return
            if isinstance(message, (StartTurn, EndTurn, CheckStatus, ResetSession)):
                turn_act(port, turns, store, message, runs, mutants)
                if isinstance(message, ResetSession):
                    _kill_on_reset(port, store, session_key, run_scopes, runs, mutants)
            elif isinstance(message, NestedSessionDeleted):
                # The world already deleted the entry in the store (DEL-4); the session's own
                # record of it, then the kill (reference §c17). Its turns are untouched: a
                # nested session has none, and a later spawn of its key re-creates it.
                if MUTANT_NESTED_DELETE_KEEPS_CHILDREN not in mutants:
                    port.emit(events.SessionLifecycle("delete", turns.incarnation, []))
                    if _kill_on_reset(port, store, session_key, run_scopes, runs, mutants):
                        port.probe("requester.nested-delete-kills-child")
            elif isinstance(message, Spawn):
                spec = message.child
                invalid = private_refusal(spec.completion_target, spec.options,
                                          spec.expects_completion)
                if invalid is not None:  # PRV-4: refused before dispatch, nothing registered
                    port.probe("private.spawn-refused")
                    port.emit(events.SpawnRefused(spec.id, session_key, invalid))
                    return
                # A nested session spawns from its run in progress (the run it belongs to):
                # the run holding its session, not a later one queued behind it.
                nested = is_subagent(session_key)
                own_run = _own_run(store, sessions, session_key) if nested else None
                running = not nested or (own_run is not None and own_run.ended_at_ms is None
                                         and own_run.started_at_ms is not None)
                active = store.active_children(session_key)
                # A steer's replacement takes its run's place (§c18): nothing new to refuse.
                refused = None if message.replaces is not None else spawn_refusal(
                    limits, session_key, running, active, mutants)
                key = child_session_key(session_key, spec.session or spec.id)
                probe = ("requester.spawn-refused-not-running" if not running else
                         "requester.spawn-refused-depth" if refused and "depth" in refused else
                         "requester.spawn-refused-children")
                if refused is not None:
                    port.probe(probe)
                    port.emit(events.SpawnRefused(spec.id, session_key, refused))
                    return
                # One under a limit: the last slot it allows (the refusals above are at it).
                if active + 1 == limits.max_children_per_agent:
                    port.probe("requester.spawn-takes-last-child-slot")
                if session_depth(session_key) + 1 == limits.max_spawn_depth:
                    port.probe("requester.spawn-at-deepest-depth")
                run_id = store.next_run_id()
                actor = addresses.child(spec.id)
                if actor in alive:
                    # The child id runs again while its earlier actor lives: a distinct actor.
                    actor = addresses.child(f"{spec.id}@{run_id}")
                alive.add(actor)
                # One run at a time per child session: a run spawned into a busy session waits
                # for it (holding no lane slot); the lane comes once the session is free.
                behind = None
                if sessions is not None and MUTANT_SESSION_QUEUE_OFF not in mutants:
                    behind = sessions.enter(key, run_id, actor)
                granted = behind is None and (lane is None or lane.enter(run_id, actor))
                binding = turns.bind(spec.turn, run_id)
                record = RunRecord(
                    run_id=run_id,
                    child_id=spec.id,
                    child_session_key=key,
                    requester=session_key,
                    task=spec.task,
                    required=spec.expects_completion,
                    created_at_ms=port.now_ms,
                    child_session_id=f"sess-{run_id}",
                    started_at_ms=port.now_ms if granted else None,
                    requester_run_id=None if own_run is None else own_run.run_id,
                    requester_turn_id=binding.turn_run_id,
                    requester_incarnation=binding.incarnation,
                    route_change=spec.route_change,
                    private=spec.completion_target == COMPLETION_TARGET_PARENT,
                    cleanup_mode=spec.cleanup,
                )
                if record.child_session_key in spawned:
                    port.probe("requester.session-rerun")
                spawned[record.child_session_key] = run_id
                spawners[spec.id] = message.caller
                specs[spec.id] = spec
                store.register(record)
                runs[spec.id] = (run_id, record.child_session_key)
                port.emit(events.Spawned(run_id, spec.id, record.child_session_key,
                                         record.child_session_id, session_key, record.required,
                                         spec.task, binding.turn_run_id,
                                         binding.incarnation))
                if behind is not None:
                    port.probe("requester.session-queued")
                    if sessions is not None and behind != sessions.holder(key):
                        # Behind another waiting run: the order of the session's queue shows.
                        port.probe("requester.session-two-waiting")
                    port.emit(events.SessionQueued(run_id, key, behind))
                elif not granted:
                    assert lane is not None
                    port.probe("requester.lane-queued")
                    port.emit(events.LaneQueued(run_id, len(lane.running)))
                scope = scopes[spec.id] = run_scopes[run_id] = trio.CancelScope()

                async def body(child_port: Port, spec: ChildSpec = spec, run_id: str = run_id,
                               key: str = record.child_session_key,
                               scope: trio.CancelScope = scope,
                               queued: bool = behind is None and not granted,
                               session_queued: bool = behind is not None) -> None:
                    try:
                        await run_child(child_port, spec, run_id, key, store, scope, mutants,
                                        lane, queued, sessions, session_queued)
                    finally:
                        alive.discard(child_port.name)

                port.spawn(children, actor, body)
            elif isinstance(message, AbortChild):
                # A kill (§c18) of a run not yet ended stops it with its completion suppressed
                # (delivery not_required, nothing announced), and its unended descendants; of an
                # ended run, it kills nothing and changes nothing (its completion goes on).
                target = scopes.get(message.child_id)
                latest = None if target is None else store.get(runs[message.child_id][0])
                killed = latest is not None and latest.ended_at_ms is None
                port.emit(events.AbortRequested(message.child_id, target is not None, killed))
                if latest is not None and not killed:
                    port.probe("requester.kill-ended-run")
                    if latest.delivery_status == DeliveryStatus.PENDING:
                        port.probe("requester.kill-ended-completion-in-flight")
                if killed:
                    assert target is not None and latest is not None
                    _kill(port, store, latest.run_id, target, mutants)
                    _cascade(port, store, runs[message.child_id])
            elif isinstance(message, SteerChild):
                # A steer (§c18): the running run is aborted without an announce (suppressed as
                # a kill's, with its unended descendants), and a replacement run starts in the
                # same child session, announced on its own; answered first, then the spawn.
                target = scopes.get(message.child_id)
                latest = None if target is None else store.get(runs[message.child_id][0])
                steered = latest is not None and latest.ended_at_ms is None
                port.emit(events.SteerRequested(message.child_id, target is not None, steered))
                if steered:
                    assert target is not None and latest is not None
                    port.probe("requester.steer-restart")
                    if latest.started_at_ms is None:  # it still waited in line
                        port.probe("requester.steer-queued-run")
                    _kill(port, store, latest.run_id, target, mutants)
                    _cascade(port, store, runs[message.child_id])
                    if MUTANT_STEER_NO_REPLACEMENT not in mutants:
                        handle(Spawn(steered_spec(specs[message.child_id], message,
                                                  port.now_ms), message.caller,
                                     message.request, latest.run_id))
                elif latest is not None:
                    port.probe("requester.steer-ended-run")
            elif isinstance(message, AbortRun):
                # Their spawner was killed: its unfinished children go, suppressed the same way.
                cancelled = [c.child_id for c in store.direct_children(message.run_id)
                             if c.ended_at_ms is None and c.child_id in scopes]
                port.emit(events.AbortCascaded(session_key, cancelled))
                for child_id in cancelled:
                    port.probe("requester.abort-cascaded")
                    _kill(port, store, runs[child_id][0], scopes[child_id], mutants)
                    _cascade(port, store, runs[child_id])
            elif isinstance(message, Completion) and store.session_deleted(session_key):
                # The session was deleted while the completion was on its way (DEL-4): refused,
                # so the next attempt falls back to this session's own requester.
                port.probe("requester.session-gone")
                gone = SendError(f"session not found: {session_key}")
                port.emit(events.SessionRefused(message.run_id, message.key, gone.to_json()))
                port.send(addresses.GATEWAY, SendRejected(message.key, message.run_id, gone,
                                                            session_key, message.dispatch))
            elif isinstance(message, Completion) and message.source_tool == SETTLE_TOOL \
                    and message.turn_run_id is None:
                # An unfrozen wave's settle wake (actors/requester/waves.py).
                port.send(addresses.GATEWAY, attrs.evolve(receive_wave_wake(
                    port, turns, core, message, mutants), dispatch=message.dispatch))
            elif isinstance(message, Completion) and message.turn_run_id is not None:
                # A batch wake resumes the yielded turn (actors/requester/turns.py).
                port.send(addresses.GATEWAY, attrs.evolve(receive_wake(
                    port, turns, core, message, store, mutants), dispatch=message.dispatch))
            elif isinstance(message, Completion) and _other_incarnation(message, turns, mutants):
                # PRV-3: a private result bound to an earlier incarnation (a reset or delete
                # raced its hand-off) never enters this one; unanswered, the delivery actor's
                # next try finds the binding gone and closes it.
                port.probe("private.refused-by-session")
                port.emit(PrivateRefused(message.run_id, message.key, turns.incarnation))
            elif isinstance(message, Completion):
                ack, verdict = core.receive_completion(message, port.now_ms)
                if ack.accepted:
                    entry = core.transcript[-1]
                    replaced = entry.replaces
                    if replaced is not None:
                        port.probe("requester.receipt-superseded")
                    # The transcript is durable: its checkpoint of this receipt (DEL-13).
                    store.record_checkpoint(session_key, message.child_session_key,
                                            message.run_id, message.key, message.ended_at_ms)
                    port.emit(events.CompletionAccepted(
                        message.run_id, message.key, message.status, message.text,
                        message.ended_at_ms, message.generation,
                        None if replaced is None else {
                            "run_id": replaced.run_id, "key": replaced.key,
                            "ended_at": replaced.ended_at_ms}))
                else:
                    port.probe(_LATE_RECEIPT_PROBES[verdict])
                    if core.compacted_since(message.key):
                        port.probe("requester.resend-after-compaction")
                    port.emit(events.CompletionDuplicate(message.run_id, message.key,
                                                         message.ended_at_ms, verdict.value))
                port.send(addresses.GATEWAY, ack)  # back through the gateway that injected it
            elif isinstance(message, RecoveredAnswer):
                # Lost-answer recovery's answer (DEL-2): recorded once per key, like any input.
                ack, verdict = core.receive_completion(message, port.now_ms)
                if ack.accepted:
                    port.emit(events.RecoveredAccepted(message.run_id, message.key,
                                                       message.text))
                else:
                    port.emit(events.CompletionDuplicate(message.run_id, message.key,
                                                         message.ended_at_ms, verdict.value))
                port.send(addresses.GATEWAY, ack)
            elif isinstance(message, TranscriptMirror):
                # A tagged mirror of what the channel received (DEL-8): history only; it never
                # stands for the keyed input itself.
                if core.record_mirror(message, port.now_ms):
                    port.emit(events.MirrorRecorded(message.run_id, message.key,
                                                    len(message.text)))
            elif isinstance(message, Compact):
                folded = core.compact(port.now_ms)
                port.emit(events.SessionCompacted(folded))
            elif isinstance(message, HistoryRead):
                key = runs[message.child_id][1] if message.child_id in runs else \
                    child_session_key(session_key, message.child_id)
                history = sessions_history(store.transcript(key), limit=message.limit,
                                           offset=message.offset,
                                           include_tools=message.include_tools,
                                           session_key=key, mutants=mutants)
                for edge in history.edges:
                    port.probe(edge)
                port.emit(events.HistoryServed(message.child_id, message.include_tools,
                                               history.to_json(), message.limit))
            elif isinstance(message, CleanupSession) and message.child_id in runs:
                run_id, key = runs[message.child_id]
                port.emit(events.SessionCleaned(message.child_id, run_id, key,
                                                store.delete_session(key)))
            elif isinstance(message, RunHistoryRead) and message.child_id in runs:
                run_id, key = runs[message.child_id]
                # Gateway access that does not depend on the (maybe deleted) child's metadata.
                read = read_run_history(ArchiveStore(archives=tuple(store.archives(key))), key,
                                        run_id, Reader(gateway_admin=True), limit=message.limit,
                                        offset=message.offset,
                                        include_tools=message.include_tools,
                                        mutants=mutants)
                for edge in () if read.history is None else read.history.edges:
                    port.probe(edge)
                port.emit(events.ArchiveServed(
                    message.child_id, run_id, key, read.status, read.reason, read.retryable,
                    None if read.history is None else read.history.to_json()))
            elif isinstance(message, StatusRead):
                latest = store.get(runs[message.child_id][0]) if message.child_id in runs else None
                port.emit(events.StatusServed(
                    message.child_id, None if latest is None else latest.run_id,
                    None if latest is None or latest.outcome_status is None
                    else str(latest.outcome_status),
                    None if latest is None else str(latest.delivery_status)))
            elif isinstance(message, (CleanupSession, RunHistoryRead)):
                port.emit(events.RequestIgnored(message.child_id, "the child was never spawned"))
            else:
                raise TypeError(f"requester cannot handle {type(message).__name__}")

        while True:
            received = await port.receive()
            for message in received.acts if isinstance(received, SessionActs) else (received,):
                handle(message)


def _cascade(port: Port, store: RequesterStore, run: tuple[str, str]) -> None:
    """Tell the aborted run's own session to cancel the children that run spawned (only a run
    that spawned has a session actor taking requests)."""
    run_id, key = run
    if store.direct_children(run_id):
        port.send(addresses.requester(key), AbortRun(run_id))


def steered_spec(spec: ChildSpec, steer: SteerChild, now_ms: int) -> ChildSpec:
    """The replacement run a steer starts: the same child and child session, spawned now
    outside any requester turn, answering the steer's reply after its run time."""
    return attrs.evolve(spec, spawn_at_ms=now_ms, steps=(StepSpec(steer.run_ms,
                                                                  text=steer.reply),),
                        timeout_ms=None, error=None, fork_seed=None, earlier_epoch=None,
                        answer_lost=False, correction_after_ms=None, receipts=(), turn=None,
                        session=spec.session or spec.id)


def _kill(port: Port, store: RequesterStore, run_id: str, scope: trio.CancelScope,
          mutants: frozenset[str]) -> None:
    """Kill a run that has not ended: its delivery suppressed first (the registry records it
    ``not_required``; no announce, no hand-off), then its scope cancelled (it ends error
    ``subagent run terminated``)."""
    if MUTANT_KILL_ANNOUNCED not in mutants:
        store.apply(run_id, DeliverySuppressed())
    scope.cancel()


def _kill_on_reset(port: Port, store: RequesterStore, session_key: str,
                   run_scopes: dict[str, trio.CancelScope], runs: dict[str, tuple[str, str]],
                   mutants: frozenset[str]) -> int:
    """/new or a delete kills the session's child runs that have not ended (queued ones too),
    their delivery suppressed first: the registry records it ``not_required`` and nothing of
    it is handed to the new conversation. A child already ended is not killed; its completion
    follows the usual rules (reference §c17: ``stopSessionResetSubagents``). Returns how many
    it killed."""
    killed = 0
    for record in store.spawned_by_session(session_key):
        if record.ended_at_ms is not None:
            if record.required and record.cleaned_up_at_ms is None:
                port.probe("requester.reset-spares-ended-child")
            continue
        if MUTANT_RESET_KEEPS_CHILDREN in mutants or record.run_id not in run_scopes:
            continue  # the bug: the old conversation's children run on
        port.probe("requester.reset-kills-child")
        if record.started_at_ms is None:
            port.probe("requester.reset-kills-queued-child")  # it waited for the lane
        if record.yield_batch is not None:
            port.probe("requester.reset-kills-batch-member")  # its yielded batch never wakes
        store.apply(record.run_id, DeliverySuppressed())
        run_scopes[record.run_id].cancel()
        if any(c.ended_at_ms is None for c in store.direct_children(record.run_id)):
            port.probe("requester.reset-cascades")  # its own children are still running
            if MUTANT_RESET_SPARES_GRANDCHILDREN in mutants:
                killed += 1
                continue  # the bug: the killed run's own children run on
        _cascade(port, store, (record.run_id, record.child_session_key))
        killed += 1
    return killed


def _own_run(store: RequesterStore, sessions: SessionQueue | None, session_key: str
             ) -> RunRecord | None:
    """The nested session's run in progress: the run holding its session (a run queued behind
    it cannot spawn), else its latest run."""
    holder = None if sessions is None else sessions.holder(session_key)
    return store.latest_run(session_key) if holder is None else store.get(holder)


def _other_incarnation(completion: Completion, turns: TurnCore, mutants: frozenset[str]) -> bool:
    if not completion.private or completion.incarnation is None:
        return False
    if MUTANT_PRIVATE_AFTER_RESET in mutants:
        return False  # the bug: whatever incarnation the session is in takes it
    return completion.incarnation != turns.incarnation or turns.deleted
