"""A requester session takes an unfrozen wave's settle wake (reference §c9; docs/yield.md).

Unlike a yield batch's wake it resumes no turn and needs no visible reply (no yield asked for
one); like it, the session takes it only between its turns (``requester_turn_pending``
otherwise: the wake waits, spending no attempt) and only in the incarnation whose turns spawned
the wave: after ``/new`` or a delete it is refused as ``requester_abandoned``, so nothing of the
old conversation's children reaches the new one.
"""

from __future__ import annotations

from actors import events
from actors.events import batches as batch_events
from actors.messages import Completion, CompletionAck
from actors.requester.session import SessionCore
from actors.requester.turns import between_turns_once
from actors.runtime import Port
from actors.yields.turns import ReplyMode, TurnCore


def receive_wave_wake(port: Port, turns: TurnCore, core: SessionCore, wake: Completion,
                      mutants: frozenset[str] = frozenset()) -> CompletionAck:
    if turns.deleted or wake.incarnation != turns.incarnation:
        port.emit(batch_events.WakeRefused(wake.run_id, wake.key, "requester_abandoned"))
        return CompletionAck(wake.key, wake.run_id, accepted=False, abandoned=True)
    refused = between_turns_once(port, turns, core, wake, mutants)
    if refused is not None:
        return refused
    # No visible reply is required after a wave: nothing is drawn; an auto-reply session's
    # final text is visible as always.
    visible = turns.reply_mode is ReplyMode.AUTO
    port.emit(events.CompletionAccepted(wake.run_id, wake.key, wake.status, wake.text,
                                        wake.ended_at_ms, wake.generation, None, visible))
    return CompletionAck(wake.key, wake.run_id, accepted=True, visible_reply=visible)
