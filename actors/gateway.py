"""The gateway's Trio shell: agent calls from the delivery actor in, sessions and channels out.

It performs what :mod:`actors.gateway_core` decides and relays each session's acknowledgement
back to the delivery actor, as late as the injected fault hook says (or never: a lost ack). What
each channel received is traced (``gateway.chunk``): the outside observer the invariants read.
"""

from __future__ import annotations

import attrs

from actors import addresses, events
from actors.gateway_core import (
    ChunkFailed,
    GatewayCore,
    GatewayFaults,
    Inject,
    Reply,
    Route,
    ToChannel,
)
from actors.messages import Completion, CompletionAck, SendRejected
from actors.retry import ANNOUNCE_TIMEOUT_MS
from actors.runtime import Port


@attrs.frozen
class _Echo:
    """A copy of the gateway's answer, sent when due (a doubled rejection)."""

    message: CompletionAck | SendRejected


@attrs.frozen
class _AckDue:
    """A slow acknowledgement, held by the gateway until it is due."""

    ack: CompletionAck


async def run_gateway(port: Port, routes: dict[str, Route], faults: GatewayFaults) -> None:
    core = GatewayCore(routes, faults, probe=port.probe)
    while True:
        message = await port.receive()
        if isinstance(message, Completion):
            for effect in core.call(message):
                if isinstance(effect, ToChannel):
                    port.emit(events.ChannelChunk(effect.channel, effect.session, effect.run_id,
                                                  effect.key, effect.index, effect.total,
                                                  effect.text, effect.to, effect.thread))
                elif isinstance(effect, ChunkFailed):
                    port.emit(events.ChunkFailed(effect.channel, effect.run_id, effect.key,
                                                 effect.index, effect.total,
                                                 effect.error.to_json()))
                elif isinstance(effect, Inject):
                    port.send(addresses.requester(effect.completion.requester),
                              effect.completion)
                else:
                    assert isinstance(effect, Reply)
                    port.send(addresses.DELIVERY, effect.message)
                    if effect.echo_ms is not None:
                        port.set_timer(effect.echo_ms, _Echo(effect.message))
        elif isinstance(message, CompletionAck):
            delay = faults.ack_delay_ms(message.run_id)
            if delay == 0:
                port.send(addresses.DELIVERY, message)
            elif delay is None:
                port.probe("gateway.ack-lost")
            else:
                if delay > ANNOUNCE_TIMEOUT_MS:
                    port.probe("gateway.ack-slow-past-timeout")
                port.set_timer(delay, _AckDue(message))
        elif isinstance(message, _AckDue):
            port.send(addresses.DELIVERY, message.ack)
        elif isinstance(message, _Echo):
            port.send(addresses.DELIVERY, message.message)
        else:
            raise TypeError(f"gateway cannot handle {type(message).__name__}")
