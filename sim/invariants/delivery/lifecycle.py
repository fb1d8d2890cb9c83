"""A run's end of life: the ANNOUNCE_SKIP reply (reference §c1), cleanup once per run (DEL-16),
and a requester's reset or delete killing its unended children (reference §c17).

Restated from what the child wrote (``child.end``), what each requester received
(``requester.accept``), what the gateway refused, and the registry's rows as an operator reads
them when the world stops (``world.rows``: status, cleaned up); the registry's own
``delivery.announce_skip`` and ``run.cleanup`` records are the claims under test, never premises.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import final_rows, is_wake, key_runs, killed_by_reset
from sim.invariants.settled import EarliestSettle
from sim.invariants.yields.seen import yielded_members
from sim.trace import Record

SKIP = "ANNOUNCE_SKIP"
# The error a killed run ends with, as its child's end shows it (reference §c6, §c17).
KILLED = "subagent run terminated"
# A row in one of these states has nothing more to deliver (``pending`` has).
_RESOLVED = ("delivered", "failed", "suspended", "discarded", "not_required")


def _skips(result: str | None) -> bool:
    return result is not None and result.strip() == SKIP


def announce_skip(trace: Sequence[Record]) -> list[Violation]:
    """A reply that is exactly ANNOUNCE_SKIP announces nothing, yet its obligation resolves as
    delivered; any other reply is never silently skipped."""
    ends: dict[str, Record] = {}
    violations: list[Violation] = []
    for r in of_kinds(trace, ("child.end", "requester.accept", "delivery.announce_skip")):
        if r.kind == "child.end":
            ends[r.data["run_id"]] = r
        elif r.kind == "requester.accept":
            end = ends.get(r.data["run_id"])
            if end is not None and _skips(end.data["result"]):
                violations.append(Violation(
                    "announce-skip", "DEL-2",
                    f"{r.data['run_id']} replied exactly ANNOUNCE_SKIP, yet {r.actor} received "
                    "an announcement of it", (end.seq, r.seq)))
        elif r.kind == "delivery.announce_skip":
            end = ends.get(r.data["run_id"])
            if end is None or not _skips(end.data["result"]):
                violations.append(Violation(
                    "announce-skip", "DEL-2",
                    f"{r.data['run_id']} was skipped without announcing although its reply is "
                    "not ANNOUNCE_SKIP", (r.seq,) if end is None else (end.seq, r.seq)))
    return violations


def cleanup_once(trace: Sequence[Record]) -> list[Violation]:
    """Cleanup runs once per run, only after the run ended and its obligations may have
    resolved as an outsider can tell (:class:`~sim.invariants.settled.EarliestSettle`: taken,
    owed nothing, refused for good, closed by a reset, handed to its yield batch, or expired),
    and every row the registry shows resolved when a quiet world stops is cleaned up."""
    settle = EarliestSettle(trace, members=yielded_members(trace))
    cleaned: dict[str, Record] = {}
    end: Record | None = None
    rows: Record | None = None
    violations: list[Violation] = []
    for r in of_kinds(trace, (*EarliestSettle.KINDS, "run.cleanup", "world.end", "world.rows")):
        kind = r.kind
        settle.see(r)
        if kind == "run.cleanup":
            run_id = r.data["run_id"]
            first = cleaned.get(run_id)
            if first is not None:
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{run_id} was cleaned up twice: at {first.t_ms} ms and at {r.t_ms} ms",
                    (first.seq, r.seq)))
                continue
            cleaned[run_id] = r
            if not settle.settled(run_id, r.t_ms):
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{run_id} was cleaned up before its obligations resolved", (r.seq,)))
        elif kind == "world.end":
            end = r
        elif kind == "world.rows":
            rows = r
    if end is not None and rows is not None and end.data["reason"] == "quiescent":
        for row in rows.data["rows"]:
            if row["delivery_status"] in _RESOLVED and not row["cleaned_up"]:
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{row['run_id']}'s row shows it {row['delivery_status']} but never cleaned "
                    "up when the world went quiet", (rows.seq, end.seq)))
    return violations


def reset_kills_children(trace: Sequence[Record]) -> list[Violation]:
    """After a reset (/new) or delete of its requester session (the session's own
    ``requester.lifecycle`` record; for a nested session the world deleted, the world's
    ``world.delete-session`` when the session never recorded it), a child run that had not
    ended (no ``child.end`` before it) ends killed (``subagent run terminated``), nothing of it
    (its own send, or a batch wake naming it) is handed to the gateway or taken by any
    transcript after the reset, and the registry's row, if kept, records its delivery
    ``not_required`` (reference §c17). A run that had ended is not this oracle's: it keeps its
    delivery, and the delivery oracles owe it."""
    killed = killed_by_reset(trace)
    if not killed:
        return []
    ends: dict[str, Record] = {}
    violations: list[Violation] = []
    for r in of_kinds(trace, ("child.end", "gateway.send", "requester.accept")):
        kind = r.kind
        if kind == "child.end" and r.data["run_id"] in killed:
            run_id = r.data["run_id"]
            ends.setdefault(run_id, r)
            if r.data["status"] != "error" or r.data["error"] != KILLED:
                reset = killed[run_id]
                violations.append(Violation(
                    "reset-kills-children", "DEL-1",
                    f"{run_id} had not ended when {_session(reset)} was reset or deleted at "
                    f"{reset.t_ms} ms, yet it ended {r.data['status']} "
                    f"({r.data['error'] or r.data['result']!r}) instead of killed",
                    (reset.seq, r.seq)))
        elif kind in ("gateway.send", "requester.accept"):
            key = r.data.get("key", "")
            named = key_runs(key) if is_wake(key) else (r.data.get("run_id"),)
            for run_id in named:
                found = killed.get(run_id or "")
                if found is not None and found.seq < r.seq:
                    what = "handed to the gateway" if kind == "gateway.send" else \
                        f"taken by {r.actor}"
                    violations.append(Violation(
                        "reset-kills-children", "DEL-1",
                        f"{run_id} had not ended when {_session(found)} was reset or deleted at "
                        f"{found.t_ms} ms, yet its completion was {what} at {r.t_ms} ms",
                        (found.seq, r.seq)))
    rows = final_rows(trace)
    for run_id, reset in killed.items():
        if run_id not in ends:
            violations.append(Violation(
                "reset-kills-children", "DEL-1",
                f"{run_id} had not ended when {_session(reset)} was reset or deleted at "
                f"{reset.t_ms} ms, and it never ended (it was not killed)", (reset.seq,)))
        status = rows.get(run_id)
        if status is not None and status != "not_required":
            violations.append(Violation(
                "reset-kills-children", "DEL-1",
                f"{run_id} had not ended when {_session(reset)} was reset or deleted, yet the "
                f"registry's row records its delivery {status}, not not_required",
                (reset.seq,)))
    return violations


def _session(reset: Record) -> str:
    """The session reset or deleted: its actor, or the one the world deleted (it never said)."""
    if reset.kind == "world.delete-session":
        return f"requester:{reset.data['session']} (deleted by the world, never recorded by it)"
    return reset.actor


INVARIANTS = (
    Invariant("announce-skip", "DEL-2", "safety",
              "A reply that is exactly ANNOUNCE_SKIP announces nothing and resolves as "
              "delivered; no other reply is skipped.",
              announce_skip),
    Invariant("cleanup-once", "DEL-16", "safety",
              "Each run is cleaned up once, after its obligations resolved; a resolved run is "
              "cleaned up before the world goes quiet.",
              cleanup_once),
    Invariant("reset-kills-children", "DEL-1", "safety",
              "A requester reset or delete kills its child runs that had not ended: they end "
              "killed, nothing of them is handed over afterwards, and the registry records "
              "them not_required (reference §c17).", reset_kills_children),
)
