"""A requester session's turns, as its shell performs them: a turn opens, ends (finishing, or
yielding: the turn's required children are frozen into one batch whose wake the delivery side
owns), checks a child's status, or the session is reset or deleted; and a batch wake resumes the
yielded turn. The session store keeps the session's incarnation and whether it is deleted (what
the delivery side reads before a wake)."""

from __future__ import annotations

from actors import addresses, events
from actors.events import batches as batch_events
from actors.messages import (
    BatchReady,
    CheckStatus,
    Completion,
    CompletionAck,
    EndTurn,
    ResetSession,
    StartTurn,
    TurnSettled,
)
from actors.mutants import (
    MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL,
    MUTANT_STATUS_CHECK_CONSUMES_PRIVATE,
    MUTANT_WAKE_INTO_BUSY_TURN,
)
from actors.records.batch_record import BatchRow, BatchStatus, agent_id
from actors.records.run_record import Delivered, YieldFrozen
from actors.requester.session import SessionCore
from actors.requester.store import RequesterStore
from actors.runtime import Port
from actors.yields.turns import ReplyMode, Turn, TurnCore, TurnEnd, TurnState

# In message_tool mode, how often the resumed turn's model forgets to call the message tool
# (one in MISSED_VISIBLE_REPLY): it then leaves the user without a visible reply.
MISSED_VISIBLE_REPLY = 4
TURN_PENDING = "requester_turn_pending"


def turn_act(port: Port, turns: TurnCore, store: RequesterStore,
              act: StartTurn | EndTurn | CheckStatus | ResetSession,
              runs: dict[str, tuple[str, str]], mutants: frozenset[str] = frozenset()) -> None:
    """A turn opens or ends, checks a child's status, or the session is reset or deleted; the
    session store keeps the incarnation (what the delivery side reads before a wake)."""
    if isinstance(act, StartTurn):
        before = turns.open_turn
        turn = turns.start(act.turn)
        if before is not None:  # a turn still open when the next starts has finished
            settled(port, store, before)
        store.save_turn(turn.run_id, turn.state, port.now_ms)
        port.emit(events.TurnStarted(act.turn, turn.run_id, turn.incarnation,
                                     turns.reply_mode.value))
    elif isinstance(act, EndTurn):
        ended = turns.end(act.turn, TurnEnd(act.how))
        if ended is not None and ended.checked and act.how == TurnEnd.YIELD:
            port.probe("turns.status-check-before-yield")
            if any(store.get(run_id).private for run_id in ended.checked):
                port.probe("private.status-check-before-yield")  # it consumes nothing (PRV-6)
        if ended is not None:
            port.emit(events.TurnEnded(ended.run_id, act.how, list(ended.children)))
            if act.how == TurnEnd.YIELD:
                freeze(port, store, turns.session_key, ended,
                       MUTANT_STATUS_CHECK_CONSUMES_PRIVATE in mutants)
            settled(port, store, ended)
    elif isinstance(act, CheckStatus):
        run_id = runs[act.child_id][0] if act.child_id in runs else None
        status = "unknown"
        if run_id is not None:
            record = store.get(run_id)
            status = "running" if record.outcome_status is None else record.outcome_status.value
        checking = turns.check_status(run_id) if run_id is not None else turns.open_turn
        if MUTANT_STATUS_CHECK_CONSUMES_PRIVATE in mutants and run_id is not None \
                and store.get(run_id).private and store.get(run_id).ended_at_ms is not None:
            store.apply(run_id, Delivered(port.now_ms))  # the bug: the check was the hand-off
        port.emit(events.StatusChecked(act.child_id, run_id, status,
                                       None if checking is None else checking.run_id))
    else:
        abandoned = turns.reset(delete=act.delete)
        for turn in abandoned:
            settled(port, store, turn)
        if abandoned:
            port.probe("turns.reset-abandons-turn")
        port.emit(events.SessionLifecycle("delete" if act.delete else "reset", turns.incarnation,
                                          [t.run_id for t in abandoned]))
    store.save_session(turns.session_key, turns.incarnation, turns.deleted)


def freeze(port: Port, store: RequesterStore, session: str, turn: Turn,
           checks_consume: bool = False) -> None:
    """sessions_yield: the turn's required children become one frozen batch (reference §c9).
    With none, or for a cron requester, the batch is consumed at once and no wake is due.
    (``checks_consume`` is the known bug that takes a checked private child as handed over.)"""
    members = tuple(sorted(r for r in turn.children if store.get(r).required and not (
        checks_consume and r in turn.checked and store.get(r).private)))
    consumed = ("cron requester" if ":cron:" in session
                else "no required children" if not members else None)
    row = BatchRow(batch_id=f"batch:{turn.run_id}", requester=session,
                   agent_id=agent_id(session), turn_run_id=turn.run_id,
                   incarnation=turn.incarnation, members=members,
                   rearm_generation=store.last_rearm_generation(session) + 1,
                   frozen_at_ms=port.now_ms,
                   # One private member makes the whole wake private (reference §c10).
                   private=any(store.get(r).private for r in members),
                   status=BatchStatus.CLOSED if consumed else BatchStatus.PENDING,
                   outcome=consumed)
    if consumed is None:
        for run_id in members:
            store.apply(run_id, YieldFrozen(row.batch_id))
    else:
        port.probe("batch.consumed-without-wake")
    store.save_batch(row)
    port.emit(batch_events.BatchFrozen(row.batch_id, turn.run_id, list(members),
                                       row.base_key(), consumed))
    if consumed is None:
        port.send(addresses.DELIVERY, BatchReady(row.batch_id))


def settled(port: Port, store: RequesterStore, turn: Turn) -> None:
    """The turn's state becomes durable, and the delivery actor learns that the turn settled: it
    releases (a finish), hands to the batch (a yield) or closes (an abandonment) the private
    results it retained for the turn (PRV-5, PRV-2, PRV-3). A lost notice is made up for by a
    restart's restore."""
    store.save_turn(turn.run_id, turn.state, port.now_ms)
    if turn.state is TurnState.YIELDED and len(
            {store.get(run_id).private for run_id in turn.children}) == 2:
        port.probe("private.yield-with-public-siblings")  # each keeps its own delivery (PRV-5)
    if turn.state is not TurnState.OPEN:
        port.send(addresses.DELIVERY, TurnSettled(turn.run_id))


def receive_wake(port: Port, turns: TurnCore, core: SessionCore, wake: Completion,
                 store: RequesterStore, mutants: frozenset[str] = frozenset()) -> CompletionAck:
    """A batch wake resumes its yielded turn, unless a reset or delete abandoned that turn (the
    new conversation never sees it: requester_abandoned), and not while another turn of the
    session runs (requester_turn_pending; MUTANT_WAKE_INTO_BUSY_TURN cuts in). The resumed turn
    then answers by the session's reply rules (:func:`answer`)."""
    assert wake.turn_run_id is not None
    turn = turns.turns.get(wake.turn_run_id)
    if turn is None or turn.state is TurnState.ABANDONED or turns.deleted:
        port.emit(batch_events.WakeRefused(wake.run_id, wake.key, "requester_abandoned"))
        return CompletionAck(wake.key, wake.run_id, accepted=False, abandoned=True)
    refused = between_turns_once(port, turns, core, wake, mutants)
    if refused is not None:
        return refused
    turns.resume(wake.turn_run_id)
    message_tool = turns.reply_mode is ReplyMode.MESSAGE_TOOL
    visible = not message_tool or port.choose("requester:message-tool",
                                              MISSED_VISIBLE_REPLY) != 0
    port.emit(events.CompletionAccepted(wake.run_id, wake.key, wake.status, wake.text,
                                        wake.ended_at_ms, wake.generation, None, visible))
    private = any(store.get(r).private for r in turn.children)
    answer(port, turns.session_key, wake, message_tool, visible,
           private and MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL in mutants)
    return CompletionAck(wake.key, wake.run_id, accepted=True, visible_reply=visible)


def between_turns_once(port: Port, turns: TurnCore, core: SessionCore, wake: Completion,
                       mutants: frozenset[str]) -> CompletionAck | None:
    """What every wake (a yield batch's or a wave's) passes before the session takes it: not
    while another turn of the session runs (it waits, spending no attempt; the known bug
    MUTANT_WAKE_INTO_BUSY_TURN cuts in), and not a second time (a duplicate key). Returns the
    refusal, or None when the session took the completion."""
    if turns.open_turn is not None and MUTANT_WAKE_INTO_BUSY_TURN not in mutants:
        port.probe("batch.requester-turn-pending")
        port.emit(batch_events.WakeRefused(wake.run_id, wake.key, TURN_PENDING))
        return CompletionAck(wake.key, wake.run_id, accepted=False, turn_pending=True)
    ack, verdict = core.receive_completion(wake, port.now_ms)
    if not ack.accepted:
        port.probe("requester.duplicate-completion")
        port.emit(events.CompletionDuplicate(wake.run_id, wake.key, wake.ended_at_ms,
                                             verdict.value))
        return ack
    return None


def answer(port: Port, session: str, wake: Completion, message_tool: bool, tool_called: bool,
           final_to_channel: bool = False) -> None:
    """The resumed turn answers by the session's normal reply rules (PRV-2; after a private
    batch too, reference §e7's newer reading): in ``auto`` mode its final text is the visible
    reply; in ``message_tool`` mode only what it sends with the message tool is visible (if it
    calls the tool at all) and its final text stays in the transcript. ``final_to_channel`` is
    the known bug that sends the plain final anyway."""
    assert wake.turn_run_id is not None
    final = f"Done: the children of {wake.turn_run_id} settled; their results are in hand."
    sent = [f"Update for the user: the work of {wake.turn_run_id} is finished."] \
        if message_tool and tool_called else []
    port.emit(batch_events.TurnAnswered(wake.turn_run_id, wake.key, final, sent))
    for text in ([final] if not message_tool or final_to_channel else []) + sent:
        port.emit(batch_events.ConversationReply(session, wake.turn_run_id, text))
