"""DEL-10's expiry give-up, timed exactly: a retry waits its whole registry backoff, also past the
30-minute window, and the first resume after the deadline gives up then (OpenClaw 2026.9.6:
``resolveDeferredCleanupDecision`` schedules ``resolveAnnounceRetryDelayMs(retryCount)``
uncut; the resumed cleanup finds ``now >= deadline`` and gives up; the seed is silent, so the
released code wins, docs/fidelity.md).

Read from outside: each retry the registry schedules, as its row stores it (``delivery.retry``:
the row's attempt count and ``nextAttemptAt``, written at the decision's instant), the
registry's give-ups (``delivery.give_up``), each child's end and its producer's corrections
(``child.end``, ``child.correction``: where a public completion's window starts), the spawn
requests (which runs must report back), the gateway's sends and the requester's takes of each
run, the delivery process's crashes and the operator's redrives (``world.operator``).

- every scheduled wait is the registry backoff for that attempt count: 15 s doubling to 300 s,
  with up to +20 % jitter (the cap applies after the jitter), never cut at the deadline;
- an expiry give-up that follows a scheduled retry, with nothing of the run between (no send, no
  take, no correction, no redrive, no crash of the delivery process), never comes before the
  retry's due time ``nextAttemptAt`` (the give-up happens at a resume);
- and for a public completion asked to report back whose due time is at or past its expiry
  (30 minutes from the newest end its producer stated), that give-up comes exactly then: the
  first resume after the deadline gives up, neither at the deadline nor later. A private
  result's window starts when the registry hears of its release, which an outsider sees only
  as a bound (``private/completion.py``): its resume before the deadline may wait for
  descendants (15 s, no attempt) and give up at that recheck, so only the first bound holds
  for it; and a redriven generation's window starts at the request's arrival, so the third is
  not stated after a redrive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash
from sim.invariants.private.completion import private_runs
from sim.trace import Record

BACKOFF_FIRST_MS = 15_000
BACKOFF_CAP_MS = 300_000
JITTER = 0.2
EXPIRY_MS = 30 * 60_000
_KINDS = ("child.end", "child.correction", "world.operator", "crash", "gateway.send",
          "requester.accept", "delivery.retry", "delivery.give_up")


def backoff_bounds(attempt: int) -> tuple[int, int]:
    """The shortest and longest registry backoff after ``attempt`` failed attempts."""
    base = BACKOFF_FIRST_MS * 2 ** min(max(attempt, 1) - 1, 16)
    # JavaScript's Math.round: a half rounds up.
    return min(base, BACKOFF_CAP_MS), min(BACKOFF_CAP_MS, math.floor(base * (1 + JITTER) + 0.5))


def expiry_give_up_time(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    private = private_runs(trace)
    window: dict[str, int] = {}  # run -> the newest end its producer stated (window start)
    redriven: set[str] = set()
    waiting: dict[str, Record] = {}  # run -> its scheduled retry, while nothing else happened
    violations: list[Violation] = []
    for r in of_kinds(trace, _KINDS):
        if r.kind not in _KINDS:
            continue  # (never, through the index: its own test, before anything is read)
        if is_delivery_crash(r):
            waiting.clear()  # the restored process starts afresh from its store
            continue
        if r.kind == "crash":
            continue
        run_id = r.data.get("run_id")
        if not isinstance(run_id, str):
            continue
        if r.kind == "child.end":
            window[run_id] = max(window.get(run_id, 0), r.t_ms)
        elif r.kind == "child.correction":
            window[run_id] = max(window.get(run_id, 0), r.data["ended_at"])
            waiting.pop(run_id, None)
        elif r.kind == "world.operator":
            if r.data.get("action") == "redrive":
                redriven.add(run_id)
                waiting.pop(run_id, None)
        elif r.kind in ("gateway.send", "requester.accept"):
            waiting.pop(run_id, None)
        elif r.kind == "delivery.retry":
            low, high = backoff_bounds(r.data["attempt"])
            wait = r.data["next_attempt_at_ms"] - r.t_ms
            if not low <= wait <= high:
                violations.append(Violation(
                    "expiry-give-up-time", "DEL-10",
                    f"{run_id}: after attempt {r.data['attempt']} the registry waits {wait} ms "
                    f"(due at {r.data['next_attempt_at_ms']} ms), not its backoff of "
                    f"{low}-{high} ms (never cut at the expiry)", (r.seq,)))
            waiting[run_id] = r
        elif r.kind == "delivery.give_up":
            retry = waiting.pop(run_id, None)
            if retry is None or r.data["reason"] != "expiry":
                continue
            due = retry.data["next_attempt_at_ms"]
            ask = asked.get(run_id)
            exact = (ask is not None and ask.required and run_id not in private
                     and run_id not in redriven and run_id in window
                     and due >= window[run_id] + EXPIRY_MS)
            if r.t_ms < due or (exact and r.t_ms != due):
                deadline = (f"; its expiry was at {window[run_id] + EXPIRY_MS} ms"
                            if run_id in window else "")
                violations.append(Violation(
                    "expiry-give-up-time", "DEL-10",
                    f"{run_id} was given up for its expiry at {r.t_ms} ms; its last retry, "
                    f"scheduled at {retry.t_ms} ms, was due at {due} ms{deadline}: the first "
                    "resume after the deadline gives up, at that due time", (retry.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("expiry-give-up-time", "DEL-10", "safety",
              "A retry waits its whole registry backoff (15 s doubling to 300 s, +20 % jitter), "
              "never cut at the 30-minute expiry; a give-up for the expiry comes at the first "
              "resume after the deadline: exactly the due time of the retry before it, for a "
              "public completion whose due time is at or past its expiry.",
              expiry_give_up_time),
)
