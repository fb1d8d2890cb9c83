"""DEL invariants over the trace: what reached which requester, and what the registry recorded.

Trace kinds read here: ``spawn`` (a requester registered a child run, with ``required``),
``child.end``, ``requester.accept`` (a completion entered the requester's transcript),
``delivery.delivered`` / ``delivery.give_up`` / ``delivery.skip`` (what the registry recorded),
``world.heal`` and ``world.end``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

# Once faults heal, a required obligation must be resolved within this much virtual time after the
# later of the child's end and the heal: the 30-minute completion expiry plus one capped backoff
# (300 s + 20 % jitter) plus one unanswered send (120 s), rounded up.
LIVENESS_BOUND_MS = 40 * 60_000


def at_most_once(trace: Sequence[Record]) -> list[Violation]:
    """One violation per extra delivery, each saying how many times the run had then arrived."""
    seen: dict[tuple[str, str], list[Record]] = {}
    violations = []
    for r in trace:
        if r.kind != "requester.accept":
            continue
        key = (r.actor, r.data["run_id"])
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
    optional: dict[str, Record] = {}
    violations = []
    for r in trace:
        if r.kind == "spawn" and not r.data["required"]:
            optional[r.data["run_id"]] = r
        elif r.kind == "requester.accept" and r.data["run_id"] in optional:
            spawn = optional[r.data["run_id"]]
            violations.append(Violation(
                "not-required-skipped", "DEL-1",
                f"{r.data['run_id']} was spawned with expectsCompletionMessage false, "
                f"yet its completion reached {r.actor}",
                (spawn.seq, r.seq)))
    return violations


def delivered_means_received(trace: Sequence[Record]) -> list[Violation]:
    """The registry may only record "delivered" for a run whose requester has its completion."""
    received: set[str] = set()
    violations = []
    for r in trace:
        if r.kind == "requester.accept":
            received.add(r.data["run_id"])
        elif r.kind == "delivery.delivered" and r.data["run_id"] not in received:
            violations.append(Violation(
                "delivered-means-received", "DEL-3",
                f"the registry recorded {r.data['run_id']} as delivered, "
                "but no requester ever received it",
                (r.seq,)))
    return violations


def eventually_resolved(trace: Sequence[Record]) -> list[Violation]:
    """Liveness: every required child run ends, and its delivery is resolved in bounded time."""
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    resolved: dict[str, Record] = {}
    heal_ms = 0
    end: Record | None = None
    for r in trace:
        kind = r.kind
        if kind == "spawn":
            spawns[r.data["run_id"]] = r
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
        elif kind in ("requester.accept", "delivery.delivered", "delivery.give_up",
                      "delivery.skip"):
            # For liveness, a resolution is either the registry's terminal record or the
            # requester having the result (the safety invariants judge whether they agree).
            resolved.setdefault(r.data["run_id"], r)
        elif kind == "world.heal":
            heal_ms = r.t_ms
        elif kind == "world.end":
            end = r
    if end is None:
        return [Violation("eventually-resolved", "liveness", "the run never ended", ())]
    violations = []
    for run_id, spawn in spawns.items():
        child_end = ends.get(run_id)
        if child_end is None:
            violations.append(Violation(
                "eventually-resolved", "liveness",
                f"stuck: {run_id} (child {spawn.data['child']}) never ended "
                f"(world ended at {end.t_ms} ms: {end.data['reason']})",
                (spawn.seq, end.seq)))
            continue
        if not spawn.data["required"]:
            continue
        resolution = resolved.get(run_id)
        bound = max(child_end.t_ms, heal_ms) + LIVENESS_BOUND_MS
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
)
