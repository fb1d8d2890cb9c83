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

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.nesting.limits import _ACTIVITY, _child_key
from sim.trace import Record

# A run's own streaming; a turn's end is left out: a run aborted while it waited closes its
# (empty) turn without ever running.
_STREAMING = tuple(kind for kind in _ACTIVITY if kind != "child.turn_end")


def session_runs_serial(trace: Sequence[Record]) -> list[Violation]:
    asked: dict[str, str] = {}  # child id -> the child session key its open request asks for
    key_of_run: dict[str, str] = {}
    told_to_wait: set[str] = set()
    began: set[str] = set()
    running: dict[str, dict[str, Record]] = {}  # child session key -> its runs running now
    violations: list[Violation] = []

    def begin(run_id: str, r: Record) -> None:
        key = key_of_run.get(run_id)
        if key is None or run_id in began:
            return
        began.add(run_id)
        others = running.setdefault(key, {})
        for other, since in others.items():
            violations.append(Violation(
                "session-runs-serial", "DEL-6",
                f"{run_id} of child session {key} started at {r.t_ms} ms while {other} of the "
                f"same session still ran (since {since.t_ms} ms)", (since.seq, r.seq)))
        others[run_id] = r

    for r in trace:
        kind, data = r.kind, r.data
        if kind == "world.spawn":
            asked[data["child"]] = _child_key(data["requester"], data["session"])
        elif kind == "spawn":
            key = asked.pop(data["child"], None)
            if key is not None:
                key_of_run[data["run_id"]] = key
        elif kind == "spawn.refused":
            asked.pop(data["child"], None)
        elif kind in ("lane.queued", "session.queued"):
            told_to_wait.add(data["run_id"])
        elif kind == "child.start":
            if data["run_id"] not in told_to_wait:
                begin(data["run_id"], r)
        elif kind == "lane.started" or kind in _STREAMING:
            begin(data["run_id"], r)
        elif kind == "child.end":
            run_id = data["run_id"]
            began.add(run_id)  # ended: it never begins again (an abort while it waited)
            key = key_of_run.get(run_id)
            if key is not None:
                running.get(key, {}).pop(run_id, None)
    return violations


INVARIANTS = (
    Invariant("session-runs-serial", "DEL-6", "safety",
              "Two runs of one child session never overlap: a run spawned into a session "
              "whose earlier run has not ended starts only after that run's end.",
              session_runs_serial),
)
