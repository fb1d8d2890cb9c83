"""What a requester session receives: a completion (taken once per key, DEL-3, DEL-12; its
checkpoint recorded, DEL-13), a wave's or a yielded batch's wake (``waves.py``, ``turns.py``), a
recovered answer (DEL-2), a transcript mirror (DEL-8), a compaction. Plain functions of the
session's actor (``actor.py``), called from its shell's table (``shell.py``).
"""

from __future__ import annotations

import attrs

from actors import addresses, events
from actors.delivery.wakes.batch_wake import SETTLE_TOOL
from actors.events.private import PrivateRefused
from actors.messages import Compact, Completion, RecoveredAnswer, SendRejected, TranscriptMirror
from actors.mutants import MUTANT_PRIVATE_AFTER_RESET
from actors.records.send_error import SendError
from actors.requester import notices
from actors.requester.actor import Requester
from actors.requester.session import Receipt
from actors.requester.turns import receive_wake
from actors.requester.waves import receive_wave_wake
from actors.yields.turns import TurnCore

# A receipt the session did not take, by why (DEL-3, DEL-12).
_LATE_RECEIPT_PROBES = {Receipt.DUPLICATE: "requester.duplicate-completion",
                        Receipt.EQUAL_END: "requester.duplicate-completion",
                        Receipt.OLDER: "requester.receipt-out-of-order"}


def completion(req: Requester, message: Completion) -> None:
    if req.store.session_deleted(req.session_key):
        # The session was deleted while the completion was on its way (DEL-4): refused,
        # so the next attempt falls back to this session's own requester.
        req.port.probe("requester.session-gone")
        gone = SendError(f"session not found: {req.session_key}")
        req.port.emit(events.SessionRefused(message.run_id, message.key, gone.to_json()))
        req.port.send(addresses.GATEWAY, SendRejected(message.key, message.run_id, gone,
                                                      req.session_key, message.dispatch))
    elif message.source_tool == SETTLE_TOOL and message.turn_run_id is None:
        # An unfrozen wave's settle wake (actors/requester/waves.py).
        req.port.send(addresses.GATEWAY, attrs.evolve(receive_wave_wake(
            req.port, req.turns, req.core, message, req.mutants), dispatch=message.dispatch))
    elif message.turn_run_id is not None:
        # A batch wake resumes the yielded turn (actors/requester/turns.py).
        woken = receive_wake(req.port, req.turns, req.core, message, req.store, req.mutants)
        req.port.send(addresses.GATEWAY, attrs.evolve(woken, dispatch=message.dispatch))
    elif _other_incarnation(message, req.turns, req.mutants):
        # PRV-3: a private result bound to an earlier incarnation (a reset or delete
        # raced its hand-off) never enters this one. The session answers, as OpenClaw's
        # agent method refuses a call whose ``expectedExistingSessionId`` is no longer the
        # session's (UNAVAILABLE, agent-turn-service); a private try has no answer timeout
        # to end an unanswered wait. The delivery actor's next attempt finds the binding gone
        # and closes it (completion_handoff_unavailable).
        req.port.probe("private.refused-by-session")
        changed = SendError(f'Session "{req.session_key}" changed before expected work could '
                            "start.")
        req.port.emit(PrivateRefused(message.run_id, message.key, req.turns.incarnation))
        # ``session`` None: the gateway's agent method refuses it (it records the refusal).
        req.port.send(addresses.GATEWAY, SendRejected(message.key, message.run_id, changed,
                                                      None, message.dispatch))
    else:
        _take(req, message)


def _take(req: Requester, message: Completion) -> None:
    """A completion for this session: taken (its checkpoint recorded) or a late receipt."""
    ack, verdict = req.core.receive_completion(message, req.port.now_ms)
    if ack.accepted:
        notices.before_completion(req.port, req.restarts, message.run_id)
        entry = req.core.transcript[-1]
        replaced = entry.replaces
        if replaced is not None:
            req.port.probe("requester.receipt-superseded")
        # The transcript is durable: its checkpoint of this receipt (DEL-13).
        req.store.record_checkpoint(req.session_key, message.child_session_key,
                                    message.run_id, message.key, message.ended_at_ms)
        req.port.emit(events.CompletionAccepted(
            message.run_id, message.key, message.status, message.text,
            message.ended_at_ms, message.generation,
            None if replaced is None else {
                "run_id": replaced.run_id, "key": replaced.key,
                "ended_at": replaced.ended_at_ms}))
    else:
        req.port.probe(_LATE_RECEIPT_PROBES[verdict])
        if verdict is Receipt.EQUAL_END:
            req.port.probe("requester.receipt-equal-end")  # issue 36's tie draw
        if req.core.compacted_since(message.key):
            req.port.probe("requester.resend-after-compaction")
        req.port.emit(events.CompletionDuplicate(message.run_id, message.key,
                                                 message.ended_at_ms, verdict.value))
    req.port.send(addresses.GATEWAY, ack)  # back through the gateway that injected it


def recovered_answer(req: Requester, message: RecoveredAnswer) -> None:
    # Lost-answer recovery's answer (DEL-2): recorded once per key, like any input.
    ack, verdict = req.core.receive_completion(message, req.port.now_ms)
    if ack.accepted:
        req.port.emit(events.RecoveredAccepted(message.run_id, message.key,
                                               message.text))
    else:
        req.port.emit(events.CompletionDuplicate(message.run_id, message.key,
                                                 message.ended_at_ms, verdict.value))
    req.port.send(addresses.GATEWAY, ack)


def transcript_mirror(req: Requester, message: TranscriptMirror) -> None:
    # A tagged mirror of what the channel received (DEL-8): history only; it never
    # stands for the keyed input itself.
    if req.core.record_mirror(message, req.port.now_ms):
        req.port.emit(events.MirrorRecorded(message.run_id, message.key,
                                            len(message.text)))


def compact(req: Requester, message: Compact) -> None:
    folded = req.core.compact(req.port.now_ms)
    req.port.emit(events.SessionCompacted(folded))


def _other_incarnation(completion: Completion, turns: TurnCore, mutants: frozenset[str]) -> bool:
    if not completion.private or completion.incarnation is None:
        return False
    if MUTANT_PRIVATE_AFTER_RESET in mutants:
        return False  # the bug: whatever incarnation the session is in takes it
    return completion.incarnation != turns.incarnation or turns.deleted
