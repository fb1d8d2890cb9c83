"""A requester session's side of a hand-off: its transcript and source-delivery facts. Pure.

A completion is appended to the transcript once per idempotency key; a repeat of a key the session
has already recorded (a retry after a lost acknowledgement, a duplicated message, a replay after a
delivery-actor restart) is acknowledged without reaching the requester's model again (DEL-3).

Receipts (DEL-12): every completion carries its producer's end time. One run's receipts share a
reply (its key without the generation suffix): the receipt with the newer end time owns it, so
a correction that ends later supersedes the reply (a new transcript entry that replaces it); an
equal end time keeps the first accepted; an older receipt arriving late is acknowledged and
dropped.
"""

from __future__ import annotations

import enum

import attrs

from actors.messages import Completion, CompletionAck, RecoveredAnswer, TranscriptMirror
from actors.mutants import (
    MUTANT_COMPACTION_FORGETS_TURNS,
    MUTANT_DEDUPE_OFF,
    MUTANT_EQUAL_END_REPLACES,
    MUTANT_RECEIPT_BY_ARRIVAL,
)
from actors.records.keys import is_subagent


class Receipt(enum.Enum):
    """What a session did with a completion receipt."""

    ACCEPTED = "accepted"  # the first receipt of its reply
    SUPERSEDED = "superseded"  # a newer end time: it replaces the reply
    DUPLICATE = "duplicate"  # its key and end time were taken already
    EQUAL_END = "equal-end"  # another receipt of the reply with the same end time came first
    OLDER = "older"  # an older end time than the reply's: arrived out of order


def reply_key(key: str, generation: int) -> str:
    """The reply a receipt belongs to: its idempotency key without the generation suffix."""
    suffix = f":g{generation}"
    return key[:-len(suffix)] if generation > 1 and key.endswith(suffix) else key


@attrs.define
class TranscriptEntry:
    run_id: str
    key: str
    status: str
    text: str
    at_ms: int
    mirror: bool = False  # a tagged transcript mirror of a direct delivery (DEL-8)
    ended_at_ms: int = 0
    replaces: TranscriptEntry | None = None  # the reply this entry supersedes


@attrs.define
class SessionCore:
    session_key: str
    transcript: list[TranscriptEntry] = attrs.field(factory=list)
    # (key, end time) of each receipt taken -> transcript index
    _recorded: dict[tuple[str, int], int] = attrs.field(factory=dict)
    # reply key -> the entry owning it (kept through a compaction, which folds the entry)
    _replies: dict[str, TranscriptEntry] = attrs.field(factory=dict)
    mutants: frozenset[str] = frozenset()
    _mirrored: set[str] = attrs.field(factory=set)  # keys whose mirror is recorded (DEL-8)
    _compacted: set[str] = attrs.field(factory=set)  # keys folded by a compaction (DEL-7)

    def receive_completion(self, completion: Completion | RecoveredAnswer, now_ms: int
                           ) -> tuple[CompletionAck, Receipt]:
        assert completion.requester == self.session_key
        dedupe = MUTANT_DEDUPE_OFF not in self.mutants
        ended = completion.ended_at_ms
        if (completion.key, ended) in self._recorded and dedupe:
            return CompletionAck(completion.key, completion.run_id, False), Receipt.DUPLICATE
        reply = reply_key(completion.key, completion.generation)
        owner = self._replies.get(reply)
        verdict = Receipt.ACCEPTED
        if owner is not None and dedupe:
            owner_ended = owner.ended_at_ms
            if ended > owner_ended or (ended < owner_ended
                                       and MUTANT_RECEIPT_BY_ARRIVAL in self.mutants) or (
                    ended == owner_ended and MUTANT_EQUAL_END_REPLACES in self.mutants):
                verdict = Receipt.SUPERSEDED
            else:
                self._recorded[(completion.key, ended)] = -1  # taken by the owning reply
                late = Receipt.EQUAL_END if ended == owner_ended else Receipt.OLDER
                return CompletionAck(completion.key, completion.run_id, False), late
        self._recorded[(completion.key, ended)] = len(self.transcript)
        entry = TranscriptEntry(completion.run_id, completion.key, completion.status,
                                completion.text, now_ms, ended_at_ms=ended, replaces=owner)
        self._replies[reply] = entry
        self.transcript.append(entry)
        return CompletionAck(completion.key, completion.run_id, accepted=True), verdict

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
            self._recorded.clear()
            self._replies.clear()
        else:
            self._compacted.update(key for key, _ in self._recorded)
            self._recorded = dict.fromkeys(self._recorded, 0)  # now in the summary
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
    if is_subagent(requester_key):
        return f"{requester_key}:subagent:{child_id}"
    parts = requester_key.split(":")
    agent_id = parts[1] if len(parts) > 1 and parts[0] == "agent" else "main"
    return f"agent:{agent_id}:subagent:{child_id}"
