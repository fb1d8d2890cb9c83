"""YLD-3: a batch wake's sends counted at the gateway against its budget (issue 24; reference
§c11 "Batch wake", §c17 "A busy requester never spends a wake's budget").

Read only from what the gateway and the requester saw: each send of a wake (``gateway.send``)
and each answer to it: the gateway's refusal (a ``fault`` carrying an error), the session
refusing it (``requester.wake_refused``, whatever reason it gives), taking it
(``requester.accept``) or answering it as a duplicate (``requester.duplicate``), or its being
gone (``requester.gone``). A session's answer travels back to the delivery process and may be
delayed past the answer timeout or lost on the way (a ``fault`` of kind ``delay`` of a
``CompletionAck``, ``ack-slow`` or ``send-ambiguous`` at that instant): such an answer counts as
never seen. The gateway's own refusals reach the delivery process at once (one process). Never
the outbox's records (``batch.*``: attempt and replay counts) nor the model's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.yields import _overlap, _seen, _Seen, _wake_of, batches, wave_batches
from sim.trace import Record

MAX_REPLAYS = 3
RECHECK_MS = 30_000  # a busy requester's wake is tried again after this (reference §c17)
SESSION_ANSWERS = ("requester.wake_refused", "requester.accept", "requester.duplicate",
                   "requester.gone")
ACK_FAULTS = ("ack-slow", "send-ambiguous")


@attrs.define
class _Send:
    record: Record
    answer: Record | None = None  # the answer the delivery process saw, if any


def _answers(trace: Sequence[Record]) -> dict[str, list[Record]]:
    """Every answer to a wake send the delivery process saw, by key (not one whose way back
    was delayed or lost at the instant the session answered)."""
    by_key: dict[str, list[Record]] = {}
    lossy: set[int] = set()  # instants at which an acknowledgement was delayed or lost
    for r in trace:
        if r.kind == "fault" and (r.data.get("kind") in ACK_FAULTS or (
                r.data.get("kind") == "delay" and r.data.get("message") == "CompletionAck")):
            lossy.add(r.t_ms)
    for r in trace:
        key = str(r.data.get("key") or "")
        if not key.startswith("announce:requester-settle:"):
            continue
        if r.kind == "fault" and "error" in r.data:
            by_key.setdefault(key, []).append(r)
        elif r.kind in SESSION_ANSWERS and r.t_ms not in lossy:
            by_key.setdefault(key, []).append(r)
    return by_key


def wake_sends_budget(trace: Sequence[Record]) -> list[Violation]:
    """A wake's key is sent again only (a) after the session refused it (busy in another turn:
    the wake stays armed and spends nothing), (b) after the delivery process restarted (the
    same key is replayed, no new transition), or (c) as a replay of an earlier send of that key
    whose answer was never seen, at most three such replays per batch. A session's refusal
    that was seen never ends the wake: the same key goes again (within the 30 s recheck plus
    any downtime) unless the session was reset or deleted, or the run ended first."""
    seen = _seen(trace)
    answers = _answers(trace)
    end_ms = seen.end.t_ms if seen.end is not None else 2**62
    crashes = [down for down, _ in seen.downtime]
    violations: list[Violation] = []
    for batch in [*batches(trace), *wave_batches(trace)]:
        sends = _wake_of(batch, seen.wake_sends)
        by_key: dict[str, list[_Send]] = {}
        replays: list[Record] = []
        for send in sends:
            key = send.data["key"]
            earlier = by_key.setdefault(key, [])
            _match(earlier, answers.get(key, []), send.seq)
            if earlier:
                why = _why_again(earlier, send, crashes)
                if why is None:
                    violations.append(Violation(
                        "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of "
                        f"{batch.session} sent {key} again at {send.t_ms} ms although every "
                        "earlier send of it was answered (refused by the gateway or taken) and "
                        "no restart or busy session explains it",
                        (*(s.record.seq for s in earlier), send.seq)))
                elif why == "replay":
                    replays.append(send)
            earlier.append(_Send(send))
        if len(replays) > MAX_REPLAYS:
            violations.append(Violation(
                "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of {batch.session} "
                f"was replayed {len(replays)} times, over {MAX_REPLAYS}",
                tuple(r.seq for r in replays)))
        for key, key_sends in by_key.items():
            _match(key_sends, answers.get(key, []), 2**62)
            last = key_sends[-1]
            refusal = last.answer
            if refusal is None or refusal.kind != "requester.wake_refused":
                continue
            later = refusal.t_ms + RECHECK_MS + _overlap(seen.downtime, refusal.t_ms, end_ms)
            # A reset or delete since the batch began abandons its wake (refused, rightly
            # ended); a refusal while no turn of the session ran is not a busy one.
            since = batch.yielded.t_ms if batch.turn != "wave" else 0
            reset = any(r.t_ms >= since for r in seen.lifecycle.get(batch.session, []))
            if reset or later + 1_000 > end_ms or not _busy(seen, batch.session, refusal.t_ms):
                continue
            violations.append(Violation(
                "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of {batch.session} "
                f"was never sent again after {refusal.actor} refused {key} at "
                f"{refusal.t_ms} ms: a busy requester spends nothing and the wake stays armed",
                (last.record.seq, refusal.seq)))
    return violations


def _match(sends: list[_Send], answers: list[Record], before_seq: int) -> None:
    """Give each answer seen so far to the latest earlier send of its key still unanswered
    (a gateway refusal answers the send it follows; a session answers what reached it last)."""
    for answer in answers:
        if answer.seq >= before_seq:
            break
        if any(s.answer is answer for s in sends):
            continue
        open_sends = [s for s in sends if s.answer is None and s.record.seq < answer.seq]
        if open_sends:
            open_sends[-1].answer = answer


def _why_again(earlier: list[_Send], send: Record, crashes: list[int]) -> str | None:
    previous = earlier[-1]
    if any(previous.record.t_ms <= down <= send.t_ms for down in crashes):
        return "restart"
    if previous.answer is not None and previous.answer.kind == "requester.wake_refused":
        return "armed"
    if any(s.answer is None for s in earlier):
        return "replay"
    return None


def _busy(seen: _Seen, session: str, at_ms: int) -> bool:
    """Whether a turn of the session, as the harness asked for it, was running at ``at_ms``."""
    return any(start <= at_ms < stop for start, stop in seen.busy.get(session, []))


INVARIANTS = (
    Invariant("wake-sends-budget", "YLD-3", "safety",
              "A wake's key goes again only after a busy session refused it, after a restart, "
              "or as one of at most three replays of a send whose answer was never seen; a busy "
              "session's refusal never ends the wake.",
              wake_sends_budget),
)
