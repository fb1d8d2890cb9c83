"""DEL invariants over the trace: what reached which requester, and what the registry recorded.

Trace kinds read here: ``spawn`` (a requester registered a child run, with ``required``),
``child.end``, ``requester.accept`` (a completion entered the requester's transcript),
``delivery.delivered`` / ``delivery.give_up`` / ``delivery.skip`` (what the registry recorded),
``world.heal`` and ``world.end``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.lineage import descendants, killed_silently
from sim.invariants.observations import (
    Asked,
    asked_runs,
    final_rows,
    is_wake,
    key_runs,
    rejection_class,
)
from sim.invariants.private.completion import releases
from sim.invariants.settled import EXPIRY_MS, EarliestSettle, settles
from sim.invariants.unended import Unended, horizon_ms, unended_runs
from sim.trace import Record

_GENERATION = re.compile(r":g([0-9]+)$")

# Once faults heal, a required obligation must be resolved within this much virtual time after the
# later of the child's end and the heal: the 30-minute completion expiry plus one capped backoff
# (300 s + 20 % jitter) plus one unanswered send (120 s), rounded up.
LIVENESS_BOUND_MS = 40 * 60_000


def at_most_once(trace: Sequence[Record]) -> list[Violation]:
    """One violation per extra delivery, each saying how many times the run had then arrived."""
    seen: dict[tuple[str, str, int], list[Record]] = {}
    violations = []
    for r in of_kinds(trace, ("requester.accept",)):
        if r.kind != "requester.accept":
            continue
        # Per receipt: a correction (a newer end time) may supersede the reply (DEL-12). A batch
        # wake, per key: a retry on a fresh key may follow a wake taken without a visible reply
        # (one-wake-per-batch judges those), but one key is taken once.
        key = (r.actor, r.data["key"], -1) if is_wake(r.data.get("key", "")) else (
            r.actor, r.data["run_id"], r.data["ended_at"])
        deliveries = seen.setdefault(key, [])
        deliveries.append(r)
        if len(deliveries) == 1:
            continue
        first = deliveries[0]
        times = "twice" if len(deliveries) == 2 else f"{len(deliveries)} times"
        violations.append(Violation(
            "at-most-once", "DEL-3",
            f"{r.data['run_id']} reached {r.actor} {times}: "
            f"first at {first.t_ms} ms, delivery {len(deliveries)} at {r.t_ms} ms",
            (first.seq, r.seq)))
    return violations


def not_required_never_delivered(trace: Sequence[Record]) -> list[Violation]:
    """DEL-1, from the spawn request as the world made it: nothing is sent or delivered."""
    asked = asked_runs(trace)
    violations = []
    for r in of_kinds(trace, ("requester.accept", "gateway.send")):
        if r.kind not in ("requester.accept", "gateway.send"):
            continue
        run = asked.get(r.data["run_id"])
        if run is None or run.required:
            continue
        what = "its completion reached " + r.actor if r.kind == "requester.accept" else \
            "its completion was handed to the gateway"
        violations.append(Violation(
            "not-required-skipped", "DEL-1",
            f"{r.data['run_id']} was spawned with expectsCompletionMessage false, yet {what}",
            (run.request.seq, r.seq)))
    return violations


def delivered_means_received(trace: Sequence[Record]) -> list[Violation]:
    """The registry may only record "delivered" for a run whose own requester (the one that
    asked for it) has its completion: when it says so, and in its rows when the world stops."""
    asked = asked_runs(trace)
    received: dict[str, Record] = {}
    deleted: set[str] = set()  # requester actors whose session was deleted (DEL-4 fallback)
    violations = []
    for r in of_kinds(trace, ("world.delete-session", "child.end", "requester.accept",
                              "delivery.delivered")):
        if r.kind == "world.delete-session":
            deleted.add(f"requester:{r.data['session']}")
        elif r.kind == "child.end" and (r.data["result"] or "").strip() == "ANNOUNCE_SKIP":
            # Reference §c1: an exact ANNOUNCE_SKIP reply is delivered by announcing nothing.
            received.setdefault(r.data["run_id"], r)
        elif r.kind == "requester.accept" and is_wake(r.data.get("key", "")):
            # A batch wake hands over the results of the runs its key names.
            for run_id in key_runs(r.data["key"]):
                run = asked.get(run_id)
                if run is not None and r.actor == run.actor:
                    received.setdefault(run_id, r)
        elif r.kind == "requester.accept":
            run = asked.get(r.data["run_id"])
            if run is not None and r.actor != run.actor and run.actor in deleted:
                received.setdefault(r.data["run_id"], r)  # requester-fallback judges where
            elif run is not None and r.actor != run.actor:
                violations.append(Violation(
                    "delivered-means-received", "DEL-3",
                    f"{r.data['run_id']} was asked for by {run.actor}, but its completion was "
                    f"handed to {r.actor}", (run.request.seq, r.seq)))
            elif run is not None:
                received.setdefault(r.data["run_id"], r)
        elif r.kind == "delivery.delivered" and r.data["run_id"] not in received:
            violations.append(Violation(
                "delivered-means-received", "DEL-3",
                f"the registry recorded {r.data['run_id']} as delivered, "
                "but its requester never received it",
                (r.seq,)))
    for run_id, status in final_rows(trace).items():
        if status == "delivered" and run_id not in received and run_id in asked:
            violations.append(Violation(
                "delivered-means-received", "DEL-3",
                f"the registry's row says {run_id} was delivered, but its requester never "
                "received it", (asked[run_id].request.seq,)))
    return violations


def eventually_resolved(trace: Sequence[Record]) -> list[Violation]:
    """Liveness: every required child run ends, and its delivery is resolved in bounded time.

    Resolved, as an outsider sees it: its requester took it (on its own or in a batch wake), it
    replied exactly ANNOUNCE_SKIP, the gateway refused it for good, or (a private result) its
    session was reset; else the registry's row as an operator reads it when the world stops
    shows it settled (delivered, failed, suspended or discarded), and then it resolved by its
    last send or refusal. Never the registry's own give-up, close or skip records: a model that
    records a give-up it never made leaves a pending row, and that is stuck. A correction of
    its result (DEL-12) or an operator's redrive (DEL-16) may open a new generation, which must
    resolve too, in time counted from then; a redrive that opened none (no new key sent, the
    row's generation unchanged when the world stops) leaves it resolved as it was before the
    request (seed 48825). A run whose batch wake its session last refused
    while a turn ran that was still running when the world stopped is not stuck: the wake
    waits, armed, for that turn (reference §c17), and once that turn ended it is owed in time
    counted from then. A run its requester's reset or delete found not
    yet ended is owed no resolution, only its end: it was killed (§c17); so is a run a kill
    stopped before it ended (§c18)."""
    asked = asked_runs(trace)
    private = releases(trace)
    killed = killed_silently(trace)  # owed nothing once ended (reference §c17, §c18)
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    resolved: dict[str, Record] = {}
    last: dict[str, Record] = {}  # each run's last send, or answer to one, since it was owed
    heal_ms = 0
    end: Record | None = None
    # A wake its session refused while busy in another turn waits, armed, until that turn ends
    # (reference §c17): each session's open turn (when it started), and the runs each wake
    # named when its session last refused it.
    open_turn: dict[str, int] = {}
    yielded: set[tuple[str, str]] = set()  # (session, turn) of each turn that yielded (§c9)
    turns: dict[str, list[tuple[int, int]]] = {}  # each session's turns that ended: (from, to)
    waiting: dict[str, tuple[str, int]] = {}
    turn_ended: dict[str, int] = {}  # when the turn that spawned each run ended
    generations: dict[str, int] = {}  # run -> the highest generation of its own keys sent
    # run -> its resolution when an operator asked to redrive it, and its generation then: a
    # redrive the registry rightly refused (a delivered run) opens nothing, and the row when
    # the world stops shows that generation still; the run stays resolved as it was, whatever
    # wake carried its result later (seed 48825: a wave took it an hour on).
    unopened: dict[str, tuple[Record, int]] = {}
    for r in of_kinds(trace, ("world.turn", "world.turn_end", "world.lifecycle",
                              "requester.turn_end",
                              "requester.wake_refused", "spawn", "child.end", "requester.accept",
                              "gateway.send", "fault", "requester.gone", "gateway.refused",
                              "child.correction",
                              "world.operator", "world.heal", "world.rows", "world.end")):
        kind = r.kind
        if kind == "world.turn":
            open_turn[r.data["session"]] = r.t_ms
        elif kind in ("world.turn_end", "world.lifecycle"):
            if kind == "world.turn_end" and r.data["how"] == "yield":
                yielded.add((r.data["session"], r.data["turn"]))
            started = open_turn.pop(r.data["session"], None)
            if started is not None:
                turns.setdefault(r.data["session"], []).append((started, r.t_ms))
        elif kind == "requester.turn_end":
            for run_id in r.data["children"]:
                turn_ended.setdefault(run_id, r.t_ms)
        elif kind == "requester.wake_refused":
            for run_id in key_runs(r.data["key"]):
                waiting[run_id] = (r.actor.removeprefix("requester:"), r.t_ms)
        if kind == "spawn":
            spawns[r.data["run_id"]] = r
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
            result = r.data.get("result")
            if result is not None and result.strip() == "ANNOUNCE_SKIP":
                resolved.setdefault(r.data["run_id"], r)
        elif kind == "requester.accept" and is_wake(r.data["key"]):
            for run_id in key_runs(r.data["key"]):
                resolved.setdefault(run_id, r)
        elif kind == "requester.accept":
            # For liveness, having the result resolves it (the safety invariants judge whether
            # the registry agrees).
            resolved.setdefault(r.data["run_id"], r)
            last[r.data["run_id"]] = r
        elif kind == "gateway.send" and not is_wake(r.data["key"]):
            last[r.data["run_id"]] = r
            found = _GENERATION.search(r.data["key"])
            generations[r.data["run_id"]] = max(generations.get(r.data["run_id"], 1),
                                                1 if found is None else int(found.group(1)))
        elif rejection_class(r) is not None and r.data.get("run_id") in spawns:
            last[r.data["run_id"]] = r
            if rejection_class(r) in ("permanent", "sent"):
                resolved.setdefault(r.data["run_id"], r)
        elif kind == "child.correction" or (
                kind == "world.operator" and r.data["action"] == "redrive"
                and r.data["run_id"] in ends):
            # (A redrive asked of a run not yet ended reopens nothing: the registry refuses it,
            # and the run is owed its end first; the edge workload's run-305.)
            # A newer receipt (DEL-12) or an operator's redrive (DEL-16) may reopen it: that
            # generation must resolve too, in time counted from the reopening (if the registry
            # rightly did not reopen it, its row shows it settled).
            was = resolved.pop(r.data["run_id"], None)
            if kind == "child.correction":
                unopened.pop(r.data["run_id"], None)  # a newer receipt reopens by itself
            elif was is not None:
                unopened[r.data["run_id"]] = (was, generations.get(r.data["run_id"], 1))
            ends[r.data["run_id"]] = r
        elif kind == "world.heal":
            heal_ms = r.t_ms
        elif kind == "world.rows":
            for row in r.data["rows"]:
                run_id = row["run_id"]
                kept = unopened.get(run_id)
                if kept is not None and row["delivery_status"] != "pending" \
                        and row.get("generation") == kept[1] == generations.get(run_id, 1):
                    resolved[run_id] = kept[0]
                    continue
                if row["delivery_status"] != "pending" and run_id not in resolved \
                        and run_id in ends:
                    resolved[run_id] = last.get(run_id, ends[run_id])
        elif kind == "world.end":
            end = r
    if end is None:
        return [Violation("eventually-resolved", "liveness", "the run never ended", ())]
    violations = []
    # A time-limit end leaves runs unended that may legitimately still be running or waiting:
    # each excuse computed exactly from the plan asked and the transcripts (unended.py).
    unended = unended_runs(trace)
    until = horizon_ms(end)
    for run_id, spawn in spawns.items():
        child_end = ends.get(run_id)
        if child_end is None:
            verdict = unended.get(run_id)
            if verdict is not None and verdict.excused:
                continue
            why = "" if verdict is None else f": {verdict.why}"
            violations.append(Violation(
                "eventually-resolved", "liveness",
                f"stuck: {run_id} (child {spawn.data['child']}) never ended "
                f"(world ended at {end.t_ms} ms: {end.data['reason']}){why}",
                (spawn.seq, end.seq)))
            continue
        run = asked.get(run_id)
        if run is None or not run.required or run_id in killed:
            continue
        resolution = resolved.get(run_id)
        owed_from = child_end.t_ms
        if run_id in private:  # PRV-5: owed once its spawning turn released it (or reset)
            due = private[run_id].due_from(child_end.t_ms)
            if due is None:
                continue  # retained: its turn is still open
            owed_from = due
        wait = waiting.get(run_id)
        if wait is not None:
            # Its wake waited, armed, for the turn its session was busy in (§c17): owed from
            # that turn's end (a world run a week on finishes a turn left open: seed 750).
            owed_from = max([owed_from] + [to for since, to in turns.get(wait[0], [])
                                           if since <= wait[1] <= to])
        if resolution is not None and resolution.kind == "requester.accept" \
                and is_wake(resolution.data["key"]):
            # Taken in a batch wake or a wave: sent only once the turn that spawned it is over
            # (§c9, §c17), owed from then too (a turn finished a week on: seed 750).
            owed_from = max(owed_from, turn_ended.get(run_id, owed_from))
            if ":yield-" in resolution.data["key"]:
                # A yield batch's member was handed to the batch: its wake goes once every
                # member, and every run under those, settled (YLD-1, DEL-6), with no expiry of
                # its own. A wave's members are announced one by one (§c9), and a run's own
                # completion expires 30 minutes after its end, waiting or not: the bound holds
                # for them as is (a redriven member a wave carried an hour on: seed 48825).
                held = _held(trace, key_runs(resolution.data["key"]), settles(trace))
                if held is None:
                    continue  # a run the wake waited on never ended: that one is reported
                owed_from = max(owed_from, held)
        bound = max(owed_from, heal_ms) + LIVENESS_BOUND_MS
        if resolution is None and wait is not None and open_turn.get(wait[0], 2**62) <= wait[1]:
            continue  # its wake waits on a turn still running when the world stopped (§c17)
        if resolution is None and until is not None and bound > until:
            continue  # still within its bound when the time limit stopped the world
        if resolution is None and until is not None \
                and _batch_waits(run_id, asked, yielded, ends, unended):
            continue  # its yielded batch waits for a member still legitimately running (§c9)
        if resolution is None:
            violations.append(Violation(
                "eventually-resolved", "liveness",
                f"stuck: {run_id} (child {spawn.data['child']}) ended at {child_end.t_ms} ms and "
                f"its completion is still pending (neither delivered nor recorded as failed) "
                f"when the world ended at {end.t_ms} ms ({end.data['reason']})",
                (spawn.seq, child_end.seq, end.seq)))
        elif resolution.t_ms > bound:
            violations.append(Violation(
                "eventually-resolved", "liveness",
                f"{run_id} was resolved at {resolution.t_ms} ms, later than {bound} ms "
                f"(40 min after the later of its end and the heal)",
                (child_end.seq, resolution.seq)))
    return violations


def _held(trace: Sequence[Record], runs: Sequence[str], settle: EarliestSettle) -> int | None:
    """Until when these members may rightly hold their batch's wake back: each one's end (the
    wake carries them once they all ended, YLD-1) and the settle of every run under each
    (descendants first, DEL-6: the wake waits while one of them is pending), each at the
    earliest its settle may show to an outsider (at most 30 minutes after its end: the expiry;
    the registry's give-up may come up to one backoff later, settled.py ``EXPIRY_MS``, and
    the wake with it, inside the 40 minutes owed after this); None if one of
    them never ended. A public member of a private batch keeps its own delivery (reference
    §c10), which the wake waits for: its settle, or the expiry (30 min) of a generation an
    operator's redrive opened after its end (seed 46346)."""
    held = 0
    asked = asked_runs(trace)
    private = any(_private(asked.get(run_id)) for run_id in runs)
    for run_id in runs:
        own = private and not _private(asked.get(run_id))
        for each in (run_id, *descendants(trace, run_id)):
            at = settle.earliest(each) if each != run_id or own else (
                None if run_id not in settle.ends else (settle.ends[run_id], 0))
            if at is None:
                return None
            held = max(held, at[0], *(r.t_ms + EXPIRY_MS for r in of_kinds(
                trace, ("world.operator",)) if own and each == run_id and r.kind ==
                "world.operator" and r.data["action"] == "redrive"
                and r.data.get("run_id") == run_id and r.t_ms >= settle.ends[run_id]))
    return held


def _private(ask: Asked | None) -> bool:
    return ask is not None and ask.request.data.get("completion_target") == "parent"


def _batch_waits(run_id: str, asked: dict[str, Asked], yielded: set[tuple[str, str]],
                 ends: dict[str, Record], unended: dict[str, Unended]) -> bool:
    """Whether the run was asked in a turn that yielded (its completion goes with that turn's
    batch, reference §c9: sent once every member settled) and another member of that batch had
    not ended when the world stopped short, legitimately (``unended.py``)."""
    ask = asked[run_id].request.data
    batch = (ask["requester"], ask["turn"])
    if ask["turn"] is None or batch not in yielded:
        return False
    return any(other != run_id and other not in ends and unended.get(other) is not None
               and unended[other].excused
               and (member.request.data["requester"], member.request.data["turn"]) == batch
               for other, member in asked.items())


def required_reaches_requester(trace: Sequence[Record]) -> list[Violation]:
    """A run asked for with expectsCompletionMessage true is never skipped: its result reaches
    its own requester, or the registry records it failed or suspended (DEL-1, DEL-2, DEL-10).
    A run its requester's reset or delete found not yet ended is owed nothing: killed, its
    delivery suppressed (reference §c17; reset-kills-children judges that); so is a run a kill
    stopped (reference §c18; kill-suppresses judges that)."""
    asked = asked_runs(trace)
    killed = killed_silently(trace)
    violations = []
    for r in of_kinds(trace, ("delivery.skip",)):
        if r.kind == "delivery.skip":
            run = asked.get(r.data["run_id"])
            if run is not None and run.required and run.run_id not in killed:
                violations.append(Violation(
                    "required-reaches-requester", "DEL-1",
                    f"{run.run_id} was asked for with expectsCompletionMessage true, yet its "
                    "delivery was skipped", (run.request.seq, r.seq)))
    for run_id, status in final_rows(trace).items():
        run = asked.get(run_id)
        if run is not None and run.required and status == "not_required" \
                and run_id not in killed:
            violations.append(Violation(
                "required-reaches-requester", "DEL-1",
                f"{run_id} was asked for with expectsCompletionMessage true, yet the registry "
                "recorded it as not required", (run.request.seq,)))
    return violations


def failure_not_replayed(trace: Sequence[Record]) -> list[Violation]:
    """DEL-14: a run whose runtime outcome is an error hands its requester the failure, never a
    replay of text it captured before failing; nor does the store keep that text as the run's
    result (``world.rows``: what a later redrive or archive read would hand over), whether or
    not the run ever reached its requester (unless the producer corrected it since: DEL-12)."""
    failed: dict[str, Record] = {}
    corrected: set[str] = set()
    violations = []
    for r in of_kinds(trace, ("child.end", "child.correction", "world.rows", "requester.accept")):
        if r.kind == "child.end" and r.data["status"] == "error":
            failed[r.data["run_id"]] = r
        elif r.kind == "child.correction":
            corrected.add(r.data["run_id"])
        elif r.kind == "world.rows":
            for row in r.data["rows"]:
                end = failed.get(row["run_id"])
                if end is not None and row["run_id"] not in corrected \
                        and row.get("result_chars") is not None:
                    violations.append(Violation(
                        "failure-not-replayed", "DEL-14",
                        f"{row['run_id']} failed ({end.data['error']}), yet its store row keeps "
                        f"a result of {row['result_chars']} characters",
                        (end.seq, r.seq)))
        elif r.kind == "requester.accept" and r.data["run_id"] in failed:
            text = r.data["text"]
            # The findings of its children (DEL-6) are theirs, not text it captured.
            findings = "<prompt-data>\nChild completion results:\n\n" in text
            if "<prompt-data>" in text and not findings:
                head = text[text.index("<prompt-data>"):][:80]
                violations.append(Violation(
                    "failure-not-replayed", "DEL-14",
                    f"{r.data['run_id']} failed ({failed[r.data['run_id']].data['error']}), yet "
                    f"{r.actor} read a result block: {head!r}",
                    (failed[r.data["run_id"]].seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("at-most-once", "DEL-3", "safety",
              "A completion reaches its requester at most once.",
              at_most_once),
    Invariant("not-required-skipped", "DEL-1", "safety",
              "A run spawned with expectsCompletionMessage false is never delivered.",
              not_required_never_delivered),
    Invariant("delivered-means-received", "DEL-3", "safety",
              "The registry records 'delivered' only for a result its requester received.",
              delivered_means_received),
    Invariant("eventually-resolved", "liveness", "liveness",
              "Once faults heal, every required completion is delivered or recorded as failed "
              "within a bounded virtual time; otherwise a stuck report names what is pending.",
              eventually_resolved),
    Invariant("required-reaches-requester", "DEL-1", "safety",
              "A run asked for with expectsCompletionMessage true is never skipped or recorded "
              "as not required.", required_reaches_requester),
    Invariant("failure-not-replayed", "DEL-14", "safety",
              "A run that failed hands its requester the failure, never captured reply text.",
              failure_not_replayed),
)
