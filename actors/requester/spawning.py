"""A requester session's children: spawning them (checked against the private rules, PRV-4, and
the spawn limits, reference §c8), killing (§c18), steering, the cascade of a kill to the killed
run's own children, and the kills of a reset or a nested session's delete (§c17). Plain functions
of the session's actor (``actor.py``), called from its shell's table (``shell.py``).
"""

from __future__ import annotations

from typing import Any

import attrs
import trio

from actors import addresses, events
from actors.child.shell import run_child
from actors.messages import (
    AbortChild,
    AbortRun,
    ChildSpec,
    NestedSessionDeleted,
    ResetSession,
    Spawn,
    SteerChild,
    StepSpec,
)
from actors.mutants import (
    MUTANT_KILL_ANNOUNCED,
    MUTANT_KILL_NOT_REQUIRED,
    MUTANT_NESTED_DELETE_KEEPS_CHILDREN,
    MUTANT_RESET_KEEPS_CHILDREN,
    MUTANT_RESET_SPARES_GRANDCHILDREN,
    MUTANT_SESSION_QUEUE_OFF,
    MUTANT_STEER_NO_REPLACEMENT,
)
from actors.nesting.session_queue import SessionQueue
from actors.nesting.spawn_limits import refusal as spawn_refusal
from actors.nesting.spawn_limits import session_depth
from actors.private.rules import COMPLETION_TARGET_PARENT
from actors.private.rules import spawn_refusal as private_refusal
from actors.records.keys import is_subagent
from actors.records.run_record import DeliverySuppressed, RunRecord
from actors.requester.actor import Requester, refused
from actors.requester.session import child_session_key
from actors.requester.store import RequesterStore
from actors.requester.turns import turn_act
from actors.runtime import Port
from actors.states import DeliveryStatus


def turn_message(req: Requester, message: Any) -> None:
    """A turn starts or ends, a status check, or a reset (``requester/turns.py``); a reset
    kills the session's unended children."""
    turn_act(req.port, req.turns, req.store, message, req.runs, req.mutants)
    if isinstance(message, ResetSession):
        _kill_on_reset(req.port, req.store, req.session_key, req.run_scopes, req.runs, req.mutants)


def nested_session_deleted(req: Requester, message: NestedSessionDeleted) -> None:
    # The world already deleted the entry in the store (DEL-4); the session's own
    # record of it, then the kill (reference §c17). Its turns are untouched: a
    # nested session has none, and a later spawn of its key re-creates it.
    if MUTANT_NESTED_DELETE_KEEPS_CHILDREN not in req.mutants:
        req.port.emit(events.SessionLifecycle("delete", req.turns.incarnation, []))
        if _kill_on_reset(req.port, req.store, req.session_key, req.run_scopes, req.runs,
                          req.mutants):
            req.port.probe("requester.nested-delete-kills-child")


def spawn(req: Requester, message: Spawn) -> None:
    admitted = _admitted(req, message)
    if admitted is not None:
        _start_run(req, message, *admitted)


def _admitted(req: Requester, message: Spawn) -> tuple[RunRecord | None, str] | None:
    """The spawn's own run (a nested session's run in progress) and its child session key, or
    None when it is refused (traced): by the private rules or by the spawn limits."""
    spec = message.child
    invalid = private_refusal(spec.completion_target, spec.options,
                              spec.expects_completion)
    if invalid is not None:  # PRV-4: refused before dispatch, nothing registered
        req.port.probe("private.spawn-refused")
        req.port.emit(events.SpawnRefused(spec.id, req.session_key, invalid))
        return None
    # A nested session spawns from its run in progress (the run it belongs to):
    # the run holding its session, not a later one queued behind it.
    nested = is_subagent(req.session_key)
    own_run = _own_run(req.store, req.sessions, req.session_key) if nested else None
    running = not nested or (own_run is not None and own_run.ended_at_ms is None
                             and own_run.started_at_ms is not None)
    active = req.store.active_children(req.session_key)
    # A steer's replacement takes its run's place (§c18): nothing new to refuse.
    over_limit = None if message.replaces is not None else spawn_refusal(
        req.limits, req.session_key, running, active, req.mutants)
    key = child_session_key(req.session_key, spec.session or spec.id)
    probe = ("requester.spawn-refused-not-running" if not running else
             "requester.spawn-refused-depth" if over_limit and "depth" in over_limit else
             "requester.spawn-refused-children")
    if over_limit is not None:
        req.port.probe(probe)
        req.port.emit(events.SpawnRefused(spec.id, req.session_key, over_limit))
        return None
    # One under a limit: the last slot it allows (the refusals above are at it).
    if active + 1 == req.limits.max_children_per_agent:
        req.port.probe("requester.spawn-takes-last-child-slot")
    if session_depth(req.session_key) + 1 == req.limits.max_spawn_depth:
        req.port.probe("requester.spawn-at-deepest-depth")
    return own_run, key


def _start_run(req: Requester, message: Spawn, own_run: RunRecord | None, key: str) -> None:
    """Register the spawned run, queue it behind its session or the lane if it must wait, and
    start its child actor in the session's nursery."""
    spec = message.child
    run_id = req.store.next_run_id()
    actor = addresses.child(spec.id)
    if actor in req.alive:
        # The child id runs again while its earlier actor lives: a distinct actor.
        actor = addresses.child(f"{spec.id}@{run_id}")
    req.alive.add(actor)
    # One run at a time per child session: a run spawned into a busy session waits
    # for it (holding no lane slot); the lane comes once the session is free.
    behind = None
    if req.sessions is not None and MUTANT_SESSION_QUEUE_OFF not in req.mutants:
        behind = req.sessions.enter(key, run_id, actor)
    granted = behind is None and (req.lane is None or req.lane.enter(run_id, actor))
    binding = req.turns.bind(spec.turn, run_id)
    record = RunRecord(
        run_id=run_id,
        child_id=spec.id,
        child_session_key=key,
        requester=req.session_key,
        task=spec.task,
        required=spec.expects_completion,
        created_at_ms=req.port.now_ms,
        child_session_id=f"sess-{run_id}",
        started_at_ms=req.port.now_ms if granted else None,
        requester_run_id=None if own_run is None else own_run.run_id,
        requester_turn_id=binding.turn_run_id,
        requester_incarnation=binding.incarnation,
        route_change=spec.route_change,
        private=spec.completion_target == COMPLETION_TARGET_PARENT,
        cleanup_mode=spec.cleanup,
    )
    if record.child_session_key in req.spawned:
        req.port.probe("requester.session-rerun")
    req.spawned[record.child_session_key] = run_id
    req.spawners[spec.id] = message.caller
    req.specs[spec.id] = spec
    req.store.register(record)
    req.runs[spec.id] = (run_id, record.child_session_key)
    req.port.emit(events.Spawned(run_id, spec.id, record.child_session_key,
                                 record.child_session_id, req.session_key, record.required,
                                 spec.task, binding.turn_run_id,
                                 binding.incarnation))
    if behind is not None:
        req.port.probe("requester.session-queued")
        if req.sessions is not None and behind != req.sessions.holder(key):
            # Behind another waiting run: the order of the session's queue shows.
            req.port.probe("requester.session-two-waiting")
        req.port.emit(events.SessionQueued(run_id, key, behind))
    elif not granted:
        assert req.lane is not None
        req.port.probe("requester.lane-queued")
        req.port.emit(events.LaneQueued(run_id, len(req.lane.running)))
    scope = req.scopes[spec.id] = req.run_scopes[run_id] = trio.CancelScope()

    async def body(child_port: Port, spec: ChildSpec = spec, run_id: str = run_id,
                   key: str = record.child_session_key,
                   scope: trio.CancelScope = scope,
                   queued: bool = behind is None and not granted,
                   session_queued: bool = behind is not None) -> None:
        try:
            await run_child(child_port, spec, run_id, key, req.store, scope, req.mutants,
                            req.lane, queued, req.sessions, session_queued, req.restarts,
                            req.sizer)
        finally:
            req.alive.discard(child_port.name)

    req.port.spawn(req.children, actor, body)


def abort_child(req: Requester, message: AbortChild) -> None:
    # A kill (§c18) of a run not yet ended stops it with its completion suppressed
    # (nothing announced; its row keeps its delivery status, pending for a required run,
    # as OpenClaw 2026.9.6's kill path does), and its unended descendants; of an ended
    # run, it kills nothing and changes nothing (its completion goes on).
    target = req.scopes.get(message.child_id)
    latest = None if target is None else req.store.get(req.runs[message.child_id][0])
    killed = latest is not None and latest.ended_at_ms is None
    req.port.emit(events.AbortRequested(message.child_id, target is not None, killed))
    if latest is not None and not killed:
        req.port.probe("requester.kill-ended-run")
        if latest.owes:
            req.port.probe("requester.kill-ended-completion-in-flight")
    if killed:
        assert target is not None and latest is not None
        _kill(req.port, req.store, latest.run_id, target, req.mutants, keep_status=True)
        _cascade(req.port, req.store, req.runs[message.child_id], keep_status=True)


def steer_child(req: Requester, message: SteerChild) -> None:
    # A steer (§c18): the running run is aborted without an announce (suppressed as
    # a kill's, with its unended descendants), and a replacement run starts in the
    # same child session, announced on its own; answered first, then the spawn.
    target = req.scopes.get(message.child_id)
    latest = None if target is None else req.store.get(req.runs[message.child_id][0])
    steered = latest is not None and latest.ended_at_ms is None
    req.port.emit(events.SteerRequested(message.child_id, target is not None, steered))
    if steered:
        assert target is not None and latest is not None
        req.port.probe("requester.steer-restart")
        if latest.started_at_ms is None:  # it still waited in line
            req.port.probe("requester.steer-queued-run")
        _kill(req.port, req.store, latest.run_id, target, req.mutants)
        _cascade(req.port, req.store, req.runs[message.child_id])
        if MUTANT_STEER_NO_REPLACEMENT not in req.mutants:
            replacement = Spawn(steered_spec(req.specs[message.child_id], message,
                                             req.port.now_ms), message.caller,
                                message.request, latest.run_id)
            if not refused(req, replacement):  # checked as any spawn is
                spawn(req, replacement)
    elif latest is not None:
        req.port.probe("requester.steer-ended-run")


def abort_run(req: Requester, message: AbortRun) -> None:
    # Their spawner was killed: its unfinished children go, suppressed the same way. A child
    # that has ended is not killed, but the stop goes on below it: OpenClaw's tree kill visits
    # an ended run's children too (``killSubagentRunTree`` marks an ended node's descendants
    # for the walk all the same), so its own unfinished children go as well (seed 49388).
    children = req.store.direct_children(message.run_id)
    cancelled = [c.child_id for c in children
                 if c.ended_at_ms is None and c.child_id in req.scopes]
    req.port.emit(events.AbortCascaded(req.session_key, cancelled))
    for child_id in cancelled:
        req.port.probe("requester.abort-cascaded")
        _kill(req.port, req.store, req.runs[child_id][0], req.scopes[child_id], req.mutants,
              message.keep_status)
        _cascade(req.port, req.store, req.runs[child_id], message.keep_status)
    for ended in children:
        if ended.ended_at_ms is not None:
            _cascade(req.port, req.store, (ended.run_id, ended.child_session_key),
                     message.keep_status)


def _cascade(port: Port, store: RequesterStore, run: tuple[str, str],
             keep_status: bool = False) -> None:
    """Tell the aborted run's own session to cancel the children that run spawned (only a run
    that spawned has a session actor taking requests). ``keep_status``: the stop is a kill's,
    whose tree kill passes its own (unset) ``suppressTaskDelivery`` down to every run it
    stops (OpenClaw's ``killSubagentRunTree``)."""
    run_id, key = run
    if store.direct_children(run_id):
        port.send(addresses.requester(key), AbortRun(run_id, keep_status))


def steered_spec(spec: ChildSpec, steer: SteerChild, now_ms: int) -> ChildSpec:
    """The replacement run a steer starts: the same child and child session, spawned now
    outside any requester turn, answering the steer's reply after its run time."""
    return attrs.evolve(spec, spawn_at_ms=now_ms, steps=(StepSpec(steer.run_ms,
                                                                  text=steer.reply),),
                        timeout_ms=None, error=None, fork_seed=None, earlier_epoch=None,
                        answer_lost=False, correction_after_ms=None, receipts=(), turn=None,
                        session=spec.session or spec.id)


def _kill(port: Port, store: RequesterStore, run_id: str, scope: trio.CancelScope,
          mutants: frozenset[str], keep_status: bool = False) -> None:
    """Kill a run that has not ended: its delivery suppressed first (no announce, no hand-off;
    a kill's row keeps its status, ``pending`` for a required run, where a steer's records
    ``not_required``), then its scope cancelled (it ends error ``subagent run terminated``)."""
    if MUTANT_KILL_ANNOUNCED not in mutants:
        status = store.get(run_id).delivery_status
        if not keep_status or MUTANT_KILL_NOT_REQUIRED in mutants:
            status = DeliveryStatus.NOT_REQUIRED  # (the mutant: the older label on a kill)
        store.apply(run_id, DeliverySuppressed(status))
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
