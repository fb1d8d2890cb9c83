"""Who spawned whom and who killed whom, as an outsider reads it (reference §c17, §c18): each run's
spawn, start and end by trace position (``spawn``, ``lane.started``, ``child.end``), the runs a
kill had to stop (the session's ``abort`` answer, its target and the target's unended
descendants), and every run stopped with its completion suppressed, by a kill or by its
requester's reset or delete. Shared by the oracles like ``observations``; computed once per
trace, read, never changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sim.invariants.index import of_kinds, shared
from sim.invariants.observations import killed_by_reset
from sim.trace import Record

# A session's answers that stop a child's running run with its completion suppressed: a kill,
# and a steer (which then starts a replacement run, reference §c18).
KILL_ANSWERS = ("abort", "steer")


@attrs.frozen
class Kill:
    """A session's answer to a kill (``abort``) or a steer (``steer``) of its child, read
    against what an outsider saw before it: the child's latest run in that session (None: never
    spawned there), whether that run had ended (a ``child.end`` before the answer), and the runs
    it must stop (the target, if it had not ended, and every descendant it spawned that had not
    ended either)."""

    answer: Record
    target: str | None
    ended: bool
    stopped: tuple[str, ...]


def kills(trace: Sequence[Record]) -> list[Kill]:
    """Every kill a session answered, in trace order (reference §c18). Computed once per
    trace (read, never change)."""
    return shared(trace, "kills", _kills)


def _kills(trace: Sequence[Record]) -> list[Kill]:
    if not any(r.kind in KILL_ANSWERS for r in of_kinds(trace, KILL_ANSWERS)):
        return []  # most runs kill nothing: no tree to read
    tree = shared(trace, "tree", _tree)
    latest: dict[tuple[str, str], str] = {}  # (requester session, child id) -> latest run
    found: list[Kill] = []
    for r in of_kinds(trace, ("spawn", *KILL_ANSWERS)):
        if r.kind == "spawn":
            latest[(r.data["requester"], r.data["child"])] = r.data["run_id"]
            continue
        if r.kind not in KILL_ANSWERS:
            continue
        target = latest.get((r.actor.removeprefix("requester:"), r.data["child"]))
        if target is None or tree.ended_by(target, r.seq):
            found.append(Kill(r, target, target is not None, ()))
        else:
            found.append(Kill(r, target, False, (target, *tree.unended_descendants(target,
                                                                                   r.seq))))
    return found


@attrs.frozen
class _Tree:
    """Who spawned whom, as the spawn records show it: each run's spawn, where it started
    (its spawn, or ``lane.started`` after a wait; absent if it never started) and where it
    ended, by trace position; and the runs spawned from each child session."""

    spawns: dict[str, Record]
    starts: dict[str, int]
    ends: dict[str, int]
    by_session: dict[str, list[str]]

    def ended_by(self, run_id: str, seq: int) -> bool:
        end = self.ends.get(run_id)
        return end is not None and end < seq

    def unended_descendants(self, run_id: str, seq: int) -> list[str]:
        """The runs ``run_id`` and its descendants spawned before trace position ``seq`` that
        had not ended by then (a spawn into its session before it started belongs to the
        session's earlier run)."""
        found: list[str] = []
        frontier = [run_id]
        while frontier:
            parent = frontier.pop(0)
            start = self.starts.get(parent)
            if start is None or start > seq:
                continue
            for child in self.by_session.get(self.spawns[parent].data["child_session_key"], ()):
                if start < self.spawns[child].seq < seq and not self.ended_by(child, seq):
                    found.append(child)
                    frontier.append(child)
        return found


def _tree(trace: Sequence[Record]) -> _Tree:
    tree = _Tree({}, {}, {}, {})
    for r in of_kinds(trace, ("lane.queued", "session.queued", "lane.started", "spawn",
                              "child.end")):
        kind = r.kind
        if kind not in ("lane.queued", "session.queued", "lane.started", "spawn", "child.end"):
            continue
        run_id = r.data["run_id"]
        if kind == "spawn":
            tree.spawns[run_id] = r
            tree.starts[run_id] = r.seq
            tree.by_session.setdefault(r.data["requester"], []).append(run_id)
        elif kind in ("lane.queued", "session.queued"):
            tree.starts.pop(run_id, None)
        elif kind == "lane.started":
            tree.starts[run_id] = r.seq
        elif run_id not in tree.ends:  # child.end
            tree.ends[run_id] = r.seq
    return tree


def unended_descendants(trace: Sequence[Record], run_id: str, seq: int) -> list[str]:
    """The runs ``run_id`` and its descendants had spawned before trace position ``seq`` that had
    not ended by then, as the spawn records show them."""
    return shared(trace, "tree", _tree).unended_descendants(run_id, seq)


def killed_silently(trace: Sequence[Record]) -> dict[str, Record]:
    """run_id -> what killed it with its completion suppressed, so that nothing of it is owed:
    its requester's reset or delete (:func:`killed_by_reset`, reference §c17) or a kill of it
    (:func:`kills`, reference §c18), and in either case every descendant of it that had not
    ended then (a kill stops the run's tree)."""
    return shared(trace, "killed-silently", _killed_silently)


def _killed_silently(trace: Sequence[Record]) -> dict[str, Record]:
    killed = dict(killed_by_reset(trace))
    if killed:
        tree = shared(trace, "tree", _tree)
        for run_id, reset in list(killed.items()):
            for below in tree.unended_descendants(run_id, reset.seq):
                killed.setdefault(below, reset)
    for kill in kills(trace):
        for run_id in kill.stopped:
            killed.setdefault(run_id, kill.answer)
    return killed
