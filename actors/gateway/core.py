"""The gateway's decisions: how a completion is carried to its requester session and channel. Pure.

The delivery actor makes an agent call to the gateway for each try of a completion. The gateway
hands the rendered text to the requester session (an internal injection: the session's
transcript) and, when the session is bound to an external channel (a follow-up agent call with
``deliver=true``), first sends the text to that channel, split into chunks when the channel
limits a message's length. It answers the delivery actor with the session's acknowledgement or a
typed error chain (:class:`~actors.records.send_error.SendError`).

Chunked text fallback (reference §c11, DEL-11): when a chunk fails or aborts after earlier chunks
reached the channel, the send is incomplete; the error names the chunk and carries the evidence
that part of it was sent (``sent_before_error``), so the delivery core never retries it. The
gateway itself also remembers which calls reached a channel (its idempotency facts): a repeat
call whose chunks all went out is not sent to the channel again, and a repeat of an incomplete
call is refused permanently instead of sending a chunk twice.

Faults are not decided here: the shell injects a :class:`GatewayFaults` (the simulator's fault
plan) that says, per chunk, whether it fails; the core applies the answer.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Protocol

import attrs

from actors.events.gateway import ChannelChunk, ChunkFailed
from actors.messages import Completion, CompletionAck, SendRejected
from actors.records.send_error import ErrorClass, SendError, classify

# A session with no channel of its own is one injection: its "chunk" is the whole text.
ABORTED = "This operation was aborted"


@attrs.frozen
class Route:
    """A requester session's own channel and that channel's longest message, in characters
    (``None``: no limit). Where a completion goes is its own ``target`` (resolved by the delivery
    actor, actors/gateway/routing.py): a completion without one is an internal injection only
    (``deliver=false``); one whose target is the session's channel is cut at its limit."""

    channel: str | None = None
    chunk_chars: int | None = None


_NO_ROUTE = Route()  # a session without a channel of its own (frozen: shared)


class ChunkFate(enum.Enum):
    SENT = "sent"
    FAILED = "failed"
    ABORTED = "aborted"


@attrs.frozen
class ChunkVerdict:
    fate: ChunkFate
    error: SendError | None = None  # FAILED: the platform's error chain
    echo_ms: int | None = None  # FAILED: the refusal reaches the delivery actor twice, this late


SENT = ChunkVerdict(ChunkFate.SENT)


class GatewayFaults(Protocol):
    """What the world decides about one send (the simulator's fault plan implements it)."""

    def chunk(self, run_id: str, key: str, index: int, total: int) -> ChunkVerdict:
        """The fate of chunk ``index`` (0-based) of ``total`` of ``run_id``'s completion
        (sent under idempotency ``key``)."""

    def ack_delay_ms(self, run_id: str) -> int | None:
        """How long the session's acknowledgement takes back to the delivery actor (0: at
        once; past the 120 s announce timeout: a slow ack); ``None``: it is lost."""

    def callback_error(self, run_id: str) -> str | None:
        """The error the receive callback fails with after the session confirmed the hand-off
        of ``run_id``'s completion (DEL-9); ``None``: it succeeds."""

    def mirror_error(self, run_id: str) -> str | None:
        """The error appending the transcript mirror of ``run_id``'s direct delivery fails
        with (DEL-8); ``None``: it is recorded."""

    def recovery_error(self, run_id: str) -> str | None:
        """The error lost-answer recovery's hand-off of ``run_id``'s answer is refused with
        (DEL-2); ``None``: it reaches the requester session."""


def split_chunks(text: str, chunk_chars: int | None,
                 to_line_end: bool = False) -> tuple[str, ...]:
    """The channel messages ``text`` is sent as: at most ``chunk_chars`` characters each,
    cut after the last line break inside the limit when there is one (so lines stay whole where
    they can), else at the limit. Joined, the chunks are the text. (``to_line_end``: the
    mutant above.)"""
    if chunk_chars is None or len(text) <= chunk_chars:
        return (text,)
    # Cut by position in ``text``: slicing off the rest at each chunk copied it again, quadratic
    # in a long text (~1 % of a default-world seed, whose answers run to 100 KB).
    chunks: list[str] = []
    start, size = 0, len(text)
    while size - start > chunk_chars:
        limit = start + chunk_chars
        found = text.find("\n", limit) if to_line_end else text.rfind("\n", start, limit)
        cut = found + 1 if found >= 0 else limit
        chunks.append(text[start:cut])
        start = cut
    if start < size:
        chunks.append(text[start:])
    return tuple(chunks)


def cut_edges(text: str, chunks: tuple[str, ...], chunk_chars: int) -> Iterator[str]:
    """The probes of the cuts at the limit's edge (issue 36's boundary draws): a chunk cut
    after a line break that is the limit's last character, one character under it, or one
    character past it (no break within: the cut falls at the limit, right before the break)."""
    at = 0
    for chunk in chunks[:-1]:
        at += len(chunk)
        if chunk.endswith("\n") and len(chunk) == chunk_chars:
            yield "gateway.chunk-break-at-limit"
        elif chunk.endswith("\n") and len(chunk) == chunk_chars - 1:
            yield "gateway.chunk-break-one-under-limit"
        elif len(chunk) == chunk_chars and text.startswith("\n", at):
            yield "gateway.chunk-break-one-over-limit"


# -- effects: besides these two, the trace records the gateway emits as they are (a chunk on a
# channel, a failed chunk: actors/events/gateway.py) ----------------------------------------


@attrs.frozen
class Inject:
    """Hand the completion to the requester session (its transcript)."""

    completion: Completion


@attrs.frozen
class Reply:
    """Answer the delivery actor."""

    message: CompletionAck | SendRejected
    echo_ms: int | None = None  # a copy of the answer follows this much later
    own: bool = False  # the gateway's own refusal, no fault drawn (recorded: gateway.refused)


GatewayEffect = ChannelChunk | ChunkFailed | Inject | Reply


class CallState(enum.Enum):
    SENT = "sent"  # every chunk reached the channel
    INCOMPLETE = "incomplete"  # a chunk failed after earlier chunks were sent


@attrs.define
class GatewayCore:
    routes: dict[str, Route]
    faults: GatewayFaults
    # Idempotency facts: the calls (by key) that reached a channel, fully or partly.
    calls: dict[str, CallState] = attrs.field(factory=dict)
    probe: Callable[[str], None] = attrs.field(default=lambda name: None)
    to_line_end: bool = False  # MUTANT_CHUNK_TO_LINE_END

    def call(self, completion: Completion) -> Iterator[GatewayEffect]:
        """One agent call from the delivery actor. The effects come one at a time: the shell
        performs each (a chunk reaches its channel) before the next chunk's fate is asked."""
        target = completion.target
        if target is None or target.channel is None:
            yield from self._one_injection(completion)
            return
        route = self.routes.get(completion.requester) or _NO_ROUTE
        state = self.calls.get(completion.key)
        if state is CallState.SENT:
            # Already on the channel: only the session learns of the repeat (it dedups the key).
            yield Inject(completion)
        elif state is CallState.INCOMPLETE:
            # Part of it is on the channel: sending it again would repeat those chunks.
            self.probe("gateway.incomplete-repeat-refused")
            yield Reply(SendRejected(completion.key, completion.run_id, SendError(
                "chunked delivery is incomplete; its chunks are not sent twice",
                sent_before_error=True), dispatch=completion.dispatch), own=True)
        else:
            yield from self._chunked(completion, target.channel,
                                     route.chunk_chars if route.channel == target.channel else None)

    def _one_injection(self, completion: Completion) -> Iterator[GatewayEffect]:
        verdict = self.faults.chunk(completion.run_id, completion.key, 0, 1)
        if verdict.fate is ChunkFate.SENT:
            yield Inject(completion)
        else:
            yield Reply(SendRejected(completion.key, completion.run_id, _error(verdict),
                                     dispatch=completion.dispatch), verdict.echo_ms)

    def _chunked(self, completion: Completion, channel: str,
                 chunk_chars: int | None) -> Iterator[GatewayEffect]:
        chunks = split_chunks(completion.text, chunk_chars, self.to_line_end)
        if chunk_chars is not None:
            for name in cut_edges(completion.text, chunks, chunk_chars):
                self.probe(name)
        for index, text in enumerate(chunks):
            verdict = self.faults.chunk(completion.run_id, completion.key, index, len(chunks))
            if verdict.fate is not ChunkFate.SENT:
                error = _error(verdict)
                self.probe("gateway.chunk-failed-after-sent" if index > 0 else
                           "gateway.first-chunk-failed")
                if index > 0:
                    # Earlier chunks are on the channel: the send is incomplete (DEL-11).
                    what = "aborted" if verdict.fate is ChunkFate.ABORTED else "failed"
                    error = SendError(f"chunk {index + 1} of {len(chunks)} {what}", error,
                                      sent_before_error=True)
                if index > 0 or classify(error) is ErrorClass.SENT:
                    self.calls[completion.key] = CallState.INCOMPLETE
                yield ChunkFailed(channel, completion.run_id, completion.key, index, len(chunks),
                                  error.to_json())
                yield Reply(SendRejected(completion.key, completion.run_id, error,
                                         dispatch=completion.dispatch), verdict.echo_ms)
                return
            assert completion.target is not None
            yield ChannelChunk(channel, completion.requester, completion.run_id, completion.key,
                               index, len(chunks), text, completion.target.to,
                               completion.target.thread)
        self.calls[completion.key] = CallState.SENT
        yield Inject(completion)


def _error(verdict: ChunkVerdict) -> SendError:
    if verdict.fate is ChunkFate.ABORTED:
        return SendError(ABORTED)
    assert verdict.error is not None
    return verdict.error
