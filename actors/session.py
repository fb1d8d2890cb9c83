"""A requester session's side of a hand-off: its transcript and source-delivery facts. Pure.

A completion is appended to the transcript once per idempotency key; a repeat of a key the session
has already recorded (a retry after a lost acknowledgement, a duplicated message, a replay after a
delivery-actor restart) is acknowledged without reaching the requester's model again (DEL-3).
"""

from __future__ import annotations

import attrs

from actors.messages import Completion, CompletionAck, RecoveredAnswer, TranscriptMirror

# Known-bug variant (SIM-8, listed in actors/mutants.py): the session records every completion.
MUTANT_DEDUPE_OFF = "dedupe-off"
# ... and compaction drops the turn identities of the inputs it folds (DEL-7).
MUTANT_COMPACTION_FORGETS_TURNS = "compaction-drops-turns"


@attrs.define
class TranscriptEntry:
    run_id: str
    key: str
    status: str
    text: str
    at_ms: int
    mirror: bool = False  # a tagged transcript mirror of a direct delivery (DEL-8)


@attrs.define
class SessionCore:
    session_key: str
    transcript: list[TranscriptEntry] = attrs.field(factory=list)
    _recorded_keys: dict[str, int] = attrs.field(factory=dict)  # key -> transcript index
    mutants: frozenset[str] = frozenset()
    _mirrored: set[str] = attrs.field(factory=set)  # keys whose mirror is recorded (DEL-8)
    _compacted: set[str] = attrs.field(factory=set)  # keys folded by a compaction (DEL-7)

    def receive_completion(self, completion: Completion | RecoveredAnswer,
                           now_ms: int) -> CompletionAck:
        assert completion.requester == self.session_key
        if completion.key in self._recorded_keys and MUTANT_DEDUPE_OFF not in self.mutants:
            return CompletionAck(completion.key, completion.run_id, accepted=False)
        self._recorded_keys[completion.key] = len(self.transcript)
        self.transcript.append(
            TranscriptEntry(completion.run_id, completion.key, completion.status,
                            completion.text, now_ms)
        )
        return CompletionAck(completion.key, completion.run_id, accepted=True)

    def compact(self, now_ms: int) -> int:
        """Fold the transcript into one summary entry (context compaction). The keyed inputs
        keep their turn identity: the recorded keys survive, so a resend of an input from before
        the compaction is still known (DEL-7). Returns how many entries were folded."""
        folded = len(self.transcript)
        if folded == 0:
            return 0
        self.transcript = [TranscriptEntry("", "compaction", "summary",
                                           f"[{folded} earlier entries compacted]", now_ms)]
        if MUTANT_COMPACTION_FORGETS_TURNS in self.mutants:
            self._recorded_keys.clear()
        else:
            self._compacted.update(self._recorded_keys)
            self._recorded_keys = dict.fromkeys(self._recorded_keys, 0)  # now in the summary
        return folded

    def compacted_since(self, key: str) -> bool:
        """Was ``key``'s input folded by a compaction (and still known by its identity)?"""
        return key in self._compacted

    def record_mirror(self, mirror: TranscriptMirror, now_ms: int) -> bool:
        """Append a tagged mirror once per key (a repeat is dropped): it records history
        without recording (or closing) the keyed input, so it never makes the session take a
        later input for a duplicate."""
        if mirror.key in self._mirrored:
            return False
        self._mirrored.add(mirror.key)
        self.transcript.append(TranscriptEntry(mirror.run_id, mirror.key, "mirror", mirror.text,
                                               now_ms, mirror=True))
        return True


def child_session_key(requester_key: str, child_id: str) -> str:
    """``agent:<agentId>:subagent:<id>``; a nested child appends another segment (reference §a)."""
    if ":subagent:" in requester_key:
        return f"{requester_key}:subagent:{child_id}"
    parts = requester_key.split(":")
    agent_id = parts[1] if len(parts) > 1 and parts[0] == "agent" else "main"
    return f"agent:{agent_id}:subagent:{child_id}"
