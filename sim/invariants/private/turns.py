"""PRV-2 and PRV-6 oracles: what a private child's parent turn gets back, judged from what was
asked and what an outsider saw.

What was asked: each session's configured reply mode (``world.session``: ``reply_mode``, auto or
message_tool), the spawn requests with their completion target, turn and incarnation
(``world.spawn``), each turn's end (``world.turn_end``: a normal finish or ``sessions_yield``),
each status check (``world.status_check``) and each reset or delete (``world.lifecycle``). What
was seen: each child's own end (``child.end``, ``child.correction``), what the gateway was handed
(``gateway.send``), what entered the requester's transcript (``requester.accept``: the hand-off
or wake it read; ``requester.turn_answer``: what the resumed turn wrote, its final text and its
message-tool sends) and what the session's conversation received (``conversation.reply``).
Nothing here reads a verdict of the registry.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.reached import LIVENESS_BOUND_MS
from sim.invariants.index import of_kinds
from sim.invariants.lineage import killed_silently
from sim.invariants.observations import (
    Asked,
    announces_nothing,
    asked_runs,
    is_wake,
    key_runs,
)
from sim.invariants.private.completion import WINDOW_MS, carried_runs, private_runs
from sim.invariants.settled import UNKNOWN, own_settle
from sim.invariants.yields.seen import _descendants, _seen, batches
from sim.invariants.yields.yield_batches import wake_owed
from sim.trace import Record

SILENT = ("NO_REPLY", "ANNOUNCE_SKIP")  # an ok answer the wake leaves out (reference §c9)
SUMMARY = "more child results omitted:"  # the 160,000-character layout's summary line (FMT-2)
GENERATION = re.compile(r":g\d+$")  # a per-child key's later generation (reference §a)
# A private result whose descendants are unsettled rechecks them this often, spending no attempt
# (reference §c11: "Pending descendants in completion mode defer by 15 s").
DESCENDANT_RECHECK_MS = 15_000


def private_yield_reply_rules(trace: Sequence[Record]) -> list[Violation]:
    """PRV-2: a parent that yielded on a private child is resumed by its batch's wake, and its
    answer follows the normal reply rules of its session as configured: in ``auto`` mode the
    resumed turn's final text reaches the conversation; in ``message_tool`` mode only what it
    sent with the message tool does, and its plain final stays internal."""
    private = private_runs(trace)
    yielded = [b for b in batches(trace) if any(run_id in private for run_id in b.members)]
    if not yielded:
        return []
    modes: dict[str, str] = {}
    woken: dict[tuple[str, tuple[str, ...]], list[Record]] = {}  # (actor, runs) -> wakes taken
    answers: dict[str, list[Record]] = {}  # wake key -> the resumed turn's answers
    replies: dict[tuple[str, str], list[Record]] = {}  # (session, turn run) -> what it received
    for r in of_kinds(trace, ("world.session", "requester.accept", "requester.turn_answer",
                              "conversation.reply")):
        if r.kind == "world.session":
            modes[r.data["key"]] = r.data.get("reply_mode", "auto")
        elif r.kind == "requester.accept" and is_wake(r.data["key"]):
            woken.setdefault((r.actor, key_runs(r.data["key"])), []).append(r)
        elif r.kind == "requester.turn_answer":
            answers.setdefault(r.data["key"], []).append(r)
        elif r.kind == "conversation.reply":
            replies.setdefault((r.data["session"], r.data["turn_run_id"]), []).append(r)
    violations = []
    for batch in yielded:
        mode = modes.get(batch.session, "auto")
        for accept in woken.get((batch.actor, batch.members), []):
            answer = next((a for a in answers.get(accept.data["key"], [])
                           if a.actor == accept.actor and a.seq > accept.seq), None)
            where = (f"the turn {batch.turn} of {batch.session} ({mode} mode), resumed by its "
                     f"private batch's wake at {accept.t_ms} ms,")
            if answer is None:
                violations.append(Violation(
                    "private-yield-reply-rules", "PRV-2", f"{where} never answered",
                    (batch.yielded.seq, accept.seq)))
                continue
            final, sent = answer.data["final"], list(answer.data["message_tool"])
            got = replies.get((batch.session, answer.data["turn_run_id"]), [])
            texts = [r.data["text"] for r in got]
            wanted = sent if mode == "message_tool" else [final]
            problems = []
            if mode == "message_tool" and final in texts:
                problems.append("its plain final reached the conversation")
            problems += [f"{text[:60]!r} never reached the conversation" for text in wanted
                         if text not in texts]
            problems += [f"the conversation received {text[:60]!r}, which the turn did not "
                         "answer visibly" for text in texts if text not in wanted
                         and not (mode == "message_tool" and text == final)]
            if problems:
                violations.append(Violation(
                    "private-yield-reply-rules", "PRV-2", f"{where} answered against its "
                    f"session's reply rules: {'; '.join(problems)}",
                    (batch.yielded.seq, accept.seq, answer.seq, *(r.seq for r in got))))
    return violations


def _checked_completed(trace: Sequence[Record], ended_only: bool = True
                       ) -> list[tuple[Asked, Record]]:
    """Each status check of a private child that had already ended (with ``ended_only``, else
    of any private child), with the run it read."""
    private = private_runs(trace)
    by_child: dict[tuple[str, str], list[Asked]] = {}
    for run in sorted(private.values(), key=lambda a: a.request.seq):
        by_child.setdefault((run.request.data["requester"], run.child), []).append(run)
    ended: set[str] = set()
    found = []
    for r in of_kinds(trace, ("child.end", "world.status_check")):
        if r.kind == "child.end":
            ended.add(r.data["run_id"])
        elif r.kind == "world.status_check":
            runs = [a for a in by_child.get((r.data["session"], r.data["child"]), [])
                    if a.request.seq < r.seq]
            if runs and (runs[-1].run_id in ended or not ended_only):
                found.append((runs[-1], r))
    return found


def status_check_keeps_private(trace: Sequence[Record]) -> list[Violation]:
    """PRV-6: a status check of a completed private child (before its turn yields or finishes)
    neither consumes nor invalidates the result: it still reaches the parent's own turn, by its
    own hand-off or in the batch wake's findings, as it would without the check. A run killed
    before it ended has no result to keep (reference §c18)."""
    checked = _checked_completed(trace)
    if not checked:
        return _wake_leaves_out_checked(trace)
    spawns = {r.data["run_id"]: r for r in of_kinds(trace, ("spawn",)) if r.kind == "spawn"}
    ends: dict[str, Record] = {}
    produced: dict[str, list[str]] = {}  # run -> every answer its producer wrote
    turn_ends: dict[tuple[str, str | None, int], Record] = {}
    resets: dict[str, list[int]] = {}
    sent: set[str] = set()  # runs some gateway.send carried
    accepts: dict[str, list[Record]] = {}  # run -> transcript entries that carried it
    # run -> its producer's first correction or an operator's first request about it: from
    # then on a later generation of its hand-off (``...:g<n>``) is due (DEL-12, DEL-16)
    renewed: dict[str, int] = {}
    end: Record | None = None
    for r in of_kinds(trace, ("child.end", "child.correction", "world.operator", "world.turn_end",
                              "world.lifecycle", "gateway.send", "requester.accept",
                              "world.end")):
        kind = r.kind
        if kind == "child.end":
            ends.setdefault(r.data["run_id"], r)
            produced.setdefault(r.data["run_id"], []).append(r.data["result"] or "")
        elif kind == "child.correction":
            produced.setdefault(r.data["run_id"], []).append(r.data["result"] or "")
            renewed.setdefault(r.data["run_id"], r.seq)
        elif kind == "world.operator" and r.data["run_id"] is not None:
            renewed.setdefault(r.data["run_id"], r.seq)  # a redrive's next generation
        elif kind == "world.turn_end":
            turn_ends[(r.data["session"], r.data["turn"], r.data["incarnation"])] = r
        elif kind == "world.lifecycle":
            resets.setdefault(r.data["session"], []).append(r.seq)
        elif kind == "gateway.send":
            sent.update(carried_runs(r.data["key"]))
        elif kind == "requester.accept":
            for run_id in carried_runs(r.data["key"]):
                accepts.setdefault(run_id, []).append(r)
        elif kind == "world.end":
            end = r
    violations = []
    # A run killed before it ended (a kill, reset or delete) owes nothing (reference §c17, §c18).
    seen: set[str] = set(killed_silently(trace))
    for run, check in checked:
        if run.run_id in seen:
            continue
        seen.add(run.run_id)
        request = run.request.data
        # From a reset or delete on, it may rightly be closed (PRV-3): only what reached the
        # parent before that is judged.
        reset = min((seq for seq in resets.get(request["requester"], [])
                     if seq > run.request.seq), default=None)
        turn_end = turn_ends.get((request["requester"], request.get("turn"),
                                  request.get("incarnation", 1)))
        if turn_end is None:
            continue  # its turn is still open: retained, nothing owed yet (PRV-5)
        taken = [a for a in accepts.get(run.run_id, []) if a.actor == run.actor
                 and (reset is None or a.seq < reset)]
        members = [run.run_id]
        batch = None
        if turn_end.data["how"] == "yield":
            # Its batch: the turn's required children as asked
            # (sim/invariants/yields/yield_batches.py).
            batch = next((b for b in batches(trace) if run.run_id in b.members), None)
            members = list(batch.members) if batch is not None else members
        if not taken:
            if any(m not in ends for m in members) or run.run_id in sent or end is None \
                    or reset is not None:
                continue  # a member still runs, or a send was made: its fate is the gateway's
            if turn_end.data["how"] != "yield" and all(
                    announces_nothing(text) for text in produced[run.run_id]):
                # An exact ANNOUNCE_SKIP reply is handed back by announcing nothing (reference
                # §c1), checked or not (seed 4777).
                continue
            if batch is not None and not wake_owed(trace, batch):
                # Its batch may rightly close without a wake (its descendants unsettled through
                # the deferral limit, reference §c9), or when it settled cannot be told: the
                # check changes neither (seed 4416).
                continue
            due = max([turn_end.t_ms, *(ends[m].t_ms for m in members)])
            if batch is None and _descendants_outlast_window(trace, run.run_id, due):
                # Its own announce waits for its descendants (reference §c8, §c11) and its
                # window runs from its release: it may rightly expire undelivered, checked or
                # not (seeds 43588, 84662).
                continue
            if end.t_ms >= due + LIVENESS_BOUND_MS:
                violations.append(Violation(
                    "status-check-keeps-private", "PRV-6",
                    f"{run.run_id}'s private result (checked at {check.t_ms} ms after it ended) "
                    f"was never handed back to {request['requester']}: nothing carried it by "
                    f"{end.t_ms} ms, though its turn ended at {turn_end.t_ms} ms",
                    (run.request.seq, check.seq, turn_end.seq)))
            continue
        key = spawns[run.run_id].data["child_session_key"] if run.run_id in spawns else None
        silent = any(len(text) < 64 and text.strip() in SILENT
                     for text in produced.get(run.run_id, []))
        for accept in taken:
            text = accept.data["text"]
            if renewed.get(run.run_id, accept.seq) < accept.seq:
                continue  # after a correction or an operator's redrive: a new hand-off
            if GENERATION.search(accept.data["key"]):
                violations.append(Violation(
                    "status-check-keeps-private", "PRV-6",
                    f"{run.run_id}'s private result (checked at {check.t_ms} ms after it ended) "
                    f"reached {request['requester']} at {accept.t_ms} ms as a later generation "
                    f"({accept.data['key']}) with no correction or redrive before it: the check "
                    "was taken for its first hand-off", (run.request.seq, check.seq, accept.seq)))
                continue
            if len(members) > 1 or turn_end.data["how"] == "yield":
                if key_runs(accept.data["key"]) != tuple(members):
                    violations.append(Violation(
                        "status-check-keeps-private", "PRV-6",
                        f"{run.run_id}'s private result (checked at {check.t_ms} ms after it "
                        f"ended) reached {request['requester']} at {accept.t_ms} ms under "
                        f"{accept.data['key']}, not in the wake of its yielded batch "
                        f"({', '.join(members)})", (run.request.seq, check.seq, accept.seq)))
                    continue
            if is_wake(accept.data["key"]) and key is not None and not silent \
                    and SUMMARY not in text and f"session_key: {key}\n" not in text:
                violations.append(Violation(
                    "status-check-keeps-private", "PRV-6",
                    f"{run.run_id}'s private result (checked at {check.t_ms} ms after it ended) "
                    f"is missing from the findings of the wake {accept.data['key']} that "
                    f"resumed {request['requester']} at {accept.t_ms} ms",
                    (run.request.seq, check.seq, accept.seq)))
    return violations + _wake_leaves_out_checked(trace)


def _descendants_outlast_window(trace: Sequence[Record], run_id: str, release: int) -> bool:
    """Whether a released private result's descendants (the runs its child session spawned
    while it ran, theirs, and so on) may have stayed unsettled until its last descendant
    recheck inside its 30-minute window, as an outsider can tell (``own_settle``: a descendant's
    own end, then the last answer to its own delivery): one never ended, or its trail ends where
    nobody can tell when the registry heard it (an acknowledgement lost, a send unanswered, a
    refusal it retries after: it waits for a replay or its own expiry), or the latest settle is
    at or after ``release`` + 30 min - 15 s. Its announce is "deferred ... while
    countPendingDescendantRuns(child) > 0" (reference §c8), "by 15 s without counting an
    attempt", and it "expires 30 min after ... windowStartedAt" (§c11): such a result is given
    up at its expiry without any hand-off, with or without a status check (PRV-6 asks only that
    the check change nothing). Never the registry's deferral, give-up or cleanup records."""
    seen = _seen(trace)
    descendants = _descendants(seen, run_id)
    if not descendants:
        return False
    asked = asked_runs(trace)
    crashes = [down for down, _ in seen.downtime]
    latest = -1
    for d in descendants:
        # Read up to an operator's first request about it: a redrive of a given-up descendant
        # starts a delivery of its own (a new generation), which says nothing of when its
        # first one settled (as ``yield_batches`` reads a redriven member; seed 43588: run-8,
        # redriven past run-4's window).
        request, end = asked.get(d), seen.ends.get(d)
        since = min((t for t in seen.operator.get(request.child, []) if t >= end.t_ms),
                    default=2**62) if request is not None and end is not None else 2**62
        trail = [r for r in seen.trail.get(d, []) if r.t_ms < since]
        settled = own_settle(end, trail, request, member=False, crashes=crashes)
        if settled is None or settled == UNKNOWN:
            return True
        latest = max(latest, settled)
    return latest >= release + WINDOW_MS - DESCENDANT_RECHECK_MS


def _wake_leaves_out_checked(trace: Sequence[Record]) -> list[Violation]:
    """A private child checked (running or ended) before its turn yielded is still one of its
    batch's members: a wake of that batch naming some of the members but not it took the check
    for its hand-off."""
    checks: dict[str, Record] = {}
    for run, check in _checked_completed(trace, ended_only=False):
        checks.setdefault(run.run_id, check)
    if not checks:
        return []
    violations = []
    for batch in batches(trace):
        checked = [r for r in batch.members if r in checks and checks[r].seq < batch.yielded.seq]
        if not checked:
            continue
        for r in of_kinds(trace, ("requester.accept",)):
            if r.kind != "requester.accept" or r.actor != batch.actor or \
                    ":yield-" not in r.data["key"]:
                continue
            runs = set(key_runs(r.data["key"]))
            left_out = [c for c in checked if c not in runs]
            if runs and runs < set(batch.members) and left_out:
                violations.append(Violation(
                    "status-check-keeps-private", "PRV-6",
                    f"the wake {r.data['key']} of the batch {batch.turn} of {batch.session} "
                    f"leaves out {', '.join(left_out)}, a private child checked before the yield",
                    (checks[left_out[0]].seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("private-yield-reply-rules", "PRV-2", "safety",
              "A turn resumed by a private batch's wake answers by its session's reply rules: "
              "auto, its final reaches the conversation; message_tool, only message-tool sends "
              "do.", private_yield_reply_rules),
    Invariant("status-check-keeps-private", "PRV-6", "liveness",
              "A status check of a completed private child neither consumes nor invalidates its "
              "result: it still reaches the parent's own turn.", status_check_keeps_private),
)
