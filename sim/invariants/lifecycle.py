"""A run's end of life: the ANNOUNCE_SKIP reply (reference §c1) and cleanup once per run (DEL-16).

Restated from what the child wrote (``child.end``), what each requester received
(``requester.accept``) and what the registry recorded (``delivery.*`` and ``run.cleanup``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

SKIP = "ANNOUNCE_SKIP"
# What the registry records when a run's obligations resolve.
_RESOLUTIONS = ("delivery.delivered", "delivery.give_up", "delivery.announce_skip",
                "private.closed",
                "delivery.skip")


def _skips(result: str | None) -> bool:
    return result is not None and result.strip() == SKIP


def announce_skip(trace: Sequence[Record]) -> list[Violation]:
    """A reply that is exactly ANNOUNCE_SKIP announces nothing, yet its obligation resolves as
    delivered; any other reply is never silently skipped."""
    ends: dict[str, Record] = {}
    violations: list[Violation] = []
    for r in trace:
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
    """Cleanup runs once per run, only after the run ended and its obligations resolved, and
    every resolved run is cleaned up by the time the world ends."""
    ends: dict[str, Record] = {}
    resolved: dict[str, Record] = {}
    cleaned: dict[str, Record] = {}
    optional: set[str] = set()
    end: Record | None = None
    violations: list[Violation] = []
    for r in trace:
        kind = r.kind
        if kind == "spawn" and not r.data["required"]:
            optional.add(r.data["run_id"])
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
        elif kind in _RESOLUTIONS:
            resolved.setdefault(r.data["run_id"], r)
        elif kind == "run.cleanup":
            run_id = r.data["run_id"]
            first = cleaned.get(run_id)
            if first is not None:
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{run_id} was cleaned up twice: at {first.t_ms} ms and at {r.t_ms} ms",
                    (first.seq, r.seq)))
                continue
            cleaned[run_id] = r
            # A run with nothing to deliver resolves when it ends.
            if run_id not in ends or (run_id not in optional and run_id not in resolved):
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{run_id} was cleaned up before its obligations resolved", (r.seq,)))
        elif kind == "world.end":
            end = r
    if end is not None and end.data["reason"] == "quiescent":
        for run_id, resolution in resolved.items():
            if run_id not in cleaned:
                violations.append(Violation(
                    "cleanup-once", "DEL-16",
                    f"{run_id} resolved at {resolution.t_ms} ms but was never cleaned up",
                    (resolution.seq, end.seq)))
    return violations


INVARIANTS = (
    Invariant("announce-skip", "DEL-2", "safety",
              "A reply that is exactly ANNOUNCE_SKIP announces nothing and resolves as "
              "delivered; no other reply is skipped.",
              announce_skip),
    Invariant("cleanup-once", "DEL-16", "safety",
              "Each run is cleaned up once, after its obligations resolved; a resolved run is "
              "cleaned up before the world goes quiet.",
              cleanup_once),
)
