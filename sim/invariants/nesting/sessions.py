"""A child session runs one run at a time (OpenClaw's session lane; docs/nesting.md): a run
spawned into a session whose earlier run has not ended waits for it, so two runs of one child
session never overlap, whoever spawned them (a reused key, FMT-6; a re-run). Without that, a
grandchild spawned into the session belongs to either run and a run's findings and its
descendants-first gate (DEL-6) are no longer its own.

Restated from the spawn requests as the harness sent them (``world.spawn``: the requester and
the session label, hence the child session key the spawn asks for), the registration that
answered each (``spawn``: its run id) and the children's own records: a run runs from its
start (``child.start``, or ``lane.started`` for a run that was told to wait: ``lane.queued``,
``session.queued``), or from its first model activity if that came first, to its end record.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds, shared
from sim.invariants.nesting.limits import _ACTIVITY, child_key
from sim.trace import Record

# A run's own streaming; a turn's end is left out: a run aborted while it waited closes its
# (empty) turn without ever running.
_STREAMING = tuple(kind for kind in _ACTIVITY if kind != "child.turn_end")


# What :func:`session_run_events` reads.
_EVENT_KINDS = ("world.spawn", "spawn", "spawn.refused", "lane.queued", "session.queued",
                "child.start", "lane.started", *_STREAMING, "child.end")


def session_run_events(trace: Sequence[Record]) -> tuple[tuple[str, str, str, Record], ...]:
    """``(event, run_id, child session key, record)`` for each run the harness asked for, in
    trace order: ``spawned`` at its registration, ``began`` when it first runs (its
    ``child.start`` when it was never told to wait, else ``lane.started`` or its first model
    activity, whichever comes first) and ``ended`` at its end. A run begins at most once, and
    never after its end (aborted while it waited). Read by the session oracles here and in
    ``queue_order.py``: computed once per trace (``index.shared``; read, never change)."""
    return shared(trace, "session-run-events", lambda t: tuple(_session_run_events(t)))


def _session_run_events(trace: Sequence[Record]) -> Iterator[tuple[str, str, str, Record]]:
    """The events :func:`session_run_events` shares."""
    asked: dict[str, str] = {}  # child id -> the child session key its open request asks for
    key_of_run: dict[str, str] = {}
    told_to_wait: set[str] = set()
    done: set[str] = set()  # began or ended: no further begin
    for r in of_kinds(trace, _EVENT_KINDS):
        kind, data = r.kind, r.data
        if kind == "world.spawn":
            asked[data["child"]] = child_key(data["requester"], data["session"])
        elif kind == "spawn":
            key = asked.pop(data["child"], None)
            if key is not None:
                key_of_run[data["run_id"]] = key
                yield "spawned", data["run_id"], key, r
        elif kind == "spawn.refused":
            asked.pop(data["child"], None)
        elif kind in ("lane.queued", "session.queued"):
            told_to_wait.add(data["run_id"])
        elif (kind == "child.start" and data["run_id"] not in told_to_wait) \
                or kind == "lane.started" or kind in _STREAMING:
            run_id = data["run_id"]
            if run_id in key_of_run and run_id not in done:
                done.add(run_id)
                yield "began", run_id, key_of_run[run_id], r
        elif kind == "child.end":
            run_id = data["run_id"]
            done.add(run_id)
            if run_id in key_of_run:
                yield "ended", run_id, key_of_run[run_id], r


def session_runs_serial(trace: Sequence[Record]) -> list[Violation]:
    running: dict[str, dict[str, Record]] = {}  # child session key -> its runs running now
    violations: list[Violation] = []
    for event, run_id, key, r in session_run_events(trace):
        others = running.setdefault(key, {})
        if event == "began":
            for other, since in others.items():
                violations.append(Violation(
                    "session-runs-serial", "DEL-6",
                    f"{run_id} of child session {key} started at {r.t_ms} ms while {other} of "
                    f"the same session still ran (since {since.t_ms} ms)", (since.seq, r.seq)))
            others[run_id] = r
        elif event == "ended":
            others.pop(run_id, None)
    return violations


INVARIANTS = (
    Invariant("session-runs-serial", "DEL-6", "safety",
              "Two runs of one child session never overlap: a run spawned into a session "
              "whose earlier run has not ended starts only after that run's end.",
              session_runs_serial),
)
