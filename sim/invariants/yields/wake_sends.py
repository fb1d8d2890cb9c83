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

from bisect import bisect_left
from collections.abc import Sequence

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs, is_wake, rejection_class
from sim.invariants.yields.yield_batches import (
    _is_private,
    _overlap,
    _Seen,
    _seen,
    _wake_of,
    batches,
    wave_batches,
)
from sim.trace import Record

MAX_REPLAYS = 3
MAX_ATTEMPTS = 3
ANSWER_TIMEOUT_MS = 120_000
RECHECK_MS = 30_000  # a busy requester's wake is tried again after this (reference §c17)
SESSION_ANSWERS = ("requester.wake_refused", "requester.accept", "requester.duplicate",
                   "requester.gone", "gateway.refused")
ACK_FAULTS = ("ack-slow", "send-ambiguous")
GATEWAY_REFUSALS = ("fault", "gateway.refused")  # the gateway's own answers, at once


@attrs.frozen
class _Answer:
    record: Record
    # When the delivery process had it, at the earliest and at the latest (NEVER: its way back
    # may have been lost); a doubled acknowledgement may get through where one copy is lost.
    first: int
    last: int
    # The answers of its instant (run) each reading of its faults leaves free (:class:`_Hold`).
    frees: tuple[frozenset[int], ...] = ()


@attrs.define
class _Send:
    record: Record
    answer: _Answer | None = None


@attrs.define
class _KeySends:
    """One key's sends so far, in trace order (a maybe-sent stand-in, seq -1, first), with what
    :func:`_match` reads of them kept as they grow: their records' positions, and the positions
    of the answers already given to them. Rebuilt at each match, both were linear in the key's
    sends per send: a busy session's key is sent hundreds of times (seed 207: two thirds of the
    oracle's 17 ms)."""

    sends: list[_Send] = attrs.field(factory=list)
    seqs: list[int] = attrs.field(factory=list)
    given: set[int] = attrs.field(factory=set)
    resume: int = 0  # the first answer :func:`_match` has not looked at

    def add(self, send: _Send) -> None:
        self.sends.append(send)
        self.seqs.append(send.record.seq)


NEVER = 2**62


def _answers(trace: Sequence[Record]) -> dict[str, list[_Answer]]:
    """Every answer to a wake send, by key, with when the delivery process had it. The
    gateway's refusal reaches it at once (one process). A session's answer travels back as an
    acknowledgement: a ``delay`` fault on it (naming its run and key) at that instant holds it
    ``delay_ms`` longer, a ``duplicate`` sends a second copy, then the gateway may hold it
    (``ack-slow``, ``delay_ms``) or lose it (``send-ambiguous``)."""
    by_key: dict[str, list[_Answer]] = {}
    faults: dict[int, list[Record]] = {}  # instant -> the acknowledgement faults noted then
    for r in of_kinds(trace, ("fault",)):
        if r.kind == "fault" and (r.data.get("kind") in ACK_FAULTS or (
                r.data.get("kind") in ("delay", "duplicate")
                and r.data.get("message") == "CompletionAck")):
            faults.setdefault(r.t_ms, []).append(r)
    # The instant's session answers, by run: which of them an acknowledgement fault noted
    # after them may hold is read from all of them together (:func:`_holders`).
    instants: dict[tuple[int, str], list[Record]] = {}
    for r in of_kinds(trace, SESSION_ANSWERS):
        if r.kind in SESSION_ANSWERS:
            instants.setdefault((r.t_ms, r.data.get("run_id", "")), []).append(r)
    holders: dict[tuple[int, str], dict[int, _Hold]] = {}
    for r in of_kinds(trace, (*SESSION_ANSWERS, "fault")):
        if r.kind in SESSION_ANSWERS:
            if is_wake(r.data["key"]):
                at = (r.t_ms, r.data.get("run_id", ""))
                if at not in holders:
                    holders[at] = _holders(instants[at], faults)
                hold = holders[at].get(r.seq)
                way = _way_back(r, faults, hold)
                by_key.setdefault(r.data["key"], []).append(
                    attrs.evolve(way, frees=hold.frees) if hold is not None else way)
        elif r.kind == "fault" and "error" in r.data and is_wake(str(r.data.get("key") or "")):
            by_key.setdefault(r.data["key"], []).append(_Answer(r, r.t_ms, r.t_ms))
    return by_key


@attrs.frozen
class _Hold:
    """Which acknowledgement faults of its instant may hold one answer's acknowledgement, and
    whether it may have got through with none."""

    faults: tuple[Record, ...]
    free: bool
    # The answers of its instant each reading leaves free (one set per reading): read together,
    # two answers one fault follows cannot both be held (seed 40325's forged variant).
    frees: tuple[frozenset[int], ...] = ()


def _held_by(answer: Record, faults: dict[int, list[Record]]) -> Record | None:
    """The ``delay`` fault that holds ``answer``'s acknowledgement on its way to the gateway:
    one naming its run and key at that instant (another answer's delay holds nothing of this
    one: seed 13712)."""
    return next((f for f in faults.get(answer.t_ms, []) if f.seq > answer.seq
                 and f.data["kind"] == "delay"
                 and f.data.get("run_id") == answer.data.get("run_id")
                 and f.data.get("key") == answer.data.get("key")), None)


def _holders(answers: list[Record], faults: dict[int, list[Record]]) -> dict[int, _Hold]:
    """For each answer of one run at one instant (trace positions) that reached the gateway
    then, the acknowledgement faults noted after it that may be its own. The gateway asks the
    fault plan once per acknowledgement it handles (``ack_delay_ms``: at most one fault each,
    none when it goes at once), and an acknowledgement goes after its answer is recorded; so
    each fault holds a different answer before it. The gateway may handle two of one instant in
    either order (the kernel's ties are the scheduler's). An acknowledgement the fault may also
    be about (a ``duplicate`` copy, or one a ``delay`` held until this instant) may take a fault
    instead. Every assignment of the faults that keeps to this is read; an answer may be held
    by any fault one of them gives it, and may have gone at once when one gives it none (seed
    59877: one fault after two answers may be either's; seed 49389: two faults after two
    answers, a take and a duplicate, hold both)."""
    free_ = [a for a in answers if _held_by(a, faults) is None]
    if not free_:
        return {}
    at, run_id = free_[0].t_ms, free_[0].data.get("run_id")
    own = [f for f in faults.get(at, []) if f.data["kind"] in ACK_FAULTS
           and f.data.get("run_id") == run_id and f.seq > free_[0].seq]
    if not own:
        return {}
    # Another acknowledgement of the run may reach the gateway in this instant: a copy the
    # network duplicated (up to 9 s later: sim/faults/plan.py), or one a delay held until now.
    other = any(f.data["kind"] == "duplicate" for t in range(at - 9_000, at + 1, 1_000)
                for f in faults.get(t, [])) or any(
        f.data["kind"] == "delay" and f.data.get("run_id") == run_id
        and f.t_ms + int(f.data.get("delay_ms") or 0) == at
        for t, noted in faults.items() if t < at for f in noted)
    held: dict[int, set[int]] = {a.seq: set() for a in free_}  # answer -> fault positions
    free: set[int] = set()
    frees: list[frozenset[int]] = []
    found = False

    def assign(j: int, given: dict[int, int]) -> None:
        nonlocal found
        if j == len(own):
            found = True
            frees.append(frozenset(a.seq for a in free_ if a.seq not in given))
            for a in free_:
                if a.seq in given:
                    held[a.seq].add(given[a.seq])
                else:
                    free.add(a.seq)
            return
        fault = own[j]
        if other:
            assign(j + 1, given)
        for a in free_:
            if a.seq < fault.seq and a.seq not in given:
                assign(j + 1, {**given, a.seq: fault.seq})

    if len(own) <= 6:  # (a few at most; more would be a world this reading was not made for)
        assign(0, {})
    by_seq = {f.seq: f for f in own}
    if not found:  # no reading fits: any fault after an answer may be its, or none
        return {a.seq: _Hold(tuple(f for f in own if f.seq > a.seq), True) for a in free_}
    readings = tuple(frees)
    return {a.seq: _Hold(tuple(by_seq[seq] for seq in sorted(held[a.seq])), a.seq in free,
                         readings) for a in free_}


def _way_back(answer: Record, faults: dict[int, list[Record]], hold: _Hold | None) -> _Answer:
    """When the delivery process had ``answer``: at the earliest (it got through at once, or
    the earliest fault that may hold it) and at the latest (the latest such fault; ``NEVER``
    for a loss). ``hold``: which of its instant's faults may be its (:func:`_holders`); an
    answer a ``delay`` held reads the acknowledgement faults of the instant it arrived in."""
    at = answer.t_ms
    held = _held_by(answer, faults)
    doubled = any(f.data["kind"] == "duplicate" and f.seq > answer.seq
                  for f in faults.get(at, []))
    if held is not None:
        at += int(held.data.get("delay_ms") or 0)
        mine: tuple[Record, ...] = tuple(
            f for f in faults.get(at, []) if f.data["kind"] in ACK_FAULTS
            and f.data.get("run_id") == answer.data.get("run_id"))[:1]
        free = False
    else:
        mine, free = (hold.faults, hold.free) if hold is not None else ((), True)
    if not mine:
        return _Answer(answer, at, at)
    times = [NEVER if f.data["kind"] == "send-ambiguous" else at + int(
        f.data.get("delay_ms") or 0) for f in mine]
    return _Answer(answer, at if free or doubled else min(times), max(times))


def wake_sends_budget(trace: Sequence[Record]) -> list[Violation]:
    """A wake's key is sent again only (a) after the session refused it (busy in another turn:
    the wake stays armed and spends nothing), (b) after the delivery process restarted (the
    same key is replayed, no new transition), (c) as a replay of an earlier send of that key
    whose answer the delivery process never had, at most three such replays per batch, or (d)
    for a private batch, whose retries keep one unsuffixed key (reference §c10), as a retry
    after the gateway refused it, at most three attempts in all. A session's refusal that was
    seen never ends the wake: the same key goes again (within the 30 s recheck plus any
    downtime) unless the session was reset or deleted, or the run ended first."""
    seen = _seen(trace)
    answers = _answers(trace)
    asked = asked_runs(trace)
    end_ms = seen.end.t_ms if seen.end is not None else NEVER
    crashes = [down for down, _ in seen.downtime]
    violations: list[Violation] = []
    for batch in [*batches(trace), *wave_batches(trace)]:
        private = any(_is_private(asked.get(run_id)) for run_id in batch.members)
        sends = _wake_of(batch, seen.wake_sends)
        # Once its members had ended, a crash before a key's first send may have killed a
        # process with that key's dispatch out: its restart replays it as ambiguous.
        start = max([batch.yielded.t_ms if batch.turn != "wave" else 0,
                     *(seen.ends[m].t_ms for m in batch.members if m in seen.ends)])
        by_key: dict[str, _KeySends] = {}
        counted: dict[str, list[Record]] = {"replay": [], "retry": [], "either": []}
        # Per key, when the delivery process had each of the session's refusals, in order.
        refused: dict[str, list[int]] = {}
        for send in sends:
            key = send.data["key"]
            sent = by_key.get(key)
            if sent is None:
                sent = by_key[key] = _KeySends()
            earlier = sent.sends
            _match(sent, answers.get(key, []), send.seq)
            if not earlier and any(start <= down <= send.t_ms for down in crashes):
                sent.add(_Send(attrs.evolve(send, seq=-1, t_ms=start)))  # maybe sent
                sent.resume = 0  # an answer before the first send may go to the stand-in
            if earlier:
                if key not in refused:
                    refused[key] = sorted(a.first for a in answers.get(key, [])
                                          if a.record.kind == "requester.wake_refused")
                why = _why_again(earlier, send, refused[key], crashes, private)
                if why is None:
                    violations.append(Violation(
                        "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of "
                        f"{batch.session} sent {key} again at {send.t_ms} ms although every "
                        "earlier send of it was answered (refused by the gateway or taken) and "
                        "no restart or busy session explains it",
                        (*(s.record.seq for s in earlier if s.record.seq >= 0), send.seq)))
                elif why in counted:
                    counted[why].append(send)
            sent.add(_Send(send))
        for why, most in (("replay", MAX_REPLAYS), ("retry", MAX_ATTEMPTS - 1)):
            if len(counted[why]) > most:
                violations.append(Violation(
                    "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of "
                    f"{batch.session} made {len(counted[why])} {why} sends, over {most}",
                    tuple(r.seq for r in counted[why])))
        both = [*counted["replay"], *counted["retry"], *counted["either"]]
        if counted["either"] and len(both) > MAX_REPLAYS + MAX_ATTEMPTS - 1:
            violations.append(Violation(
                "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of {batch.session} "
                f"made {len(both)} replay and retry sends, over {MAX_REPLAYS + MAX_ATTEMPTS - 1}",
                tuple(r.seq for r in both)))
        for key, sent in by_key.items():
            _match(sent, answers.get(key, []), NEVER)
            last = sent.sends[-1]
            if last.answer is None or last.answer.record.kind != "requester.wake_refused":
                continue
            had_at = _refused_by(last.answer, answers.get(key, []))
            if had_at >= last.record.t_ms + ANSWER_TIMEOUT_MS:
                # Not surely had in time: the send may have timed out instead (also one that
                # came at the very instant of the 120 s answer timeout: seed 98665, as 9874).
                continue
            refusal = last.answer.record
            later = had_at + RECHECK_MS + _overlap(seen.downtime, refusal.t_ms, end_ms)
            # A reset or delete since the batch began abandons its wake (refused, rightly
            # ended); a refusal while no turn of the session ran is not a busy one.
            since = batch.yielded.t_ms if batch.turn != "wave" else 0
            reset = any(r.t_ms >= since for r in seen.lifecycle.get(batch.session, []))
            if reset or later + 1_000 > end_ms or not _busy(seen, batch.session, refusal.t_ms):
                continue
            if any(a.seq > refusal.seq or batch.turn == "wave" or a.seq in seen.answered
                   for a in _wake_of(batch, seen.wake_accepts)):
                # A copy the network duplicated was taken after it (seed 7261), or the wake
                # was taken (answered visibly, as a yielded batch needs) before it: a replay
                # after a restart met the busy session, then the take's late acknowledgement
                # reached the new process, which closed the wake done (seed 1468).
                continue
            # A send of it the gateway had refused for good closes the wake, whatever a replay
            # of it after a restart met since (a permanent refusal is final, reference §c12).
            # Also the last send's own refusal noted after the session's: the gateway refuses
            # at the first chunk, so that send never reached the session, whose refusal was of
            # an older copy held on its way (seed 95668: a wake delayed 150 s reached the busy
            # session at the instant its replay after a restart was refused as sent).
            if any(f.data.get("key") == key and "error" in f.data
                   and (f.seq < refusal.seq or f.seq > last.record.seq)
                   and rejection_class(f) in ("permanent", "sent") for f in seen.wake_faults):
                continue
            violations.append(Violation(
                "wake-sends-budget", "YLD-3", f"the wake of {batch.turn} of {batch.session} "
                f"was never sent again after {refusal.actor} refused {key} at "
                f"{refusal.t_ms} ms: a busy requester spends nothing and the wake stays armed",
                (last.record.seq, refusal.seq)))
    return violations


def _match(key: _KeySends, answers: list[_Answer], before_seq: int) -> None:
    """Give each answer before ``before_seq`` to the latest send of its key before it, when that
    one is still unanswered (a gateway refusal answers the send it follows; a session answers
    what reached it last). Another answer to an answered send is a duplicate's (a doubled
    delivery) and answers nothing older: an older send left unanswered stays so (the lenient
    reading).

    Starts at ``key.resume`` and leaves there the first answer not looked at: an answer looked
    at is settled for good while sends are only added after ``before_seq`` (its latest send
    before it cannot change) and the first send stays the first (an answer before it has none;
    a stand-in put in front needs ``resume`` 0 again)."""
    # The sends are in trace order, so the latest send before an answer is found by bisection,
    # and the answers already given are a set of their records' positions. This runs once per
    # send of a key: a busy session's rechecks made the scan of every send for every answer
    # (cubic in the sends) a third of a sweep's CPU.
    start = end = key.resume
    while end < len(answers) and answers[end].record.seq < before_seq:
        end += 1
    sends, seqs, given = key.sends, key.seqs, key.given
    for answer in answers[start:end]:
        latest = bisect_left(seqs, answer.record.seq) - 1
        if latest >= 0 and sends[latest].answer is None and answer.record.seq not in given:
            sends[latest].answer = answer
            given.add(answer.record.seq)
    key.resume = end


def _refused_by(answer: _Answer, answers: list[_Answer]) -> int:
    """When the delivery process surely had a session's refusal of the key that ``answer``
    (a refusal) is one of: at the latest by ``answer``'s own way back, or at once when every
    reading of its instant's faults leaves one of the key's refusals of that instant free (a
    doubled wake refused twice, one acknowledgement held: the other got through, seed 40325's
    forged variant; one fault holds one acknowledgement)."""
    mates = {a.record.seq for a in answers if a.record.kind == "requester.wake_refused"
             and a.record.t_ms == answer.record.t_ms
             and a.record.data.get("run_id") == answer.record.data.get("run_id")}
    if answer.frees and all(free & mates for free in answer.frees):
        return answer.record.t_ms  # (its own way back is never earlier)
    return answer.last


def _why_again(earlier: list[_Send], send: Record, refused: list[int],
               crashes: list[int], private: bool) -> str | None:
    previous = earlier[-1]
    if any(previous.record.t_ms <= down <= send.t_ms for down in crashes):
        return "restart"

    def had(s: _Send, surely: bool) -> bool:
        # An answer later than the 120 s answer timeout came after the send was given up as
        # unanswered (announceTimeoutMs, reference §c11, §c15): it leaves the key ambiguous.
        # One a crash since may have lost with the dead process (its restart replays the key
        # as ambiguous: the lenient reading).
        # An answer at the very instant of the timeout may come after it: not surely had
        # (seed 85684, as 98665 and 9874: the process timed the send out first, counted the
        # key ambiguous, and replayed it after the gateway's next refusal).
        if s.answer is None:
            return False
        at = s.answer.last if surely else s.answer.first
        return at <= send.t_ms and at < s.record.t_ms + ANSWER_TIMEOUT_MS and not any(
            s.record.t_ms <= down <= send.t_ms for down in crashes)

    # The session refused this key (busy) and the process may have had it since the previous
    # send: any answer of the key counts for the dispatch that is out, also a late one.
    # (``refused``: when the process had each of the key's refusals by the session, sorted.)
    first = bisect_left(refused, previous.record.t_ms)
    if first < len(refused) and refused[first] <= send.t_ms:
        return "armed"
    if any(not had(s, surely=True) for s in earlier):
        # A private batch's retry keeps its key: after a refusal the gateway answered, a send
        # an earlier unanswered one leaves ambiguous may be either (seed 4616).
        if private and previous.answer is not None and \
                previous.answer.record.kind in GATEWAY_REFUSALS and had(previous, surely=True):
            return "either"
        return "replay"
    if private and previous.answer is not None and \
            previous.answer.record.kind in GATEWAY_REFUSALS:
        return "retry"
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
