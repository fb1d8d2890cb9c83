"""DEL-16 oracles: what the registry keeps in memory, and what its store keeps, per run, for how
long a suspended result is kept (reference §c18: 7 days from its suspension), and when a
delete-mode run is archived (§c18: its end + archiveAfterMinutes, never while its required
completion is pending).

Read from the trace alone: what was asked (``world.spawn``: each task), what each child wrote as
its result (``child.end``), the registry's store rows when the world stops (``world.rows``: whether
the run was cleaned up, how many characters of task and result text the row keeps) and a dump of
the registry process's memory the harness takes at the same moment (``world.memory``), as an
operator inspecting the process would. The preview cap is restated from reference §c6 (a field
value is capped at 256 characters, ending in ``…``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.frozen import frozen
from sim.invariants.index import last_of_kind, of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash, is_wake, rejection_class
from sim.trace import Record

PREVIEW_CHARS = 256
LIFECYCLE = frozenset(("held", "run_id", "child_session_key", "requester", "task_preview",
                       "required", "outcome_status", "delivery_status", "created_at_ms",
                       "ended_at_ms", "delivered_at_ms", "cleaned_up_at_ms", "generation",
                       "receipt_ended_at_ms"))


def _last(trace: Sequence[Record], kind: str) -> Record | None:
    return last_of_kind(trace, kind)


def memory_preview(trace: Sequence[Record]) -> list[Violation]:
    """Once a run's obligations resolved (its row is cleaned up), the registry's memory holds
    only its task preview and lifecycle metadata, never its full task or result text; a run
    whose obligations are open may hold its whole payload."""
    memory, rows = _last(trace, "world.memory"), _last(trace, "world.rows")
    if memory is None or rows is None:
        return []
    asked = asked_runs(trace)
    # A cleaned-up run reopened for a newer receipt (DEL-12) is pending again: obligations open.
    cleaned = {row["run_id"] for row in rows.data["rows"]
               if row.get("cleaned_up") and row.get("delivery_status") != "pending"}
    violations: list[Violation] = []

    def fail(what: str) -> None:
        violations.append(Violation("memory-preview", "DEL-16", what, (memory.seq,)))

    held = memory.data["runs"]
    for run_id in sorted(cleaned - set(held)):
        fail(f"{run_id} was resolved and cleaned up, but the registry's memory forgot it")
    for run_id, entry in held.items():
        if run_id not in cleaned:
            continue  # its obligations are open: its payload may stay in memory
        extra = sorted(set(entry) - LIFECYCLE)
        if entry.get("held") != "summary" or extra:
            fail(f"{run_id} is resolved, yet memory holds {extra or sorted(entry)} beyond its "
                 "preview and lifecycle metadata")
            continue
        run = asked.get(run_id)
        if run is None:
            continue
        task = run.request.data["task"]
        want = task if len(task) <= PREVIEW_CHARS else task[:PREVIEW_CHARS - 1] + "…"
        if entry.get("task_preview") != want:
            fail(f"{run_id}'s task preview is {entry.get('task_preview')!r:.80}, not the "
                 f"{min(len(task), PREVIEW_CHARS)}-character preview of its task")
    return violations


def payload_retained(trace: Sequence[Record]) -> list[Violation]:
    """The store keeps every run's full task and result text (the result as frozen: over
    102,400 bytes, its capped prefix and notice, reference §c14), whatever its delivery status:
    pending, suspended and abandoned work keep the payload a redrive or a later read needs."""
    rows = _last(trace, "world.rows")
    if rows is None:
        return []
    asked = asked_runs(trace)
    # The producer's newest receipt of each run: its end, or a later correction (DEL-12).
    ends = {r.data["run_id"]: r for r in of_kinds(trace, ("child.end", "child.correction"))
            if r.kind in ("child.end", "child.correction")}
    violations: list[Violation] = []
    for row in rows.data["rows"]:
        run_id = row["run_id"]
        run, end = asked.get(run_id), ends.get(run_id)
        problems = []
        if run is not None and row.get("task_chars") != len(run.request.data["task"]):
            problems.append(f"{row.get('task_chars')} characters of its "
                            f"{len(run.request.data['task'])}-character task")
        if end is not None:
            result = frozen(end.data["result"])  # what the registry may keep of it (§c14)
            want = None if result is None else len(result)
            if row.get("result_chars") != want:
                problems.append(f"{row.get('result_chars')} characters of its result "
                                f"({want} in the child's newest receipt)")
        if problems:
            violations.append(Violation(
                "payload-retained", "DEL-16",
                f"{run_id}'s row ({row['delivery_status']}) keeps " + " and ".join(problems),
                (rows.seq,) if end is None else (end.seq, rows.seq)))
    return violations


# SUBAGENT_SUSPENDED_DELIVERY_RETENTION_MS, restated (reference §c18).
RETENTION_MS = 7 * 24 * 3600 * 1000


def _messages(page: dict[str, object]) -> int:
    """How many messages a sessions_history answer says the session holds: totalMessages comes
    only with a paged request (§c19); else the page's own messages."""
    total = page.get("totalMessages")
    if isinstance(total, int):
        return total
    messages = page.get("messages")
    return len(messages) if isinstance(messages, list) else 0


def _down_spans(trace: Sequence[Record]) -> list[tuple[int, int | None]]:
    """When the delivery process was down: from each crash the harness saw to the restart it
    recorded next (None: still down when the world stopped)."""
    spans: list[tuple[int, int | None]] = []
    down: int | None = None
    for r in of_kinds(trace, ("crash", "world.restart")):
        if is_delivery_crash(r) and down is None:
            down = r.t_ms
        elif r.kind == "world.restart" and down is not None:
            spans.append((down, r.t_ms))
            down = None
    if down is not None:
        spans.append((down, None))
    return spans


def _awake_from(spans: list[tuple[int, int | None]], t_ms: int) -> int | None:
    """The first moment from ``t_ms`` on at which the delivery process was up (None: never
    again before the world stopped)."""
    for start, end in spans:
        if start <= t_ms and (end is None or t_ms < end):
            return end
    return t_ms


def suspended_kept_seven_days(trace: Sequence[Record]) -> list[Violation]:
    """A suspended result is kept exactly 7 days from its suspension (reference §c18): the
    store's row shows it discarded as expired at its suspension + 7 days (or, when the delivery
    process was down then, at its restart), never earlier, and never pruned for pressure; a row
    still suspended when the world stops was suspended less than 7 days before; after its expiry
    nothing of the run is handed to the gateway, an operator's redrive included. Read from the
    store's rows when the world stops (their suspension and expiry columns), the producer's end
    of each run, the harness's crash and restart records, the operator's requests and what the
    gateway was handed; never the registry's own records."""
    rows, end = _last(trace, "world.rows"), _last(trace, "world.end")
    if rows is None or end is None:
        return []
    spans = _down_spans(trace)
    ended = {r.data["run_id"]: r for r in of_kinds(trace, ("child.end",))
             if r.kind == "child.end"}
    violations: list[Violation] = []

    def fail(what: str, *records: Record) -> None:
        violations.append(Violation("suspended-kept-seven-days", "DEL-16", what,
                                    (*(r.seq for r in records), rows.seq)))

    # run -> (its suspension, when its 7 days were up as the live process could act on it)
    kept: dict[str, tuple[int, int | None]] = {}
    for row in rows.data["rows"]:
        run_id, since, gone = row["run_id"], row.get("suspended_at"), row.get("expired_at")
        if since is None:
            if gone is not None:
                fail(f"{run_id} was discarded as expired at {gone} ms without a suspension")
            continue
        end_of_run = ended.get(run_id)
        if end_of_run is not None and since < end_of_run.t_ms:
            fail(f"{run_id}'s row says it was suspended at {since} ms, before its run ended "
                 f"({end_of_run.t_ms} ms)", end_of_run)
        due = since + RETENTION_MS
        awake = _awake_from(spans, due)
        kept[run_id] = (since, awake)
        if gone is not None:
            if row["delivery_status"] != "discarded":
                fail(f"{run_id} expired at {gone} ms, yet its row is {row['delivery_status']}")
            if gone < due:
                fail(f"{run_id} was suspended at {since} ms and discarded as expired at {gone} "
                     f"ms, {(due - gone) // 1000} s before its 7 days were up")
            elif gone != due and gone != awake:
                fail(f"{run_id} was suspended at {since} ms and discarded as expired at {gone} "
                     f"ms, not at its 7 days' end ({due} ms) nor at the delivery process's "
                     f"restart after it ({awake})")
        elif row["delivery_status"] == "suspended" and awake is not None and end.t_ms > awake:
            fail(f"{run_id} was suspended at {since} ms and is still suspended when the "
                 f"world stops at {end.t_ms} ms, past its 7 days ({due} ms)", end)
    # An operator's redrive inside the 7 days starts a new generation, which may be sent later;
    # without one, nothing of the run goes out once they are up (expired: a redrive after that
    # delivers nothing).
    redriven = {r.data["run_id"] for r in of_kinds(trace, ("world.operator",))
                if r.kind == "world.operator" and r.data["action"] == "redrive"
                and r.data["run_id"] in kept
                and kept[r.data["run_id"]][0] <= r.t_ms
                and r.t_ms < (kept[r.data["run_id"]][1] or end.t_ms + 1)}
    for r in of_kinds(trace, ("gateway.send",)):
        if r.kind != "gateway.send":
            continue
        run_id = r.data["run_id"]
        if run_id not in kept or run_id in redriven or is_wake(r.data["key"]):
            continue
        since, limit = kept[run_id]
        if limit is not None and r.t_ms >= limit:
            fail(f"{run_id} was suspended at {since} ms and not redriven within its 7 days, yet "
                 f"it was handed to the gateway under {r.data['key']} at {r.t_ms} ms, after "
                 "they were up", r)
            kept.pop(run_id)  # once is enough
    return violations


def archived_after_completion(trace: Sequence[Record]) -> list[Violation]:
    """A run is archived (its store row's ``archived_at``) only if it was spawned with cleanup
    ``delete`` under a non-zero archiveAfterMinutes, never before its end + that many minutes,
    and never while its completion was pending: none of its own keys sent before the archive is
    handed to the gateway again, nor first taken by its requester, after it (a key first sent
    after it is a new delivery, an operator's redrive, and so is one first sent in its instant
    after an operator asked to redrive the run then; a late take of a held copy does not count
    once the gateway refused one of the run's sends for good before the archive). A delete-mode
    run whose row is resolved and cleaned up is archived once its deadline passed (when the
    world ran on to it with the delivery process up). After the archive, ``sessions_history`` of
    its child session (no newer run of it spawned, no run's end wrote it since) shows nothing:
    the live session is gone; its archive stays readable (``archive-read``, FMT-6). Read from
    the configuration (``world.start``), the spawn requests, the producer's end of each run, the
    gateway's sends, the requester's transcript and history reads, the harness's crash and
    restart records, and the store's rows."""
    rows, end, start = _last(trace, "world.rows"), _last(trace, "world.end"), \
        _last(trace, "world.start")
    if rows is None or end is None or start is None:
        return []
    after_ms = 60_000 * (start.data.get("archive_after_minutes") or 0)
    asked = asked_runs(trace)
    ended = {r.data["run_id"]: r for r in of_kinds(trace, ("child.end",))
             if r.kind == "child.end"}
    spans = _down_spans(trace)
    violations: list[Violation] = []

    def fail(what: str, *records: Record) -> None:
        violations.append(Violation("archived-after-completion", "DEL-16", what,
                                    (*(r.seq for r in records), rows.seq)))

    archived: dict[str, int] = {}
    for row in rows.data["rows"]:
        run_id, at = row["run_id"], row.get("archived_at")
        run, end_of_run = asked.get(run_id), ended.get(run_id)
        mode = "keep" if run is None else run.request.data.get("cleanup", "keep")
        if at is not None:
            archived[run_id] = at
            if not after_ms or mode != "delete":
                fail(f"{run_id} was archived at {at} ms, yet it was spawned with cleanup "
                     f"{mode!r} under archiveAfterMinutes {after_ms // 60_000}")
            elif end_of_run is not None and at < end_of_run.t_ms + after_ms:
                fail(f"{run_id} was archived at {at} ms, before its end + archiveAfterMinutes "
                     f"({end_of_run.t_ms + after_ms} ms)", end_of_run)
        elif after_ms and mode == "delete" and end_of_run is not None and row.get("cleaned_up") \
                and row["delivery_status"] != "pending":
            awake = _awake_from(spans, end_of_run.t_ms + after_ms)
            if awake is not None and end.t_ms > awake and not any(
                    start_ms <= end.t_ms and (stop is None or end.t_ms < stop)
                    for start_ms, stop in spans):
                fail(f"{run_id} (cleanup 'delete') was resolved and cleaned up, yet not archived "
                     f"when the world stopped at {end.t_ms} ms, past its end + "
                     f"archiveAfterMinutes ({end_of_run.t_ms + after_ms} ms)", end_of_run, end)
    if not archived:
        return violations
    sent_before: dict[str, set[str]] = {}
    taken: set[str] = set()
    latest: dict[tuple[str, str], str] = {}  # (requester actor, child) -> its newest run
    sessions: dict[str, str] = {}  # run -> its child session key
    reused: set[str] = set()  # runs whose child session a newer run took after their archive
    written: dict[str, int] = {}  # child session key -> when a run's end last wrote it
    # Runs whose own send the gateway refused for good before their archive: the registry's
    # delivery was over then (DEL-10), so a copy of an earlier send held on its way that the
    # requester takes after the archive was not pending to the registry (seed 19381).
    refused: set[str] = set()
    # Runs an operator asked to redrive in their archive's very instant (or later): a key first
    # sent after that request is the redrive's new delivery, even in that instant, since the
    # store's ``archived_at`` cannot order the archive against the request (seeds 26992, 85711:
    # the sweeper archived the given-up run, then the request started ``:g<n>``).
    redrive_asked: set[str] = set()
    for r in of_kinds(trace, ("spawn", "gateway.send", "requester.accept", "requester.history",
                              "child.end", "fault", "requester.gone", "gateway.refused",
                              "world.operator")):
        kind = r.kind
        if kind == "world.operator":
            run_id = r.data.get("run_id")
            if r.data["action"] == "redrive" and run_id in archived \
                    and r.t_ms >= archived[run_id]:
                redrive_asked.add(run_id)
            continue
        if kind in ("fault", "requester.gone", "gateway.refused"):
            run_id = r.data.get("run_id")
            if run_id in archived and r.t_ms <= archived[run_id] \
                    and rejection_class(r) in ("permanent", "sent"):
                refused.add(run_id)
            continue
        if kind == "child.end":
            # A run's end writes its transcript as the key's live session (FMT-6: keys are
            # reused): an older run still running on the key when another was archived writes
            # it again after the archive (seed 743), and a read then shows that run's transcript.
            key = (r.data.get("archive") or {}).get("session_key")
            if key is not None:
                written[key] = r.t_ms
            continue
        if kind == "spawn":
            latest[(r.actor, r.data["child"])] = r.data["run_id"]
            sessions[r.data["run_id"]] = key = r.data["child_session_key"]
            reused.update(run_id for run_id, at in archived.items()
                          if sessions.get(run_id) == key and run_id != r.data["run_id"])
            continue
        if kind == "requester.history":
            run_id = latest.get((r.actor, r.data["child"]))
            at = archived.get(run_id or "")
            if run_id is not None and at is not None and r.t_ms > at and run_id not in reused \
                    and written.get(sessions.get(run_id, ""), at) <= at \
                    and _messages(r.data["result"]):
                fail(f"{r.actor} read {r.data['child']}'s live session with sessions_history "
                     f"after its run {run_id} was archived at {at} ms, and got "
                     f"{_messages(r.data['result'])} messages (the session is deleted)", r)
            continue
        if kind not in ("gateway.send", "requester.accept"):
            continue
        run_id, key = r.data["run_id"], r.data["key"]
        if run_id not in archived or is_wake(key) or key.endswith(":recovered"):
            continue
        at = archived[run_id]
        if kind == "gateway.send":
            if r.t_ms <= at and not (run_id in redrive_asked
                                     and key not in sent_before.get(run_id, ())):
                sent_before.setdefault(run_id, set()).add(key)
            elif key in sent_before.get(run_id, ()):
                fail(f"{run_id} was archived at {at} ms while its completion was pending: "
                     f"{key} was handed to the gateway again at {r.t_ms} ms", r)
                sent_before.pop(run_id)
        elif run_id not in taken and key in sent_before.get(run_id, ()):
            # (a key first sent after the archive is a new delivery: an operator's redrive)
            taken.add(run_id)
            if r.t_ms > at and run_id not in refused:
                fail(f"{run_id} was archived at {at} ms while its completion was pending: its "
                     f"requester first took it at {r.t_ms} ms", r)
    return violations


INVARIANTS = (
    Invariant("archived-after-completion", "DEL-16", "safety",
              "A delete-mode run is archived at its end + archiveAfterMinutes, never while its "
              "completion is pending, never a keep-mode run; after it, sessions_history shows "
              "its live session gone.", archived_after_completion),
    Invariant("suspended-kept-seven-days", "DEL-16", "safety",
              "A suspended result is discarded as expired exactly 7 days after its suspension, "
              "never earlier (nothing is pruned for pressure); nothing of it is sent after.",
              suspended_kept_seven_days),
    Invariant("memory-preview", "DEL-16", "safety",
              "A resolved run is held in memory as a task preview and lifecycle metadata only.",
              memory_preview),
    Invariant("payload-retained", "DEL-16", "safety",
              "The store keeps each run's full task and result text; pending, suspended and "
              "abandoned work never loses its payload.",
              payload_retained),
)
