"""Reference §c17 x DEL-6: a run its requester's reset or delete kills takes its own children
with it.

``reset-kills-children`` judges the reset session's own children (each ends killed) and
``abort-cascades`` judges an abort request; neither says what becomes of the children of a run
a reset killed. OpenClaw's reset stops the session's runs (``stopSessionResetSubagents``), and a
stopped run's unfinished descendants stop with it, as an aborted run's do (docs/nesting.md): so
every run the killed run spawned (and theirs) that had not ended when the reset came ends killed
(``subagent run terminated``) in that same instant, unless it ended on its own in that instant
(the cascade may reach its session after that end: which came first is the scheduler's).

Read from what was asked and what each session recorded: the reset or delete as the session
recorded it (``requester.lifecycle``; for a nested session the world deleted without its saying
so, the world's ``world.delete-session``: ``observations.killed_by_reset``), each spawn (which
session spawned which run), when a queued run started (``lane.started``) and each child's own
end (``child.end``). Nothing of the registry's.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import killed_by_reset
from sim.trace import Record

KILLED = "subagent run terminated"


def reset_cascades(trace: Sequence[Record]) -> list[Violation]:
    killed = killed_by_reset(trace)
    if not killed:
        return []
    at_kill: dict[int, list[str]] = {}  # the kill record's seq -> the runs it killed
    for run_id, kill in killed.items():
        at_kill.setdefault(kill.seq, []).append(run_id)
    spawns: dict[str, Record] = {}
    by_session: dict[str, list[str]] = {}  # spawning session key -> the runs it spawned
    starts: dict[str, int | None] = {}  # run -> the seq it started at (None while it waits)
    ended: dict[str, int] = {}  # run -> the seq of its end
    owed: dict[str, tuple[str, Record]] = {}  # run -> (the killed ancestor, the kill)
    violations: list[Violation] = []

    def children(run_id: str, until: int) -> list[str]:
        spawn, start = spawns.get(run_id), starts.get(run_id)
        if spawn is None or start is None:
            return []
        until = min(until, ended.get(run_id, until))  # an ended run spawns no more
        return [c for c in by_session.get(spawn.data["child_session_key"], ())
                if start < spawns[c].seq < until]

    kinds = ("lane.queued", "session.queued", "lane.started", "spawn", "child.end",
             "requester.lifecycle", "world.delete-session")
    for r in of_kinds(trace, kinds):
        kind = r.kind
        if kind not in kinds:
            continue
        if kind in ("lane.queued", "session.queued"):
            starts[r.data["run_id"]] = None
        elif kind == "lane.started":
            starts[r.data["run_id"]] = r.seq
        elif kind == "spawn":
            spawns[r.data["run_id"]] = r
            starts[r.data["run_id"]] = r.seq
            by_session.setdefault(r.data["requester"], []).append(r.data["run_id"])
        elif kind == "child.end":
            run_id = r.data["run_id"]
            ended.setdefault(run_id, r.seq)
            due = owed.pop(run_id, None)
            if due is not None and r.t_ms == due[1].t_ms and r.data["error"] != KILLED:
                # It ended on its own (done, timed out) in the reset's very instant: the
                # cascade goes session by session, and its end may come before the cascade
                # reaches its spawner's session; a run that has ended is not killed (reference
                # §c18: "answers killed: false and changes nothing"). Which came first in one
                # instant is the scheduler's, as for a kill (kill-suppresses, seed 23451;
                # seeds 62482, 67601).
                continue
            if due is not None and (r.t_ms != due[1].t_ms or r.data["error"] != KILLED):
                ancestor, kill = due
                violations.append(Violation(
                    "reset-cascades", "DEL-6",
                    f"{run_id} was still running when its ancestor {ancestor} was killed by the "
                    f"reset or delete of {_session(kill)} at {kill.t_ms} ms, yet it ended "
                    f"{r.data['status']} at {r.t_ms} ms "
                    f"({r.data['error'] or 'no error'}) instead of killed then",
                    (kill.seq, r.seq)))
        if r.seq in at_kill:
            for victim in at_kill[r.seq]:
                frontier = children(victim, r.seq)
                seen: set[str] = set()
                while frontier:
                    run_id = frontier.pop()
                    if run_id in seen:
                        continue
                    seen.add(run_id)
                    if run_id not in ended and run_id not in owed:
                        owed[run_id] = (victim, r)
                    # Below an ended run too: the stop visits its children (seed 49388).
                    frontier += children(run_id, r.seq)
    for run_id, (ancestor, kill) in owed.items():
        violations.append(Violation(
            "reset-cascades", "DEL-6",
            f"{run_id} was still running when its ancestor {ancestor} was killed by the reset "
            f"or delete of {_session(kill)} at {kill.t_ms} ms, and it never ended",
            (kill.seq,)))
    return violations


def _session(kill: Record) -> str:
    if kill.kind == "world.delete-session":
        return f"requester:{kill.data['session']}"
    return kill.actor


INVARIANTS = (
    Invariant("reset-cascades", "DEL-6", "safety",
              "A run killed by its requester's reset or delete takes its unfinished "
              "descendants with it: each ends killed in that same instant (reference §c17).",
              reset_cascades),
)
