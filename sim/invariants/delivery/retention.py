"""DEL-16 oracles: what the registry keeps in memory, and what its store keeps, per run.

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
from sim.invariants.observations import asked_runs
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


INVARIANTS = (
    Invariant("memory-preview", "DEL-16", "safety",
              "A resolved run is held in memory as a task preview and lifecycle metadata only.",
              memory_preview),
    Invariant("payload-retained", "DEL-16", "safety",
              "The store keeps each run's full task and result text; pending, suspended and "
              "abandoned work never loses its payload.",
              payload_retained),
)
