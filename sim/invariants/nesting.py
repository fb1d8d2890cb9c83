"""Nested requesters (DEL-4, DEL-6): who reads a completion in which form, and when a child that
spawned children may announce.

Restated from the spawn records (which session spawned which child session, and when), each
child's end record, what each requester received (``requester.accept``) and what the registry
recorded as resolved. A requester is nested when its session key is the session of a spawned child.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

# The reply instructions of reference §c5, restated by a phrase each form must carry.
NESTED_PHRASE = "short internal update"
TOP_LEVEL_PHRASE = "give the user"
_RESOLUTIONS = ("requester.accept", "delivery.delivered", "delivery.give_up",
                "delivery.announce_skip", "delivery.skip")


def nested_instruction(trace: Sequence[Record]) -> list[Violation]:
    """A nested requester reads the internal-update form; a top-level one the user-facing form."""
    child_sessions: set[str] = set()
    spawns: dict[str, Record] = {}
    violations: list[Violation] = []
    for r in trace:
        if r.kind == "spawn":
            child_sessions.add(r.data["child_session_key"])
            spawns[r.data["run_id"]] = r
        elif r.kind == "requester.accept" and r.data["run_id"] in spawns:
            spawn = spawns[r.data["run_id"]]
            nested = spawn.data["requester"] in child_sessions
            want, unwanted = ((NESTED_PHRASE, TOP_LEVEL_PHRASE) if nested
                              else (TOP_LEVEL_PHRASE, NESTED_PHRASE))
            # The instruction closes the block, after the child's (data) result.
            instruction = r.data["text"].rsplit("\nInstruction:\n", 1)[-1]
            if want not in instruction or unwanted in instruction:
                violations.append(Violation(
                    "nested-instruction", "DEL-4",
                    f"{r.data['run_id']} reached {'nested' if nested else 'top-level'} requester "
                    f"{spawn.data['requester']} without the "
                    f"{'internal-update' if nested else 'user-facing'} instruction",
                    (spawn.seq, r.seq)))
    return violations


def descendants_first(trace: Sequence[Record]) -> list[Violation]:
    """A child that spawned children announces only after every descendant its run spawned has
    settled (its own result reached its requester or was recorded as resolved)."""
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    settled: dict[str, Record] = {}
    by_requester: dict[str, list[str]] = {}
    violations: list[Violation] = []

    def descendants(run_id: str) -> list[str]:
        spawn, end = spawns[run_id], ends.get(run_id)
        until = end.t_ms if end is not None else trace[-1].t_ms + 1  # still running: all so far
        found: list[str] = []
        for child in by_requester.get(spawn.data["child_session_key"], []):
            # Spawned while the run ran: at or after its end, the run no longer owns it.
            if spawn.t_ms <= spawns[child].t_ms < until:
                found += [child, *descendants(child)]
        return found

    for r in trace:
        kind = r.kind
        if kind == "spawn":
            spawns[r.data["run_id"]] = r
            by_requester.setdefault(r.data["requester"], []).append(r.data["run_id"])
        elif kind == "child.end":
            ends[r.data["run_id"]] = r
            if not spawns[r.data["run_id"]].data["required"]:
                settled.setdefault(r.data["run_id"], r)
        elif kind in _RESOLUTIONS:
            run_id = r.data["run_id"]
            if kind == "requester.accept" and run_id in spawns:
                pending = [d for d in descendants(run_id) if d not in settled]
                if pending:
                    violations.append(Violation(
                        "descendants-first", "DEL-6",
                        f"{run_id} reached {r.actor} while its descendants "
                        f"{', '.join(pending)} were still pending",
                        (spawns[run_id].seq, r.seq)))
            settled.setdefault(run_id, r)
    return violations


INVARIANTS = (
    Invariant("nested-instruction", "DEL-4", "safety",
              "A nested requester reads a completion as an internal update; a top-level requester "
              "reads the instruction to tell the user.",
              nested_instruction),
    Invariant("descendants-first", "DEL-6", "safety",
              "A child that spawned children announces only after all its run's descendants "
              "settled.",
              descendants_first),
)
