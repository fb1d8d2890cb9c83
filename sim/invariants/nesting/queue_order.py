"""Queues keep their order: a child session's runs, and the runs waiting for the global
``maxConcurrent`` lane, start first come, first served (DEL-6, reference §c15; docs/nesting.md).

``session-runs-serial`` says two runs of one child session never overlap; that holds as well
for a session that starts its waiting runs newest first, or picks any of them. What is promised
is more: a run spawned into a busy session waits *behind the runs already waiting there*, so a
session's runs start in the order they were spawned (a re-run asked for after another starts
after it; a grandchild's parent is the run its requester asked for first). Likewise a lane
queues work: a run that waits for a slot starts before every run that began to wait after it.

Restated from the spawn requests as the harness sent them (``world.spawn``: requester and
session label, hence the child session key), the registration that answered each (``spawn``:
its run id), the waits the model announced (``lane.queued``, ``session.queued``) and the
children's own records: a run begins at ``child.start`` when it was never told to wait, else at
``lane.started`` or its first model activity, whichever comes first; a run that ended without
beginning (aborted while it waited) left its queue and is owed nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.nesting.sessions import _STREAMING, session_run_events
from sim.trace import Record


def session_runs_in_spawn_order(trace: Sequence[Record]) -> list[Violation]:
    """Every run of a child session begins only after each run spawned into that session before
    it has begun or ended (a run aborted while it waited left the line)."""
    line: dict[str, dict[str, Record]] = {}  # key -> its runs not yet begun, in spawn order
    violations: list[Violation] = []
    for event, run_id, key, r in session_run_events(trace):
        waiting = line.setdefault(key, {})
        if event == "spawned":
            waiting[run_id] = r
            continue
        if event == "began":
            for earlier, spawned in waiting.items():
                if earlier == run_id:
                    break
                violations.append(Violation(
                    "session-runs-in-spawn-order", "DEL-6",
                    f"{run_id} of child session {key} started at {r.t_ms} ms before {earlier}, "
                    f"spawned into that session earlier (at {spawned.t_ms} ms), which still "
                    "waits", (spawned.seq, r.seq)))
        waiting.pop(run_id, None)
    return violations


def lane_runs_in_queue_order(trace: Sequence[Record]) -> list[Violation]:
    """A run waiting for a slot of the maxConcurrent lane (``lane.queued``) starts before every
    run that began to wait after it, unless that one ended first (aborted while it waited).

    A freed slot is handed to the first waiter at once, but the run it wakes records its start
    when it next runs: two slots freed at one instant (an abort that cascades) wake two waiters
    whose starts may come in either order. So a later waiter starting first is a breach only
    when the earlier one did not start (or end) at that same virtual instant."""
    waiting: dict[str, Record] = {}  # run -> its lane.queued record, in queue order
    # earlier waiter -> (its lane.queued record, the later waiter's start that passed it)
    passed: dict[str, tuple[Record, Record]] = {}
    violations: list[Violation] = []

    def breach(earlier: str, queued: Record, start: Record) -> None:
        violations.append(Violation(
            "lane-runs-in-queue-order", "DEL-6",
            f"{start.data['run_id']} took a slot of the maxConcurrent lane at {start.t_ms} ms "
            f"before {earlier}, which began to wait earlier (at {queued.t_ms} ms) and still "
            "waited", (queued.seq, start.seq)))

    for r in of_kinds(trace, ("lane.queued", "lane.started", *_STREAMING, "child.end")):
        kind = r.kind
        if kind == "lane.queued":
            waiting[r.data["run_id"]] = r
        elif kind == "lane.started" or kind in _STREAMING or kind == "child.end":
            run_id = r.data["run_id"]
            if run_id in passed:
                queued, start = passed.pop(run_id)
                if r.t_ms != start.t_ms:
                    breach(run_id, queued, start)
            if run_id not in waiting:
                continue
            if kind != "child.end":
                for earlier, queued in waiting.items():
                    if earlier == run_id:
                        break
                    passed.setdefault(earlier, (queued, r))
            del waiting[run_id]
    for earlier, (queued, start) in passed.items():
        breach(earlier, queued, start)
    return violations


INVARIANTS = (
    Invariant("session-runs-in-spawn-order", "DEL-6", "safety",
              "A child session's runs start in the order they were spawned into it: a run never "
              "starts while a run spawned into the same session before it still waits.",
              session_runs_in_spawn_order),
    Invariant("lane-runs-in-queue-order", "DEL-6", "safety",
              "Runs waiting for the maxConcurrent lane start first come, first served: a run "
              "never takes a slot while one that began to wait before it still waits.",
              lane_runs_in_queue_order),
)
