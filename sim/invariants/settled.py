"""When a child run settled, as an outsider sees it: its own end (``child.end``), then its own
delivery as the gateway and the transcripts saw it (``trail``: each per-child send of it, the
transcript taking it or answering it as a duplicate, a refusal, an acknowledgement lost or slowed
on its way back), never the registry's own settle, hand-over, give-up or cleanup records. Read by
``wake-not-delayed`` (sim/invariants/yields/yield_batches.py)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import ClassVar

import attrs

from sim.invariants.index import of_kinds, shared
from sim.invariants.lineage import killed_silently
from sim.invariants.observations import (
    Asked,
    announces_nothing,
    asked_runs,
    is_wake,
    key_runs,
    rejection_class,
)
from sim.trace import Record

# A required completion's expiry, counted from the run's end (reference §c11): the registry gives
# up at its first decision at or past it, never sooner but on a refusal for good. That decision
# is not cut to the deadline (issue 34, OpenClaw 2026.9.6): the resume of a backoff decided
# before it comes less than one capped backoff (300 s) past it, an attempt in flight at it ends
# when its transport tries do, and a process down at it decides when it is back. An outsider
# sees no settle at the give-up itself (the registry's record is the model's), so the earliest
# a run may have settled by is at most its expiry, never the give-up's later instant.
EXPIRY_MS = 30 * 60_000
# A send's answer timeout (announceTimeoutMs, reference §c11): an answer held this long comes
# after the registry gave the try up as unanswered.
ANSWER_TIMEOUT_MS = 120_000

# What may answer a run's own send: its requester taking it (or refusing it), the gateway's
# refusals and its lost or slowed acknowledgements (``fault``).
TRAIL_KINDS = ("requester.accept", "requester.duplicate", "requester.private_refused",
               "requester.gone", "gateway.refused", "fault")
UNKNOWN = -1  # the trail ends where an outsider cannot tell when the run settled


def own_settle(end: Record | None, trail: Sequence[Record], asked: Asked | None,
               member: bool, crashes: Sequence[int] = ()) -> int | None:
    """When the run settled as far as an outsider can tell: its end (``end``), then its own
    delivery's last answer (the transcript taking it, or a refusal: a member's refused try hands
    it to its batch; another run's refusal settles it only when permanent). None: it never ended;
    UNKNOWN: its trail ends in a send nobody answered, an acknowledgement lost, a refusal it
    may retry after, or (for a descendant) no send at all (then its give-up at its expiry, or
    its deferral, shows nowhere but in the registry). A member whose earlier send may have
    landed (nobody answered it, or the delivery process died, ``crashes``, after the run ended:
    a restarted process counts any earlier attempt as possibly landed) is never handed to its
    batch: only the transcript taking it, or its expiry (UNKNOWN), settles it (seed 983). An
    answer after a crash (``crashes``) of the delivery process that followed the send was heard
    by no live process: UNKNOWN (seed 2782)."""
    if end is None:
        return None
    if asked is not None and not asked.required:
        return end.t_ms  # nothing owed: it settles as it ends
    last = max((i for i, r in enumerate(trail) if r.kind == "gateway.send"), default=None)
    if last is None:
        return end.t_ms if member else UNKNOWN  # a member is handed over as it ends
    send = trail[last]
    if member and _may_have_landed(end, trail, last, crashes):
        member = False  # a refusal of it hands nothing over
    settled: int | None = None
    for r in trail[last + 1:]:
        if any(send.t_ms <= c <= r.t_ms for c in crashes):
            # The delivery process died between the send and this answer: the answer reached
            # no live process (its acknowledgement is dropped), so the registry never learned
            # it and retries or waits for the run's expiry (seed 2782). A crash in the same
            # millisecond counts as before the answer.
            return UNKNOWN
        if r.kind in ("requester.accept", "requester.duplicate") and \
                r.data["key"] == send.data["key"] and settled is None:
            settled = r.t_ms
        elif r.kind == "fault" and r.data["kind"] == "send-ambiguous":
            return UNKNOWN  # the acknowledgement was lost: it waits for a replay or expiry
        elif r.kind == "fault" and r.data["kind"] == "delay" and settled == r.t_ms and \
                r.data.get("message") == "CompletionAck" and \
                r.data.get("key") == send.data["key"]:
            # The taking's acknowledgement held on its way back (the delay names its key):
            # the registry hears it that much later, before any gateway hold (seed 80660).
            settled += int(r.data.get("delay_ms") or 0)
        elif r.kind == "fault" and r.data["kind"] == "ack-slow" and settled is not None:
            settled += int(r.data.get("delay_ms") or 0)
        elif (klass := rejection_class(r)) is not None and settled is None:
            settled = r.t_ms if member or klass in ("permanent", "sent") else UNKNOWN
    return UNKNOWN if settled is None else settled


def _may_have_landed(end: Record, trail: Sequence[Record], last: int,
                     crashes: Sequence[int]) -> bool:
    """Whether a send before the trail's ``last`` one may have reached the requester: one that
    nobody answered before the next, an acknowledgement lost or held past the answer timeout,
    or a restart of the delivery process after the run ended (what it attempted before dying
    is not known to it)."""
    if any(end.t_ms <= c <= trail[last].t_ms for c in crashes):
        return True
    answered = True
    for r in trail[:last]:
        if r.kind == "gateway.send":
            if not answered:
                return True
            answered = False
        elif r.kind == "fault" and (r.data["kind"] == "send-ambiguous" or (
                r.data["kind"] in ("ack-slow", "delay")
                and int(r.data.get("delay_ms") or 0) >= ANSWER_TIMEOUT_MS)):
            # Lost, or held at or past the send's answer timeout: the registry gave the try
            # up as unanswered, so it counts it as possibly landed (seed 14083).
            return True
        elif r.kind != "fault" or rejection_class(r) is not None:
            answered = True
    return not answered


@attrs.define(init=False)
class EarliestSettle:
    """The earliest a run's own delivery can have settled, from what was asked and seen alone,
    fed the trace record by record (``see``): when its requester took it (on its own or in a
    batch wake), when it ended owing nothing (asked as not required, an exact ANNOUNCE_SKIP
    reply, or killed by its requester's reset or delete, or a kill, before it ended: §c17, §c18),
    when the gateway refused it for good (a permanent refusal, or a break after part of it
    reached the platform), when its requester session was reset or deleted after a private
    spawn (PRV-3: it is closed then), else at its expiry (30 minutes after its end: the earliest
    the registry's give-up can come, which itself comes at the first decision at or past it,
    up to one backoff later, ``EXPIRY_MS``); a member
    of a yield batch (``members``) is handed to its batch as it ends.
    Never the registry's own settle, give-up, skip or close records: a model that
    wrongly gives a run up must not excuse what waited on it (descendants-first)."""

    # The kinds :meth:`see` reads: an oracle may feed it only these (``index.of_kinds``).
    KINDS: ClassVar[tuple[str, ...]] = ("child.end", "spawn", "requester.accept", "world.lifecycle",
                                        "world.delete-session", "fault", "requester.gone",
                                        "gateway.refused")

    asked: dict[str, Asked]
    at: dict[str, int]  # run_id -> the earliest evidence of its settle seen so far
    seqs: dict[str, int]  # run_id -> that evidence's trace position
    ends: dict[str, int]
    end_seqs: dict[str, int]  # run_id -> its end's trace position
    # session -> its private runs asked so far (they are closed by the session's reset)
    private: dict[str, list[str]]
    members: Collection[str]
    killed: Collection[str]  # runs a reset, delete or kill stopped before they ended

    def __init__(self, trace: Sequence[Record], members: Collection[str] = ()) -> None:
        self.asked = asked_runs(trace)
        self.at, self.seqs, self.ends, self.end_seqs, self.private = {}, {}, {}, {}, {}
        self.members = members
        self.killed = killed_silently(trace)  # known before each such run's end

    def _settle(self, run_id: str, t_ms: int, seq: int) -> None:
        if run_id not in self.at:
            self.at[run_id] = t_ms
            self.seqs[run_id] = seq

    def earliest(self, run_id: str) -> tuple[int, int] | None:
        """The earliest (time, trace position) the ended run may have settled at (its expiry
        at position -1: any record at that time may follow it); None: it never ended."""
        end = self.ends.get(run_id)
        if end is None:
            return None
        at = self.at.get(run_id)
        if at is None or at >= end + EXPIRY_MS:
            return end + EXPIRY_MS, -1
        return at, self.seqs[run_id]

    def see(self, r: Record) -> None:
        kind = r.kind
        if kind == "child.end":
            run_id = r.data["run_id"]
            if run_id not in self.ends:
                self.ends[run_id] = r.t_ms
                self.end_seqs[run_id] = r.seq
            asked = self.asked.get(run_id)
            result = r.data["result"]
            if run_id in self.members or run_id in self.killed or (
                    asked is not None and not asked.required) or announces_nothing(result):
                self._settle(run_id, r.t_ms, r.seq)
        elif kind == "spawn":
            asked = self.asked.get(r.data["run_id"])
            if asked is not None and asked.request.data.get("completion_target") == "parent":
                self.private.setdefault(asked.request.data["requester"], []).append(asked.run_id)
        elif kind == "requester.accept":
            key = r.data["key"]
            if is_wake(key):
                for run_id in key_runs(key):
                    self._settle(run_id, r.t_ms, r.seq)
            else:
                self._settle(r.data["run_id"], r.t_ms, r.seq)
        elif kind in ("world.lifecycle", "world.delete-session"):
            for run_id in self.private.pop(r.data["session"], []):
                self._settle(run_id, r.t_ms, r.seq)
        elif kind in ("fault", "requester.gone", "gateway.refused") and \
                rejection_class(r) in ("permanent", "sent"):
            self._settle(r.data["run_id"], r.t_ms, r.seq)

    def settled(self, run_id: str, t_ms: int, seen_to: int | None = None) -> bool:
        """Whether the run may have settled by ``t_ms``; with ``seen_to``, as this reading would
        have answered when fed the records up to that trace position only (a reading fed the
        whole trace, :func:`settles`, answers a walk at each of its records: a fact counts once
        its record is at or before ``seen_to``, and each fact kept is the first of its kind)."""
        end = self.ends.get(run_id)
        if end is None or end > t_ms or (seen_to is not None and self.end_seqs[run_id] > seen_to):
            return False
        at = self.at.get(run_id)
        if at is None or (seen_to is not None and self.seqs[run_id] > seen_to):
            at = end + EXPIRY_MS  # no evidence yet: its expiry
        return at <= t_ms or end + EXPIRY_MS <= t_ms


def settles(trace: Sequence[Record]) -> EarliestSettle:
    """:class:`EarliestSettle` (no yield batch's members) fed every record it reads, once per
    trace (``index.shared``; read, never change): three oracles read it (findings-scoped and
    descendants-first while they walk, with ``seen_to``; the wave oracles at the end), and each
    fed its own copy record by record."""
    return shared(trace, "settles", _settles)


def _settles(trace: Sequence[Record]) -> EarliestSettle:
    settle = EarliestSettle(trace)
    for r in of_kinds(trace, EarliestSettle.KINDS):
        settle.see(r)
    return settle
