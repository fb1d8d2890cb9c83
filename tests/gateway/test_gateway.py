"""The gateway: chunking, per-chunk faults, its idempotency facts, and the DEL-11 oracles each
shown catching a broken gateway or delivery core."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import actors.gateway.core as gateway_core
from actors.events.gateway import ChannelChunk, ChunkFailed
from actors.gateway.core import (
    SENT,
    CallState,
    ChunkFate,
    ChunkVerdict,
    GatewayCore,
    GatewayEffect,
    Inject,
    Reply,
    Route,
    split_chunks,
)
from actors.messages import Completion, SendRejected, Target
from actors.records.send_error import ErrorClass, SendError, classify
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


@given(st.text(alphabet="ab \n", max_size=300), st.integers(1, 50))
def test_chunks_join_to_the_text_and_respect_the_limit(text: str, limit: int) -> None:
    chunks = split_chunks(text, limit)
    assert "".join(chunks) == text
    assert all(len(c) <= limit for c in chunks)
    assert len(chunks) == 1 or all(chunks)


def _split_by_slicing(text: str, limit: int, to_line_end: bool) -> tuple[str, ...]:
    """``split_chunks`` as it was first written: cut the rest of the text at each chunk."""
    if len(text) <= limit:
        return (text,)
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit) + 1
        if to_line_end:
            cut = rest.find("\n", limit) + 1
        if cut <= 0:
            cut = limit
        chunks.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        chunks.append(rest)
    return tuple(chunks)


@given(st.text(alphabet="ab \n", max_size=300), st.integers(1, 50), st.booleans())
def test_chunks_are_those_of_the_slicing_split(text: str, limit: int, to_line_end: bool) -> None:
    assert split_chunks(text, limit, to_line_end) == _split_by_slicing(text, limit, to_line_end)


def test_chunks_break_after_a_line_when_they_can() -> None:
    assert split_chunks("abc\ndefgh", 6) == ("abc\n", "defgh")
    assert split_chunks("abcdefgh", 3) == ("abc", "def", "gh")
    assert split_chunks("short", None) == ("short",)


@attrs.define
class Script:
    """Faults by (run, chunk index): a verdict, else sent."""

    verdicts: dict[tuple[str, int], ChunkVerdict] = attrs.field(factory=dict)
    asked: list[tuple[str, int, int]] = attrs.field(factory=list)

    def chunk(self, run_id: str, key: str, index: int, total: int) -> ChunkVerdict:
        self.asked.append((run_id, index, total))
        return self.verdicts.get((run_id, index), SENT)

    def ack_delay_ms(self, run_id: str) -> int | None:
        return 0


def _completion(text: str = "x" * 25, key: str = "k1") -> Completion:
    return Completion(key, "run-1", "agent:main:subagent:c1", "agent:main:main", "ok", text,
                      Target("telegram", "chat-1"))


def _core(script: Script, chunk_chars: int | None = 10) -> GatewayCore:
    return GatewayCore({"agent:main:main": Route("telegram", chunk_chars)}, script)


def _all(effects: Iterator[GatewayEffect]) -> list[GatewayEffect]:
    return list(effects)


def test_a_whole_chunked_send_reaches_the_channel_then_the_session() -> None:
    core = _core(Script())
    effects = _all(core.call(_completion()))
    assert [type(e) for e in effects] == [ChannelChunk, ChannelChunk, ChannelChunk, Inject]
    assert core.calls["k1"] is CallState.SENT
    # A repeat (a retry after a lost ack) reaches only the session, which dedups the key.
    assert [type(e) for e in _all(core.call(_completion()))] == [Inject]


@pytest.mark.parametrize("fate", [ChunkFate.FAILED, ChunkFate.ABORTED])
def test_a_later_chunk_failing_makes_the_send_incomplete(fate: ChunkFate) -> None:
    script = Script({("run-1", 1): ChunkVerdict(fate, SendError("status: unavailable"))})
    core = _core(script)
    effects = _all(core.call(_completion()))
    assert [type(e) for e in effects] == [ChannelChunk, ChunkFailed, Reply]
    reply = effects[-1]
    assert isinstance(reply, Reply) and isinstance(reply.message, SendRejected)
    assert reply.message.error.message.startswith("chunk 2 of 3 ")
    assert classify(reply.message.error) is ErrorClass.SENT
    # Asked about chunk 2 only after chunk 1 went out; chunk 3 never.
    assert script.asked == [("run-1", 0, 3), ("run-1", 1, 3)]
    # A resend is refused without touching the channel.
    again = _all(core.call(_completion()))
    assert [type(e) for e in again] == [Reply]
    assert script.asked == [("run-1", 0, 3), ("run-1", 1, 3)]


def test_a_first_chunk_failing_sends_nothing_and_stays_retryable() -> None:
    script = Script({("run-1", 0): ChunkVerdict(ChunkFate.FAILED,
                                                SendError("gateway not connected"))})
    core = _core(script)
    effects = _all(core.call(_completion()))
    assert [type(e) for e in effects] == [ChunkFailed, Reply]
    assert "k1" not in core.calls
    script.verdicts.clear()
    assert [type(e) for e in _all(core.call(_completion()))][-1] is Inject


def test_a_completion_without_a_channel_target_is_one_injection() -> None:
    """deliver=false (webchat, a nested requester, no route): the session only, whole."""
    script = Script()
    core = _core(script)
    completion = attrs.evolve(_completion("y" * 1000), target=None)
    assert [type(e) for e in _all(core.call(completion))] == [Inject]
    assert script.asked == [("run-1", 0, 1)]


# -- the DEL-11 oracles, each catching a broken variant -----------------------------------------


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def test_the_chunked_scenario_is_clean() -> None:
    result = _run("chunked-partial-send.toml")
    assert result.violations == ()
    kinds = [r.kind for r in result.trace]
    assert "gateway.chunk_failed" in kinds


def test_the_retry_partial_chunks_mutant_is_caught() -> None:
    result = _run("chunked-partial-send.toml", mutants=["retry-partial-chunks"])
    assert "incomplete-not-retried" in _names(result)


def test_chunk_sent_once_catches_a_gateway_without_idempotency_facts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A gateway that forgets which calls reached the channel resends an incomplete call's chunks
    # when a (mutant) delivery core retries it.
    monkeypatch.setattr(GatewayCore, "call", _forgetful(GatewayCore.call))
    result = _run("chunked-partial-send.toml", mutants=["retry-partial-chunks"])
    assert "chunk-sent-once" in _names(result)


def _forgetful(call: Any) -> Any:
    def forgetting(self: GatewayCore, completion: Completion) -> Iterator[GatewayEffect]:
        self.calls.clear()
        return call(self, completion)  # type: ignore[no-any-return]
    return forgetting


def test_incomplete_not_delivered_catches_a_partial_send_reported_as_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bug: a gateway that skips a failed chunk and reports success.
    original = gateway_core.GatewayCore._chunked

    def skipping(self: GatewayCore, completion: Completion, channel: str,
                 chunk_chars: int | None) -> Iterator[GatewayEffect]:
        for effect in original(self, completion, channel, chunk_chars):
            if isinstance(effect, ChunkFailed):
                continue
            if isinstance(effect, Reply):
                yield Inject(completion)
                return
            yield effect

    monkeypatch.setattr(GatewayCore, "_chunked", skipping)
    result = _run("chunked-partial-send.toml")
    assert "incomplete-not-delivered" in _names(result)
    assert "chunks-join-to-text" in _names(result)


def test_chunks_go_to_the_target_chat_and_thread_cut_only_on_the_sessions_channel() -> None:
    """DEL-5: the gateway sends to the completion's resolved target; the chunk limit is the
    session's own channel's, so an override to another channel sends the text whole."""
    core = _core(Script())
    there = attrs.evolve(_completion(), target=Target("telegram", "chat-3", "t1"))
    chunks = [e for e in _all(core.call(there)) if isinstance(e, ChannelChunk)]
    assert len(chunks) == 3
    assert {(c.channel, c.to, c.thread) for c in chunks} == {("telegram", "chat-3", "t1")}
    elsewhere = attrs.evolve(_completion(key="k2"), target=Target("discord", "chan-5"))
    assert [(e.channel, e.to, e.thread) for e in _all(core.call(elsewhere))
            if isinstance(e, ChannelChunk)] == [("discord", "chan-5", None)]
