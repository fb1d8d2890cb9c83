"""The gateway's Trio shell: agent calls from the delivery actor in, sessions and channels out.

It performs what :mod:`actors.gateway.core` decides and relays each session's acknowledgement
back to the delivery actor, as late as the injected fault hook says (or never: a lost ack). What
each channel received is traced (``gateway.chunk``): the outside observer the invariants read.
"""

from __future__ import annotations

import functools

import attrs

from actors import addresses, events
from actors.gateway.core import (
    GatewayCore,
    GatewayFaults,
    Inject,
    Reply,
    Route,
)
from actors.gateway.mirror import LaneTimeout, Mirror, SessionLanes
from actors.messages import (
    Completion,
    CompletionAck,
    RecoveredAnswer,
    SendRejected,
    TranscriptMirror,
)
from actors.mutants import MUTANT_CHUNK_TO_LINE_END, MUTANT_MIRROR_BLOCKS_SEND
from actors.records.keys import is_recovery_key
from actors.records.retry import ANNOUNCE_TIMEOUT_MS
from actors.records.send_error import SendError
from actors.runtime import Port


@attrs.frozen
class _Echo:
    """A copy of the gateway's answer, sent when due (a doubled rejection)."""

    message: CompletionAck | SendRejected


@attrs.frozen
class _AckDue:
    """A slow acknowledgement, held by the gateway until it is due."""

    ack: CompletionAck


def _append_mirrors(port: Port, faults: GatewayFaults, due: list[Mirror]) -> None:
    """Hand each due mirror to its session, best effort (DEL-8)."""
    for mirror in due:
        if mirror.waited:
            port.probe("gateway.mirror-after-queued-work")
        if mirror.held_ack is not None:
            port.send(addresses.DELIVERY, mirror.held_ack)  # the bug: the send waited
        error = faults.mirror_error(mirror.run_id)
        if error is not None:
            port.probe("gateway.mirror-failed")
            port.emit(events.MirrorFailed(mirror.session, mirror.run_id, mirror.key, error))
        else:
            port.send(addresses.requester(mirror.session),
                      TranscriptMirror(mirror.key, mirror.run_id, mirror.text))


async def run_gateway(port: Port, routes: dict[str, Route], faults: GatewayFaults,
                      mutants: frozenset[str] = frozenset()) -> None:
    core = GatewayCore(routes, faults, probe=port.probe,
                       to_line_end=MUTANT_CHUNK_TO_LINE_END in mutants)
    lanes = SessionLanes()
    texts: dict[str, str] = {}  # what each direct delivery's channel received, by key
    while True:
        message = await port.receive()
        if isinstance(message, Completion):
            _call(port, core, lanes, texts, message)
        elif isinstance(message, RecoveredAnswer):
            # Lost-answer recovery's hand-off: an internal injection (DEL-2).
            refusal = faults.recovery_error(message.run_id)
            if refusal is None:
                port.send(addresses.requester(message.requester), message)
            else:
                port.send(addresses.DELIVERY, SendRejected(message.key, message.run_id,
                                                           SendError(refusal)))
        elif isinstance(message, CompletionAck) and is_recovery_key(message.key):
            port.send(addresses.DELIVERY, message)
        elif isinstance(message, LaneTimeout):
            _append_mirrors(port, faults, lanes.input_expired(message.session, message.key))
        elif isinstance(message, CompletionAck):
            _acknowledged(port, faults, lanes, texts, mutants, message)
        elif isinstance(message, SendRejected):
            # A deleted session refused the injection (DEL-4): it answered, so the input no
            # longer holds that session's mirror lane; the delivery actor retries or falls back.
            # (A late refusal leaves alone the same key's resend to the fallback session.)
            if message.session is None:
                # The agent method's own refusal of a private call whose expected session
                # changed (``expectedExistingSessionId``, PRV-3): the gateway's answer.
                port.emit(events.GatewayRefused(message.run_id, message.key,
                                                message.error.to_json()))
            session = message.session or lanes.session_of(message.key)
            if session == lanes.session_of(message.key):
                texts.pop(message.key, None)
            if session is not None:
                _append_mirrors(port, faults, lanes.input_done(session, message.key))
            port.send(addresses.DELIVERY, message)
        elif isinstance(message, _AckDue):
            port.send(addresses.DELIVERY, message.ack)
        elif isinstance(message, _Echo):
            port.send(addresses.DELIVERY, message.message)
        else:
            raise TypeError(f"gateway cannot handle {type(message).__name__}")


def _call(port: Port, core: GatewayCore, lanes: SessionLanes, texts: dict[str, str],
          message: Completion) -> None:
    """One agent call from the delivery actor: what the core decides, performed in order."""
    for effect in core.call(message):
        if isinstance(effect, events.ChannelChunk | events.ChunkFailed):
            port.emit(effect)  # the core's trace records, as they are
        elif isinstance(effect, Inject):
            completion = effect.completion
            owner = completion.requester
            lanes.input_sent(owner, completion.key)
            if completion.target is not None and completion.target.channel is not None:
                texts[completion.key] = completion.text  # a direct delivery (DEL-8)
            port.emit(events.Injected(owner, completion.run_id, completion.key))
            # Once the session confirms the input (and no resend of it waits), the
            # timeout would find nothing to expire: the kernel then drops it unseen.
            port.set_timer(ANNOUNCE_TIMEOUT_MS, LaneTimeout(owner, completion.key),
                           functools.partial(lanes.holds, owner, completion.key))
            port.send(addresses.requester(owner), completion)
        else:
            assert isinstance(effect, Reply)
            if effect.own and isinstance(effect.message, SendRejected):
                port.emit(events.GatewayRefused(effect.message.run_id,
                                                effect.message.key,
                                                effect.message.error.to_json()))
            port.send(addresses.DELIVERY, effect.message)
            if effect.echo_ms is not None:
                port.set_timer(effect.echo_ms, _Echo(effect.message))


def _acknowledged(port: Port, faults: GatewayFaults, lanes: SessionLanes, texts: dict[str, str],
                  mutants: frozenset[str], message: CompletionAck) -> None:
    """A session confirmed (or refused as a duplicate) an input: the callback, a direct
    delivery's mirror (DEL-8), then the answer relayed to the delivery actor, as late as the
    fault hook says."""
    session = lanes.session_of(message.key)
    due = [] if session is None else lanes.input_done(session, message.key)
    text = texts.pop(message.key, None)
    failure = faults.callback_error(message.run_id)
    if failure is not None:
        # The hand-off is confirmed; only the bookkeeping after it failed (DEL-9).
        port.probe("gateway.callback-failed")
        port.emit(events.CallbackFailed(message.run_id, message.key, failure))
        message = attrs.evolve(message, callback_error=failure)
    if text is not None and session is not None and message.accepted:
        # A direct delivery was confirmed: its mirror queues behind the session's open
        # work, and the send completes without waiting for it (DEL-8).
        port.emit(events.MirrorQueued(session, message.run_id, message.key))
        hold = MUTANT_MIRROR_BLOCKS_SEND in mutants
        due += lanes.mirror(session, message.run_id, message.key, text,
                            held_ack=message if hold else None)
        if hold:  # the bug: the answer goes out with the mirror, whenever that is
            _append_mirrors(port, faults, due)
            return
    delay = faults.ack_delay_ms(message.run_id)
    if delay == 0:
        port.send(addresses.DELIVERY, message)
    elif delay is None:
        port.probe("gateway.ack-lost")
    else:
        if delay > ANNOUNCE_TIMEOUT_MS:
            port.probe("gateway.ack-slow-past-timeout")
        port.set_timer(delay, _AckDue(message))
    _append_mirrors(port, faults, due)
