"""DEL-10 oracles: when a completion may be sent again, restated from what the gateway saw.

They read the gateway's view (each completion it was handed, each rejection and its error text),
the delivery process's crashes, each child's end, the registry's give-ups, the sessions that took a
yield's wake (``requester.accept``) and the sessions the world deleted, and restate the retry
policy of reference §c11 from those alone:

- a permanent rejection stops every retry of that completion in its delivery generation (a newer
  generation, ``…:g<n>``, is a new delivery: DEL-16's oracles judge whether it may go out);
- after a transient failure the next transport try follows 5, 10 and 20 s later (a send that got
  no answer counts as a "gateway timeout" 120 s after it was made; a private result's has no
  timeout, OpenClaw 2026.9.6 passing its agent call none: its key is not sent again after an
  unanswered try, whose answer counts however late, until a restart); after the fourth failed
  try, or an error of no known class, the next attempt waits the registry backoff: 15 s doubling
  to 300 s, with up to +20 % jitter (the cap applies after the jitter); an attempt whose
  requester is gone with no fallback left starts and ends unsent (reference §c2), so after the
  last send's session was deleted the next send may follow several backoffs in a row;
- nothing but a permanent rejection or the 30-minute expiry (counted from the run's end) gives up;
- and the expiry does give up: no attempt of a generation starts at or after it (reference §c11:
  "a passed deadline means give-up"). Its window starts at the producer's end (the child's end, or
  a newer receipt's end), or where the registry starts it when it hears of it: a private result's
  release (PRV-7) and an operator's redrive, read as the generation's first send (a message may
  wait in transit). The transport tries of an attempt begun before may run past it; a first
  send, the first send after a restart of the delivery process (a new process starts a new
  attempt) and a send after a backoff are attempts' starts.

A crash of the delivery process between two sends makes the gap unknowable (the new process
restores from its store); the observer then stops checking exact gaps for that run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.redrive import generation
from sim.invariants.index import of_kinds, shared
from sim.invariants.observations import (
    Asked,
    asked_runs,
    is_delivery_crash,
    is_wake,
    key_runs,
    rejection_class,
)
from sim.invariants.private.completion import private_runs
from sim.invariants.yields.seen import batches
from sim.trace import Record

TRY_WAITS_MS = (5_000, 10_000, 20_000)
TRIES = 4
ANSWER_TIMEOUT_MS = 120_000
BACKOFF_FIRST_MS = 15_000
BACKOFF_CAP_MS = 300_000
JITTER = 0.2
EXPIRY_MS = 30 * 60_000
OPTIONAL_EXPIRY_MS = 5 * 60_000  # a run not asked to report back (ANNOUNCE_EXPIRY_MS)


def permanent_stops_retries(trace: Sequence[Record]) -> list[Violation]:
    stopped: dict[str, Record] = {}  # run_id -> the permanent rejection
    recorded: set[str] = set()  # runs whose give-up the registry recorded after it
    down = False  # the delivery process is dead: a refusal made now never reaches it
    # When an operator's redrive or the producer's correction last reopened each run: one in the
    # very instant of a refusal may reach the delivery actor first (seeds 15697, 17450), and
    # the refusal then answers an older generation.
    reopened: dict[str, int] = {}
    violations = []
    for r in of_kinds(trace, ("delivery.start", "fault", "requester.gone", "gateway.refused",
                              "delivery.give_up", "child.correction",
                              "world.operator", "crash", "gateway.send")):
        if r.kind == "delivery.start":
            down = False
        if r.kind == "child.correction":
            reopened[r.data["run_id"]] = r.t_ms
            if r.data["run_id"] in stopped and stopped[r.data["run_id"]].t_ms == r.t_ms:
                del stopped[r.data["run_id"]]
        elif rejection_class(r) in ("permanent", "sent") and not down:
            first = stopped.get(r.data["run_id"])
            if reopened.get(r.data["run_id"]) != r.t_ms and (
                    first is None or generation(r.data["key"]) > generation(first.data["key"])):
                stopped[r.data["run_id"]] = r  # the first of each newer generation
                # A give-up recorded for an older generation says nothing of this one (seeds
                # 33520, 78291: a correction's generation refused, then a crash before its
                # give-up was recorded; the new process may send once more).
                recorded.discard(r.data["run_id"])
        elif r.kind == "delivery.give_up" and r.data["run_id"] in stopped:
            recorded.add(r.data["run_id"])
        elif r.kind == "world.operator" and r.data["action"] == "redrive":
            # An operator asked to send it again (a new generation; redrive-from-retained).
            reopened[r.data["run_id"] or ""] = r.t_ms
            stopped.pop(r.data["run_id"] or "", None)
            recorded.discard(r.data["run_id"] or "")
        elif is_delivery_crash(r):
            down = True
            # A process that died before it recorded the rejection may send once more.
            stopped = {run_id: s for run_id, s in stopped.items() if run_id in recorded}
        elif r.kind == "gateway.send" and r.data["run_id"] in stopped and \
                generation(r.data["key"]) <= generation(stopped[r.data["run_id"]].data["key"]):
            # (A newer generation is a new delivery: the rejection was final for its own;
            # given-up-waits-for-operator judges whether the new one may go out, DEL-16.)
            rejection = stopped[r.data["run_id"]]
            violations.append(Violation(
                "permanent-stops-retries", "DEL-10",
                f"{r.data['run_id']} was rejected permanently at {rejection.t_ms} ms "
                f"({rejection.data.get('error', {}).get('message', rejection.data.get('kind'))!r})"
                ", "
                f"yet it was sent again at {r.t_ms} ms",
                (rejection.seq, r.seq)))
    return violations


@attrs.define
class _Run:
    last_send: Record
    ended_at_ms: int | None
    failures: int = 0  # failed tries of the current attempt
    attempt: int | None = 1  # None once a restart hid the count
    # Of the last send: unanswered | transient | other | permanent | sent (reached the platform).
    outcome: str = "unanswered"
    rejection: Record | None = None
    crashed: bool = False
    expires_ms: int = 0  # the generation's expiry: no attempt starts at or after it


def _backoff_bounds(attempt: int | None) -> tuple[int, int]:
    if attempt is None:
        return BACKOFF_FIRST_MS, BACKOFF_CAP_MS
    base = BACKOFF_FIRST_MS * 2 ** min(attempt - 1, 16)
    # JavaScript's Math.round: a half rounds up.
    return min(base, BACKOFF_CAP_MS), min(BACKOFF_CAP_MS, math.floor(base * (1 + JITTER) + 0.5))


@attrs.frozen
class _Judged:
    timing: list[Violation]  # retry-timing's
    expiry: list[Violation]  # expiry-ends-attempts'
    # The gateway sends that are a later transport try of an attempt already under way (a
    # retry 5, 10 or 20 s after a failed try), by trace position: the call was built at the
    # attempt's start, so these repeat its target (read by requester-fallback).
    tries: frozenset[int]


def retry_timing(trace: Sequence[Record]) -> list[Violation]:
    return shared(trace, "delivery.retries", _judge).timing


def expiry_ends_attempts(trace: Sequence[Record]) -> list[Violation]:
    return shared(trace, "delivery.retries", _judge).expiry


def transport_tries(trace: Sequence[Record]) -> frozenset[int]:
    """The trace positions of the ``gateway.send`` records that repeat an attempt under way (its
    second to fourth transport try), as the retry policy reads the gateway's sends alone; an
    attempt's first send (a key's first, the first after a restart of the delivery process, one
    after a backoff) is not among them."""
    return shared(trace, "delivery.retries", _judge).tries


def _judge(trace: Sequence[Record]) -> _Judged:
    """One walk for both oracles: each send's place in its attempt is what both read."""
    asked = asked_runs(trace)
    private = private_runs(trace)
    # run -> the latest instant its window may start at, as the producer tells it (its end, a
    # newer receipt's end); a later start than the registry's never makes a false alarm.
    opened: dict[str, int] = {}
    redrive_asked: set[str] = set()  # runs an operator asked to redrive since their last new key
    # When each run was first frozen into a yielded batch (its requester's yield, as asked).
    frozen: dict[str, int] = {}
    for batch in batches(trace):
        for member in batch.members:
            frozen[member] = min(frozen.get(member, batch.yielded.t_ms), batch.yielded.t_ms)
    ends: dict[str, int] = {}
    own_since_frozen: set[str] = set()  # frozen members sent under their own key since the yield
    # Members of a yielded batch whose wake the requester took. Until then the batch is open
    # and owns its members' newer receipts, even after its wake went out: a refused wake is
    # sent again (docs/yield.md, "The outbox and its budgets"), only a taken one delivers the
    # batch (seed 49067: a correction after a wake the busy session refused).
    woken: set[str] = set()
    # Members corrected (or redriven) after their batch's wake was taken: the batch may still
    # be open (no visible reply, a lost acknowledgement); the batch sending its wake again says
    # the correction was its, a send of the member's own says it was not (DEL-12).
    after_wake: set[str] = set()
    # Frozen members whose pending correction (or redrive) is the batch's: a send under the key
    # they were last sent under is their earlier generation's retry, not the correction's.
    batch_corrections: set[str] = set()
    # Each delivery generation's sends, by run and key (a correction's generation has its own
    # key, DEL-12), and each run's latest key.
    runs: dict[tuple[str, str], _Run] = {}
    latest: dict[str, str] = {}
    hidden: set[str] = set()  # runs a restart came between their end and their first send
    unsent: set[str] = set()  # runs ended (or reopened for a correction) and not sent since
    reopened: set[str] = set()  # runs whose next new key is a new generation's
    # Keys part of which reached the platform: every later send is refused, so giving up is right.
    sent: set[tuple[str, str]] = set()
    # Sessions the world deleted (as asked): an attempt whose requester is gone with no
    # fallback left starts and ends unsent ("retryable", reference §c2), so the next send may
    # come after several backoffs in a row (seed 61501).
    deleted: set[str] = set()
    violations: list[Violation] = []
    expiry: list[Violation] = []
    tries: set[int] = set()
    for r in of_kinds(trace, ("child.end", "child.correction", "world.operator", "crash", "fault",
                              "requester.gone", "gateway.refused", "gateway.send",
                              "requester.accept", "delivery.give_up", "world.delete-session",
                              "world.lifecycle")):
        if r.kind in ("world.delete-session", "world.lifecycle"):
            if r.kind == "world.delete-session" or r.data.get("event") == "delete":
                deleted.add(f"requester:{r.data['session']}")
        elif r.kind == "child.end":
            ends[r.data["run_id"]] = r.t_ms
            unsent.add(r.data["run_id"])
            opened[r.data["run_id"]] = max(opened.get(r.data["run_id"], 0), r.t_ms)
        elif r.kind == "child.correction" or (
                r.kind == "world.operator" and r.data["action"] == "redrive"
                and r.data["run_id"]):
            # The producer's newer receipt (DEL-12) or an operator's redrive (DEL-16) may open
            # a new generation: if the next send is under a new key, its attempts count from
            # one (a send under the same key says it did not; never the registry's reopen).
            unsent.add(r.data["run_id"])
            reopened.add(r.data["run_id"])
            if r.kind == "child.correction":
                ends[r.data["run_id"]] = r.data["ended_at"]  # its window starts at its end
                opened[r.data["run_id"]] = max(opened.get(r.data["run_id"], 0),
                                               r.data["ended_at"])
            else:
                redrive_asked.add(r.data["run_id"])
            if r.data["run_id"] in frozen and frozen[r.data["run_id"]] <= r.t_ms \
                    and r.data["run_id"] not in woken:
                # A newer receipt of a frozen member before its batch's wake went out is the
                # batch's (docs/yield.md: the first answers go out one by one, the corrections
                # are the batch's; reference §b, §c9 intentional_non_delivery), even when its
                # first generation went out on its own after the yield (seed 2362 with children
                # drawn 1..8); so is an operator's redrive of it (a new generation): the batch
                # carries it, and the batch's close gives it up (seed 8247).
                own_since_frozen.discard(r.data["run_id"])
                batch_corrections.add(r.data["run_id"])
            elif r.data["run_id"] in frozen and frozen[r.data["run_id"]] <= r.t_ms:
                after_wake.add(r.data["run_id"])
        elif is_delivery_crash(r):
            for known in runs.values():
                known.crashed = True
            # An attempt may have been counted in the store before the process died unsent.
            hidden.update(unsent)
        elif rejection_class(r) is not None and r.data["run_id"] in latest:
            at = (r.data["run_id"], r.data.get("key") or latest[r.data["run_id"]])
            rejected = runs.get(at)
            # The first answer to the last send; a copy of it (a duplicated refusal arriving
            # later) is stale, and the wait runs from the first (seed 1261). So is a deleted
            # session's refusal of an earlier send when the last went to another session (a
            # fallback to the requester's requester, DEL-4): it answers that earlier send
            # (seed 77546: the old session's refusal arrived after the fallback's send, whose
            # own answer was an error after part of it reached the platform).
            # A refusal later than the answer timeout is stale too: the try counted as unanswered
            # and the next is due 5 s after it (seed 74027: a refusal 4 s after the timeout).
            # A private try's refusal answers it however late it comes (no timeout).
            if rejected is not None and rejected.rejection is None and not (
                    r.kind == "requester.gone"
                    and rejected.last_send.data.get("requester") != r.actor) \
                    and (r.t_ms <= rejected.last_send.t_ms + ANSWER_TIMEOUT_MS
                         or r.data["run_id"] in private):
                rejected.outcome, rejected.rejection = rejection_class(r) or "", r
                if rejected.outcome == "sent":
                    sent.add(at)
        elif r.kind == "requester.accept":
            if is_wake(r.data.get("key", "")) and ":yield-" in r.data["key"]:
                woken.update(key_runs(r.data["key"]))
        elif r.kind == "gateway.send" and is_wake(r.data.get("key", "")):
            if ":yield-" in r.data["key"]:
                for member in key_runs(r.data["key"]):
                    if member not in after_wake:
                        continue
                    after_wake.discard(member)  # the batch was open: the correction is its
                    own_since_frozen.discard(member)
                    batch_corrections.add(member)
            continue  # batch wakes keep their own budgets (wake oracles)
        elif r.kind == "gateway.send":
            run_id, key = r.data["run_id"], r.data["key"]
            run = runs.get((run_id, key))
            # A new key of a run sent before under another key, not for a new generation: the
            # observer cannot tell which attempt it is.
            unknown = run_id in hidden or (run_id in latest and run_id not in reopened)
            # The earlier generation's retry, still out when the batch's correction came (seed
            # 5945: the wide batch's first answer retried after its child corrected it): the
            # correction stays the batch's, and the batch's close gives it up.
            earlier = run_id in batch_corrections and latest.get(run_id) == key
            latest[run_id] = key
            # A try in the very instant of the yield may be made before the requester froze
            # the batch, whichever comes first in the trace (the harness's request is not the
            # freeze): it is the run's own, its refusal hands it over, and the batch's close
            # gives it up (seed 23986). An unanswered one is followed by a later try.
            if run_id in frozen and frozen[run_id] < r.t_ms and not earlier:
                own_since_frozen.add(run_id)
                batch_corrections.discard(run_id)
            unsent.discard(run_id)
            reopened.discard(run_id)
            after_wake.discard(run_id)
            if run is None:
                window = opened.get(run_id, 0)
                if run_id in private or run_id in redrive_asked:
                    # The registry starts these windows when it hears of them: a private
                    # result's at its release (an end heard late, a turn's finish), a redrive's
                    # at the request's arrival. Its first send is at or after either.
                    window = max(window, r.t_ms)
                    redrive_asked.discard(run_id)
                required = run_id in private or (run_id in asked and asked[run_id].required)
                run = runs[(run_id, key)] = _Run(
                    r, ends.get(run_id), attempt=None if unknown else 1,
                    expires_ms=window + (EXPIRY_MS if required else OPTIONAL_EXPIRY_MS))
                hidden.discard(run_id)
                expiry += _past_expiry(run, r, "its first send")
                continue
            # A deleted session refuses when the completion reaches it (DEL-4), maybe later than
            # the send; the wait runs from that refusal.
            since = (run.rejection.t_ms if run.rejection is not None
                     and run.rejection.kind == "requester.gone" else run.last_send.t_ms)
            attempts = run.attempt
            answered = run.outcome  # how the last send ended, before the count moves on
            if run_id in private and answered == "unanswered" and not run.crashed:
                # No timeout for a private try: it waits until its window ends (module doc).
                violations.append(_private_resent(run, r))
                run.last_send = r
                continue
            problem = None if run.crashed else _gap_problem(
                run, r.t_ms - since, run.last_send.data.get("requester") in deleted)
            if not run.crashed and answered in ("unanswered", "transient") and run.failures:
                tries.add(r.seq)  # the attempt's next transport try, not a new attempt
            if problem is not None:
                violations.append(Violation(
                    "retry-timing", "DEL-10", f"{run_id}: {problem}",
                    (run.last_send.seq, *((run.rejection.seq,) if run.rejection else ()),
                     r.seq)))
            if run.crashed:  # the new process starts a new attempt
                expiry += _past_expiry(run, r, "the first send after a restart of the delivery "
                                               "process")
                run.failures, run.attempt, run.crashed = 0, None, False
            elif run.failures == 0 and run.outcome not in ("permanent", "sent"):
                # _gap_problem counted a backoff: this send starts the next attempt.
                expiry += _past_expiry(run, r, "a send after a backoff" if attempts is None
                                       else f"attempt {attempts + 1}'s first send")
            run.last_send, run.outcome, run.rejection = r, "unanswered", None
        elif r.kind == "delivery.give_up" and not (
                r.data["run_id"] in frozen and frozen[r.data["run_id"]] <= r.t_ms
                and r.data["run_id"] not in own_since_frozen):
            # A yielded batch owns a frozen member from its yield on, not before (seed 6 of
            # give-up-after-tries gives a run up 190 s before its requester yields), and not
            # one the gateway was handed since under its own key (expiry-from-spawn, seed 6).
            at = (r.data["run_id"], latest.get(r.data["run_id"], ""))
            if at not in sent:
                violations += _early_give_up(r, asked.get(r.data["run_id"]), runs.get(at),
                                             ends.get(r.data["run_id"]))
    return _Judged(violations, expiry, frozenset(tries))


def _private_resent(run: _Run, r: Record) -> Violation:
    return Violation(
        "retry-timing", "PRV-7",
        f"{r.data['run_id']}: its private try at {run.last_send.t_ms} ms got no answer, yet "
        f"{r.data['key']} was sent again {r.t_ms - run.last_send.t_ms} ms later; a private try "
        "has no answer timeout: it waits until its window ends", (run.last_send.seq, r.seq))


def _past_expiry(run: _Run, r: Record, which: str) -> list[Violation]:
    """A violation if ``r``, which starts an attempt, comes at or after the run's expiry."""
    if r.t_ms < run.expires_ms:
        return []
    return [Violation(
        "expiry-ends-attempts", "DEL-10",
        f"{r.data['run_id']}'s {r.data['key']} started an attempt at {r.t_ms} ms ({which}), "
        f"at or after its expiry at {run.expires_ms} ms", (run.last_send.seq, r.seq)
        if run.last_send is not r else (r.seq,))]


def _gap_problem(run: _Run, gap: int, unrouted: bool = False) -> str | None:
    """Advance the observer's count past the last send; what is wrong with ``gap``, if anything.
    ``unrouted``: the last send's requester session was deleted, so attempts may have started
    and ended unsent in between (no fallback left: a retryable outcome, reference §c2), each
    after its own backoff."""
    waited = ANSWER_TIMEOUT_MS if run.outcome == "unanswered" else 0
    why = {"unanswered": "no answer (gateway timeout)", "transient": "a transient rejection",
           "other": "an error of no known class", "permanent": "a permanent rejection",
           "sent": "an error after the send reached the platform"}[
        run.outcome]
    if run.outcome in ("permanent", "sent"):
        return None  # permanent-stops-retries reports it
    if run.outcome in ("unanswered", "transient"):
        run.failures += 1
        if run.failures < TRIES:
            want = waited + TRY_WAITS_MS[run.failures - 1]
            if gap != want:
                return (f"try {run.failures + 1} came {gap} ms after try {run.failures}, which "
                        f"ended in {why}; the policy waits {want} ms")
            return None
    low, high = _backoff_bounds(run.attempt)
    attempt = "?" if run.attempt is None else run.attempt
    run.failures = 0
    run.attempt = None if run.attempt is None else run.attempt + 1
    if unrouted and isinstance(attempt, int):
        # Attempts attempt+1, ... started and ended unsent, each after its own backoff. The
        # ranges of one, two, ... backoffs in a row never overlap (each backoff is at least
        # the sum of the jitters before it), so at most one count of unsent attempts fits.
        total_low, total_high, skipped = low, high, 0
        while waited + total_high < gap and skipped < 64:
            skipped += 1
            more_low, more_high = _backoff_bounds(attempt + skipped)
            total_low, total_high = total_low + more_low, total_high + more_high
        if waited + total_low <= gap <= waited + total_high:
            low, high, run.attempt = total_low, total_high, attempt + skipped + 1
    if not waited + low <= gap <= waited + high:
        return (f"attempt {attempt} ended in {why}; the next attempt came {gap} ms later, "
                f"outside the backoff of {waited + low}-{waited + high} ms")
    return None


def _early_give_up(r: Record, asked: Asked | None, run: _Run | None, ended_at_ms: int | None
                   ) -> list[Violation]:
    """Only a permanent rejection or the expiry gives up a run asked to report back."""
    if asked is None or not asked.required or ended_at_ms is None:
        return []
    if run is not None and run.outcome in ("permanent", "sent"):
        return []
    if r.t_ms >= ended_at_ms + EXPIRY_MS:
        return []
    return [Violation(
        "retry-timing", "DEL-10",
        f"{r.data['run_id']} was given up at {r.t_ms} ms, before its expiry at "
        f"{ended_at_ms + EXPIRY_MS} ms and without a permanent rejection",
        (*((run.last_send.seq,) if run is not None else ()), r.seq))]


INVARIANTS = (
    Invariant("permanent-stops-retries", "DEL-10", "safety",
              "After the gateway rejects a completion with a permanent error, it is never sent "
              "again in that delivery generation (a newer one is a new delivery).",
              permanent_stops_retries),
    Invariant("retry-timing", "DEL-10", "safety",
              "Retries follow the policy: transport tries 5/10/20 s apart (after a 120 s "
              "timeout when unanswered; a private try has none, so none follows it), registry "
              "backoff 15 s doubling to 300 s with up to "
              "+20 % jitter, and no give-up before the 30-minute expiry but on a permanent "
              "rejection.", retry_timing),
    Invariant("expiry-ends-attempts", "DEL-10", "safety",
              "No delivery attempt of a completion starts at or after its expiry: 30 minutes "
              "from the producer's end (a newer receipt's end, a private result's release, an "
              "operator's redrive), 5 for a run not asked to report back; only transport tries "
              "of an attempt begun before may run past it.", expiry_ends_attempts),
)
