"""DEL-2 oracle: lost-answer recovery after a required run gave no visible answer.

Read from the trace alone: what was asked (``world.spawn``: required, and whether the scripted
answer-lost fault took the run's captured reply), the child's own end record and transcript
(``child.end``, ``child.message``: the answer it really wrote), what the requester's transcript
took (``requester.accept``: the run's (no output), which owes a recovery; never the registry's
own delivered record), the registry's recovery table as the claim under test (each attempt and
the recovery's end), the gateway's refusals of a recovery hand-off (``recovery-fail`` fault
records: each one is an attempt, so they alone count past the bound, whatever the table says),
what the requester received (``requester.recovered``), and the delivery process's crashes (one
can take a recorded attempt before its hand-off). Restated from seed 002 and docs/recovery.md:
at most three attempts; none for a run that answered.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.child.output import _shown_result
from sim.invariants.delivery.handoffs import ANSWER_TIMEOUT_MS
from sim.invariants.frozen import frozen
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash, is_wake, rejection_class
from sim.invariants.private.completion import WINDOW_MS, private_runs, releases
from sim.trace import Record

RECOVERY_ATTEMPTS = 3
RECOVERED_SUFFIX = ":recovered"  # a recovered answer's key (and its answer's) ends so


def _silent(text: str | None) -> bool:
    return text is None or text.strip() in ("", "NO_REPLY")


def _clip(text: str | None) -> str:
    return repr(text if text is None or len(text) <= 120 else text[:120] + "...")


def transcript_answer(messages: Sequence[Record]) -> str | None:
    """The visible final answer a run's committed messages hold (reference §c4, read forward):
    a message with text sets it, one that calls a tool clears it, an empty one leaves it."""
    answer: str | None = None
    for m in messages:
        blocks = m.data["blocks"]
        if any(b["type"] == "tool-call" for b in blocks):
            answer = None
            continue
        text = "".join(b["text"] or "" for b in blocks if b["type"] == "text")
        if text.strip():
            answer = text
    return None if _silent(answer) else answer


def lost_answer_recovery(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    ends: dict[str, Record] = {}
    messages: dict[str, list[Record]] = {}
    delivered: dict[str, Record] = {}
    attempts: dict[str, list[Record]] = {}
    ended: dict[str, Record] = {}
    refusals: dict[str, int] = {}
    # Legs of a run's recovery held on the way (its hand-off to the requester, the requester's
    # answer back): each may have outlasted the attempt's 120 s answer timeout, an attempt
    # failed that no refusal shows; counted as one each (an outsider cannot tell which did).
    held: dict[str, int] = {}
    # Runs whose recovery may have lost an attempt to a crash: the delivery process died while
    # the run's recovery was owed (its (no output) taken) and its answer not yet recovered. The
    # bound counts an attempt, durably, before its hand-off, so such a crash may spend one; the
    # recovery table's own records (which attempt was outstanding) are not read to narrow it.
    crashed: set[str] = set()
    recovered: dict[tuple[str, str], Record] = {}
    refused: set[tuple[str, str]] = set()  # (run, key) refused for good
    world_end: Record | None = None
    sent_at: dict[tuple[str, str], int] = {}  # (run, key) -> its latest hand-off
    # When each take's acknowledgement reaches the delivery process (at the take, or later by a
    # delay fault on it), and the spans the process was down (a crash to its restart): an
    # acknowledgement reaching a dead process is dropped, so one that told the registry must
    # arrive while it runs (seed 11263: both acks of the take, held 20 s and 29 s, reached the
    # process between its crash and its restart; it never learned, and retried).
    arrivals: dict[str, list[tuple[int, str]]] = {}  # run -> (arrival, key acknowledged)
    # When each of a run's keys was first sent: an acknowledgement of a generation's key that
    # reaches the process after a newer generation's key was first sent (an operator's redrive)
    # answers a superseded generation and is stale (seed 94798: the held take's ack came 1 ms
    # after the redrive's first send).
    first_sent: dict[tuple[str, str], int] = {}
    # An operator's redrive starts the run's next generation (reference §c18: "a redrive ...
    # delivers it as the next generation"; its row's ``generation``, "a redrive increments
    # it"), sent or not (a frozen batch may own it and send nothing: seed 5479), so an
    # acknowledgement of the older key reaching the registry after it is stale. The registry
    # refuses a redrive while a try is out ("delivery in flight"): only a request when no try
    # of the run was out (its latest send answered by a refusal or past its answer timeout)
    # is counted; one refused for another cause outside sees is taken as a redrive too (not
    # surely current). ``try_out``: run -> its latest send while unanswered by a refusal.
    redrives: dict[str, list[int]] = {}
    try_out: dict[str, int] = {}
    # A private result's try has no answer timeout (OpenClaw 2026.9.6 passes its agent call
    # none: handoffs.py): its acknowledgement counts however late (the rule above still drops
    # one held past 120 s: lenient, a recorded trace of seed 26185 keeps that case), but only
    # until its window, 30 minutes from its release (PRV-7), runs out, when the registry gives
    # the run up with the try still out (seed 49518: the ack, held 119,999 ms, came 28 s after
    # the window's end). The registry starts the window when it hears of the release (a
    # TurnSettled may be held on its way: 58 s there), so the window ends 30 minutes after the
    # release at the earliest (``releases``, as private-window-from-release reads it): an ack
    # from then on is not surely heard; nor in the end's very instant (the timer and the ack in
    # either order).
    private = private_runs(trace)
    released = releases(trace)
    down: list[tuple[int, int]] = []
    down_from: int | None = None
    violations: list[Violation] = []

    def fail(what: str, *records: Record) -> None:
        violations.append(Violation("lost-answer-recovery", "DEL-2", what,
                                    tuple(r.seq for r in records)))

    def needs(run_id: str) -> bool:
        end = ends.get(run_id)
        run = asked.get(run_id)
        return (run is not None and run.required and end is not None
                and end.data["status"] == "ok" and _silent(end.data["result"]))

    for r in of_kinds(trace, ("child.end", "child.message", "requester.accept",
                              "requester.duplicate", "fault", "requester.gone", "gateway.refused",
                              "recovery.attempt", "gateway.send",
                              "recovery.end", "crash", "world.restart", "requester.recovered",
                              "world.operator", "world.end")):
        kind = r.kind
        if rejection_class(r) is not None and r.data.get("run_id"):
            try_out.pop(r.data["run_id"], None)  # answered: that try is out no more
        if kind == "gateway.send":
            sent_at[(r.data["run_id"], r.data["key"])] = r.t_ms
            first_sent.setdefault((r.data["run_id"], r.data["key"]), r.t_ms)
            if not is_wake(r.data["key"]) and not r.data["key"].endswith(RECOVERED_SUFFIX):
                try_out[r.data["run_id"]] = r.t_ms
        elif kind == "world.operator":
            out = try_out.get(r.data.get("run_id") or "")
            if r.data["action"] == "redrive" and r.data.get("run_id") and (
                    out is None or r.t_ms >= out + ANSWER_TIMEOUT_MS):
                redrives.setdefault(r.data["run_id"], []).append(r.t_ms)
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
        elif kind == "child.message":
            messages.setdefault(r.data["run_id"], []).append(r)
        elif kind in ("requester.accept", "requester.duplicate") and \
                not is_wake(r.data["key"]) and (r.data["run_id"], r.data["key"]) not in refused:
            # Its (no output) reached its requester and the acknowledgement may tell the
            # registry so: recovery is owed (the registry's own delivered record is no premise).
            delivered[r.data["run_id"]] = r
            arrivals.setdefault(r.data["run_id"], []).append((r.t_ms, r.data["key"]))
        elif rejection_class(r) in ("permanent", "sent") and r.data.get("key"):
            # Given up on that key: a copy of it taken late (a delayed hand-off) is news the
            # registry no longer acts on.
            refused.add((r.data["run_id"], r.data["key"]))
        elif kind == "fault" and r.data.get("kind") in ("send-ambiguous", "ack-slow"):
            delivered.pop(r.data["run_id"], None)  # that acknowledgement never told it
        elif kind == "fault" and r.data.get("kind") == "delay" \
                and str(r.data.get("key", "")).endswith(RECOVERED_SUFFIX):
            held[r.data["run_id"]] = held.get(r.data["run_id"], 0) + 1
        elif kind == "fault" and r.data.get("kind") == "delay" \
                and r.data.get("message") == "CompletionAck" and "run_id" in r.data \
                and r.t_ms + int(r.data.get("delay_ms") or 0) >= sent_at.get(
                    (r.data["run_id"], r.data.get("key", "")), r.t_ms) + ANSWER_TIMEOUT_MS:
            # The take's acknowledgement held on its way back past the send's answer timeout:
            # the registry had stopped waiting for it (its send timed out), and the late ack
            # is stale, so it never learned the (no output) landed (seed 26185); nor does that
            # take's arrival count for a later copy's (seed 41896).
            delivered.pop(r.data["run_id"], None)
            times = arrivals.get(r.data["run_id"], [])
            if times and times[-1][0] == r.t_ms:
                times.pop()
        elif kind == "fault" and r.data.get("kind") == "delay" \
                and r.data.get("message") == "CompletionAck" and "run_id" in r.data:
            # The acknowledgement of the take just made is held: it arrives later.
            times = arrivals.get(r.data["run_id"], [])
            if times and times[-1][0] == r.t_ms:
                times[-1] = (r.t_ms + int(r.data.get("delay_ms") or 0), times[-1][1])
        elif kind == "world.restart" and r.data.get("process") == "delivery":
            if down_from is not None:
                down.append((down_from, r.t_ms))
            down_from = None
        elif kind == "recovery.attempt":
            run_id = r.data["run_id"]
            made = attempts.setdefault(run_id, [])
            made.append(r)
            if not needs(run_id):
                fail(f"{run_id} gave a visible answer (or none was required), yet lost-answer "
                     "recovery ran for it", r)
            elif len(made) == RECOVERY_ATTEMPTS + 1:
                fail(f"lost-answer recovery of {run_id} made {len(made)} attempts, past its "
                     f"bound of {RECOVERY_ATTEMPTS}", made[0], r)
        elif kind == "recovery.end":
            ended[r.data["run_id"]] = r
        elif is_delivery_crash(r):
            down_from = r.t_ms if down_from is None else down_from
            crashed.update(run_id for run_id in delivered
                           if not any(key[1] == run_id for key in recovered))
            # An acknowledgement on its way to the dead process is dropped.
            for run_id in [k for k, v in delivered.items() if v.t_ms == r.t_ms]:
                del delivered[run_id]
        elif kind == "fault" and r.data.get("kind") == "recovery-fail":
            refusals[r.data["run_id"]] = refusals.get(r.data["run_id"], 0) + 1
            if refusals[r.data["run_id"]] == RECOVERY_ATTEMPTS + 1:
                # Counted from outside: each refused hand-off of a recovered answer is an
                # attempt, whatever the registry's own table says.
                fail(f"the gateway refused {RECOVERY_ATTEMPTS + 1} hand-offs of "
                     f"{r.data['run_id']}'s recovered answer: recovery went past its bound of "
                     f"{RECOVERY_ATTEMPTS} attempts", r)
        elif kind == "requester.recovered":
            run_id = r.data["run_id"]
            first = recovered.setdefault((r.actor, run_id), r)
            if first is not r:
                fail(f"{run_id}'s recovered answer reached {r.actor} twice", first, r)
            run = asked.get(run_id)
            if run is None or not run.request.data.get("answer_lost") or not needs(run_id):
                fail(f"{r.actor} received a recovered answer for {run_id}, whose child wrote "
                     "no answer that was lost", r)
                continue
            # Re-read from the transcript and frozen as any result is (reference §c14).
            want = frozen(transcript_answer(messages.get(run_id, [])))
            shown = _shown_result(r.data["text"])
            cut = "\n[truncated: " in r.data["text"]  # at the announce cap: a head of it
            if want is None or shown is None or (
                    shown != want and not (cut and want.startswith(shown))):
                fail(f"{r.actor} received {_clip(shown)} as {run_id}'s recovered answer; its "
                     f"transcript holds {_clip(want)}", r)
        elif kind == "world.end":
            world_end = r
    if world_end is None or world_end.data["reason"] != "quiescent":
        return violations
    if down_from is not None:
        down.append((down_from, world_end.t_ms))

    def heard(at: int) -> bool:
        # An arrival in a crash's or a restart's very instant may come before either: not
        # surely heard (the order of one instant's records is the scheduler's).
        return not any(since <= at <= until for since, until in down)

    def current(run_id: str, key: str, at: int) -> bool:
        # No newer generation of the run (a key first sent after this one's) was sent by the
        # arrival: one sent in its very instant may come first (not surely current).
        # Nor was the run redriven after this key's first send and by the arrival (one in its
        # very instant may come first too).
        mine = first_sent.get((run_id, key))
        return mine is None or (not any(
            other[0] == run_id and other[1] != key and not is_wake(other[1])
            and not other[1].endswith(RECOVERED_SUFFIX) and mine < since <= at
            for other, since in first_sent.items()) and not any(
            mine < since <= at for since in redrives.get(run_id, ())))

    def in_window(run_id: str, key: str, at: int) -> bool:
        # A released private result's key first sent inside its window, acknowledged before
        # the window's end (a redrive's newer key has a window of its own: not judged here).
        release = released.get(run_id)
        if run_id not in private or release is None or release.how != "released" \
                or run_id not in ends:
            return True
        start = release.due_from(ends[run_id].t_ms)
        if start is None:
            return True
        end = start + WINDOW_MS
        return at < end or first_sent.get((run_id, key), end) >= end

    for run_id, record in delivered.items():
        if not needs(run_id) or not any(heard(at) and current(run_id, key, at)
                                        and in_window(run_id, key, at)
                                        for at, key in arrivals.get(run_id, ())):
            continue
        if run_id not in attempts:
            fail(f"{run_id} answered nothing visible and its (no output) was delivered at "
                 f"{record.t_ms} ms, but lost-answer recovery never started", record, world_end)
            continue
        run = asked[run_id]
        lost = bool(run.request.data.get("answer_lost")) and (
            transcript_answer(messages.get(run_id, [])) is not None)
        got = any(key[1] == run_id for key in recovered)
        end = ended.get(run_id)
        if end is None:
            fail(f"lost-answer recovery of {run_id} never ended", record, world_end)
        elif lost and not got and run_id not in crashed and \
                refusals.get(run_id, 0) + held.get(run_id, 0) < RECOVERY_ATTEMPTS:
            # Each attempt reads the transcript, which holds the answer: only a refused or
            # unanswered hand-off fails one, so fewer than three such failures leave an attempt
            # that hands it over (one under the bound: two refusals, the third takes).
            fail(f"{run_id}'s answer was in its transcript, yet recovery ended "
                 f"{end.data['outcome']} without it reaching the requester after "
                 f"{refusals.get(run_id, 0)} refused and {held.get(run_id, 0)} held hand-offs "
                 f"(fewer than its {RECOVERY_ATTEMPTS} attempts)", record, end)
    return violations


INVARIANTS = (
    Invariant("lost-answer-recovery", "DEL-2", "safety",
              "A required run with no visible answer is delivered as (no output) and then "
              "recovered, within three attempts, from its transcript; recovery never runs for a "
              "run that answered and never invents an answer.",
              lost_answer_recovery),
)
