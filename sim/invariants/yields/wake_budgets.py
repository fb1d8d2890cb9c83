"""YLD-3: a batch wake's attempt budget, from the gateway's view of each wake (split from
sim/invariants/yields/yield_batches.py, whose readings it shares).

Each wake's sends (``gateway.send``) and how each was answered: the gateway's refusals (``fault``
records carrying an error), the session refusing to take it (``requester.wake_refused``: its
yielded turn abandoned, or the session busy in another turn; the reason it gives is not read),
the transcript taking it (``requester.accept``) and whether the turn it resumed answered visibly:
its reply reached the session's conversation (``conversation.reply``). Never the outbox's own
records nor what the session says of its reply (``visible_reply``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.lineage import killed_silently
from sim.invariants.observations import asked_runs, rejection_class
from sim.invariants.yields.seen import (
    _descendants,
    _overlap,
    _seen,
    _wake_of,
    batches,
    wave_batches,
)
from sim.invariants.yields.yield_batches import _is_private
from sim.trace import Record

RETRY_DELAYS_MS = (30_000, 120_000)
MAX_ATTEMPTS = 3
MAX_REPLAYS = 3
SESSION_REFUSAL = "requester.wake_refused"


def wake_budgets(trace: Sequence[Record]) -> list[Violation]:
    """YLD-3 from the gateway's view of each wake: at most three attempts; a fresh key
    (``:retry-n``) only after the previous key was refused as not delivered or taken by a
    yielded turn that gave the conversation no visible reply (never after a send that may have
    landed unanswered), 30 s and then 120 s later (plus any downtime of the delivery process).
    A session that refused a wake (busy in another turn: requester_turn_pending; or its turn
    gone) never makes the wake spend an attempt: the next send, if any, is the same key."""
    seen = _seen(trace)
    refusals: dict[str, list[Record]] = {}
    for r in seen.wake_faults:
        if r.kind == SESSION_REFUSAL or "error" in r.data:
            refusals.setdefault(r.data["key"], []).append(r)
    # Each key's answers (acceptances and refusals, seq order), for _second_answer: a busy
    # session refuses a wake every 30 s for as long as its turn stays open, and rescanning every
    # answer for each refusal would cost the square of their number.
    answered: dict[str, list[int]] = {}
    for a in sorted([*seen.wake_accepts, *seen.wake_faults], key=lambda a: a.seq):
        if "key" in a.data:
            answered.setdefault(a.data["key"], []).append(a.seq)
    violations = []
    for batch in [*batches(trace), *wave_batches(trace)]:
        sends = _wake_of(batch, seen.wake_sends)
        accepts = _wake_of(batch, seen.wake_accepts)
        keys = list(dict.fromkeys(r.data["key"] for r in sends))
        send_seqs = [s.seq for s in sends]  # in trace order: bisected, never rescanned
        sends_by_key: dict[str, list[int]] = {}
        for r in sends:
            sends_by_key.setdefault(r.data["key"], []).append(r.seq)
        for refused_by_session in seen.wake_faults:
            if refused_by_session.kind != SESSION_REFUSAL \
                    or refused_by_session.data["key"] not in sends_by_key \
                    or _second_answer(refused_by_session, sends_by_key, answered):
                continue
            i = bisect.bisect_right(send_seqs, refused_by_session.seq)
            after = sends[i] if i < len(sends) else None
            if after is None or after.data["key"] == refused_by_session.data["key"]:
                continue
            # A refusal that arrives late (its send held on the way, or a duplicate of it) may
            # follow a later send of the same key that the gateway refused as not delivered or
            # that a turn took: that answer moves the key (judged below), not the session's.
            last = sends[i - 1] if i > 0 else None
            moved_by_gateway = last is not None and any(
                last.seq < f.seq < after.seq and f.data["key"] == last.data["key"]
                and f.kind != SESSION_REFUSAL
                for f in [*refusals.get(last.data["key"], []), *accepts])
            if not moved_by_gateway:
                violations.append(Violation(
                    "wake-budgets", "YLD-3", f"the wake of {batch.turn} moved to "
                    f"{after.data['key']} after {refused_by_session.actor} refused it (an "
                    "attempt spent on a session that did not take it)",
                    (refused_by_session.seq, after.seq)))
        if len(keys) > MAX_ATTEMPTS:
            violations.append(Violation("wake-budgets", "YLD-3", f"the wake of {batch.turn} "
                                        f"used {len(keys)} attempt keys, over {MAX_ATTEMPTS}",
                                        tuple(r.seq for r in sends)))
        for n, key in enumerate(keys[1:], start=1):
            first = next(r for r in sends if r.data["key"] == key)
            before = [r for r in sends if r.data["key"] == keys[n - 1] and r.t_ms <= first.t_ms]
            refused = [f for f in refusals.get(keys[n - 1], []) if f.t_ms <= first.t_ms]
            # Only a yielded turn owes a visible reply (a wave's wake does not).
            silent = [a for a in accepts if a.data["key"] == keys[n - 1]
                      and ":yield-" in a.data["key"] and a.seq not in seen.answered
                      and a.t_ms <= first.t_ms]
            # The session records a key once: once it took the key without a visible reply,
            # every other send of that key lands as a duplicate and can show nothing more.
            # Refusals prove nothing about other sends: each must have been refused.
            if not silent and (not refused or len(refused) < len(before)):
                violations.append(Violation(
                    "wake-budgets", "YLD-3", f"the wake of {batch.turn} moved to the fresh key "
                    f"{key} although a send of {keys[n - 1]} may have landed",
                    (*(r.seq for r in before), first.seq)))
                continue
            delay = RETRY_DELAYS_MS[min(n, len(RETRY_DELAYS_MS)) - 1]
            # The answer the retry followed: the last one at least the delay before it (a key
            # refused, then replayed and taken without a visible reply, has two).
            answers = sorted([*refused, *silent], key=lambda a: a.seq)
            timely = [a for a in answers if a.t_ms + delay <= first.t_ms]
            why = timely[-1] if timely else answers[-1]
            late = why.t_ms + delay + _overlap(seen.downtime, why.t_ms, first.t_ms)
            # A member sent on its own meanwhile (an operator's redrive, a correction: a new
            # generation) is not settled until that try is answered, and the wake waits for it
            # (reference §c9: a batch wakes only when every member is terminal); its answer may
            # come late (seed 5173): only the lower bound holds then.
            member_sent = any(why.t_ms <= s.t_ms <= first.t_ms for run_id in batch.members
                              for s in seen.sends.get(run_id, []))
            # A refusal answers at once; a reply's acknowledgement may come late (only the lower
            # bound holds then, also when a later refusal of a replay came before that late
            # acknowledgement: seed 1846).
            if first.t_ms < why.t_ms + delay or (why.kind == "fault" and not silent
                                                 and not member_sent and first.t_ms > late):
                violations.append(Violation(
                    "wake-budgets", "YLD-3", f"attempt {n + 1} of the wake of {batch.turn} was "
                    f"sent {first.t_ms - why.t_ms} ms after attempt {n} failed, not "
                    f"{delay} ms", (why.seq, first.seq)))
    return violations


def _second_answer(refusal: Record, sends: dict[str, list[int]],
                   answered: dict[str, list[int]]) -> bool:
    """Whether the send this refusal answers was already answered: the refusal is then the
    answer to a copy the network duplicated (a ``duplicate`` fault), which the outbox reads as
    stale (seed 8830). ``sends``, ``answered``: each key's sends' and answers' seqs, in order."""
    key = refusal.data["key"]
    own = sends.get(key, [])
    before = bisect.bisect_left(own, refusal.seq)
    if not before:
        return False
    send = own[before - 1]  # the last send of that key before the refusal
    seqs = answered.get(key, [])
    first = bisect.bisect_right(seqs, send)  # the first answer after that send
    return first < len(seqs) and seqs[first] < refusal.seq


def wake_attempts_used(trace: Sequence[Record]) -> list[Violation]:
    """YLD-3 one under the budget (reference §c11 "Batch wake": three attempts, 30 s then 120 s
    apart; an unanswered send replayed on its key up to three times): a yielded batch's wake
    whose latest send the gateway refused as not delivered (transiently or unclassified, not
    permanently nor after part of it went out) while attempts and replays are left is sent
    again, on a fresh key or (a key that may have landed) the same one: after fewer than three
    sends, or (a public wake) fewer than three attempt keys and fewer than three sends past
    each key's first. Read once the world is quiescent;
    a batch whose requester was reset or deleted after the yield, one with a descendant (its
    deferrals may close it) and one with a member killed or steered (it may be consumed without
    a wake) may close otherwise. A wake some send of which the yielded turn took
    (``requester.accept`` of one of its keys) and answered visibly (``conversation.reply``) has
    reached its requester and owes no further send, whatever a later replay of that key met:
    the take's acknowledgement came back slow, the unanswered key was replayed and refused,
    then the late acknowledgement closed the wake done (seeds 6241, 10745, 13254, 18818; the
    rule `wake-sends-budget` applies since seed 1468). A take without a visible reply does not
    count: the wake then owes a fresh key (`wake-budgets`)."""
    seen = _seen(trace)
    if seen.end is None or seen.end.data["reason"] != "quiescent":
        return []
    killed = killed_silently(trace)
    asked = asked_runs(trace)
    violations = []
    for batch in batches(trace):
        sends = _wake_of(batch, seen.wake_sends)
        if not sends or (seen.lifecycle.get(batch.session) and any(
                r.t_ms >= batch.yielded.t_ms for r in seen.lifecycle[batch.session])) or any(
                run_id in killed or _descendants(seen, run_id) for run_id in batch.members):
            continue
        if any(a.seq in seen.answered for a in _wake_of(batch, seen.wake_accepts)):
            continue  # taken, answered visibly: delivered (see above)
        keys = list(dict.fromkeys(r.data["key"] for r in sends))
        last = sends[-1]
        # Every attempt and every replay is a send of its own (a restart may replay one more),
        # so fewer than three sends leave both budgets unspent. A public wake's fresh keys
        # count its attempts, and its sends past each key's first its replays, at most; a
        # private wake keeps one key across attempts (reference §c10), so only its sends count.
        public = not any(_is_private(asked.get(run_id)) for run_id in batch.members)
        if len(sends) >= MAX_ATTEMPTS and not (
                public and len(keys) < MAX_ATTEMPTS and len(sends) - len(keys) < MAX_REPLAYS):
            continue
        refused = [f for f in seen.wake_faults if f.kind == "fault" and f.seq > last.seq
                   and f.data.get("key") == last.data["key"] and "error" in f.data
                   and rejection_class(f) not in ("permanent", "sent")]
        if refused:
            violations.append(Violation(
                "wake-attempts-used", "YLD-3", f"the wake of {batch.turn} was refused as not "
                f"delivered at {refused[0].t_ms} ms on attempt {len(keys)} of {MAX_ATTEMPTS} "
                "and never sent again", (last.seq, refused[0].seq, seen.end.seq)))
    return violations


INVARIANTS = (
    Invariant("wake-budgets", "YLD-3", "safety",
              "A wake makes at most three attempts, 30 s then 120 s apart, each fresh key only "
              "after the previous one was refused or answered without a visible reply.",
              wake_budgets),
    Invariant("wake-attempts-used", "YLD-3", "liveness",
              "A wake refused as not delivered with attempts (and replays) left is sent again: "
              "refused on its first two attempts, it makes the third.",
              wake_attempts_used),
)
