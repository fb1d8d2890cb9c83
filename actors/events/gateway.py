"""The gateway's records: channel chunks, failed chunks and callbacks, injections, transcript
mirrors."""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event, JsonValue

# -- the gateway -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class ChannelChunk(Event):
    """Chunk ``index`` of ``total`` of a completion reached ``channel``: what its user sees."""

    kind: ClassVar[str] = "gateway.chunk"
    channel: str
    session: str
    run_id: str
    key: str
    index: int
    total: int
    text: str
    # DEL-5: the chat and thread within the channel the chunk went to.
    to: str | None = None
    thread: str | None = None


@attrs.frozen(slots=True)
class ChunkFailed(Event):
    """The channel refused or aborted chunk ``index`` of ``total`` (earlier ones were sent)."""

    kind: ClassVar[str] = "gateway.chunk_failed"
    channel: str
    run_id: str
    key: str
    index: int
    total: int
    error: dict[str, JsonValue]


@attrs.frozen(slots=True)
class GatewayRefused(Event):
    """The gateway itself refused a send, no fault drawn: a repeat of a key whose chunks
    reached the channel only in part (DEL-11). What the delivery actor is answered."""

    kind: ClassVar[str] = "gateway.refused"
    run_id: str
    key: str
    error: dict[str, JsonValue]


@attrs.frozen(slots=True)
class CallbackFailed(Event):
    """The session confirmed the hand-off, then the receive callback failed (DEL-9)."""

    kind: ClassVar[str] = "gateway.callback_failed"
    run_id: str
    key: str
    error: str


@attrs.frozen(slots=True)
class Injected(Event):
    """The gateway handed an input to a requester session (its lane holds it until confirmed)."""

    kind: ClassVar[str] = "gateway.inject"
    session: str
    run_id: str
    key: str


@attrs.frozen(slots=True)
class MirrorQueued(Event):
    """A direct delivery was confirmed: its mirror waits in the session's lane (DEL-8)."""

    kind: ClassVar[str] = "gateway.mirror_queued"
    session: str
    run_id: str
    key: str


@attrs.frozen(slots=True)
class MirrorFailed(Event):
    """Appending a mirror failed; the delivery it mirrors stays delivered (DEL-8)."""

    kind: ClassVar[str] = "gateway.mirror_failed"
    session: str
    run_id: str
    key: str
    error: str
