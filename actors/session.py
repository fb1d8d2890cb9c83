"""A requester session's side of a hand-off: its transcript and source-delivery facts. Pure.

A completion is appended to the transcript once per idempotency key; a repeat of a key the session
has already recorded (a retry after a lost acknowledgement, a duplicated message, a replay after a
delivery-actor restart) is acknowledged without reaching the requester's model again (DEL-3).
"""

from __future__ import annotations

import attrs

from actors.messages import Completion, CompletionAck

# Known-bug variant (SIM-8, listed in actors/mutants.py): the session records every completion.
MUTANT_DEDUPE_OFF = "dedupe-off"


@attrs.define
class TranscriptEntry:
    run_id: str
    key: str
    status: str
    text: str
    at_ms: int


@attrs.define
class SessionCore:
    session_key: str
    transcript: list[TranscriptEntry] = attrs.field(factory=list)
    _recorded_keys: dict[str, int] = attrs.field(factory=dict)  # key -> transcript index
    mutants: frozenset[str] = frozenset()

    def receive_completion(self, completion: Completion, now_ms: int) -> CompletionAck:
        assert completion.requester == self.session_key
        if completion.key in self._recorded_keys and MUTANT_DEDUPE_OFF not in self.mutants:
            return CompletionAck(completion.key, completion.run_id, accepted=False)
        self._recorded_keys[completion.key] = len(self.transcript)
        self.transcript.append(
            TranscriptEntry(completion.run_id, completion.key, completion.status,
                            completion.text, now_ms)
        )
        return CompletionAck(completion.key, completion.run_id, accepted=True)


def child_session_key(requester_key: str, child_id: str) -> str:
    """``agent:<agentId>:subagent:<id>``; a nested child appends another segment (reference §a)."""
    if ":subagent:" in requester_key:
        return f"{requester_key}:subagent:{child_id}"
    parts = requester_key.split(":")
    agent_id = parts[1] if len(parts) > 1 and parts[0] == "agent" else "main"
    return f"agent:{agent_id}:subagent:{child_id}"
