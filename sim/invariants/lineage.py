"""Who spawned whom and who killed whom, as an outsider reads it (reference §c17, §c18): each run's
spawn, start and end by trace position (``spawn``, ``lane.started``, ``child.end``), the runs a
kill had to stop (the session's ``abort`` answer, its target and the target's unended
descendants, below an ended one too), and every run stopped with its completion suppressed, by
a kill or by its requester's reset or delete (and the runs spawned under it in that instant that
the stop ended too). Shared by the oracles like ``observations``; computed once per trace, read,
never changed.
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
# The error a killed run ends with (reference §c6, §c18).
KILLED = "subagent run terminated"


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
    end_records: dict[str, Record]  # each run's first ``child.end``

    def ended_by(self, run_id: str, seq: int) -> bool:
        end = self.ends.get(run_id)
        return end is not None and end < seq

    def unended_descendants(self, run_id: str, seq: int) -> list[str]:
        """The runs ``run_id`` and its descendants spawned before trace position ``seq`` that
        had not ended by then (a spawn into its session before it started belongs to the
        session's earlier run). The walk goes through a descendant that had ended to the runs
        it spawned while it ran: a stopped tree's unfinished runs stop below an ended one too
        (OpenClaw's ``killSubagentRunTree`` visits an ended run's children; seed 49388)."""
        found: list[str] = []
        frontier = [run_id]
        while frontier:
            parent = frontier.pop(0)
            start = self.starts.get(parent)
            if start is None or start > seq:
                continue
            until = min(seq, self.ends.get(parent, seq))  # an ended run spawns no more
            for child in self.by_session.get(self.spawns[parent].data["child_session_key"], ()):
                if start < self.spawns[child].seq < until:
                    frontier.append(child)
                    if not self.ended_by(child, seq):
                        found.append(child)
        return found

    def descendants(self, run_id: str) -> list[str]:
        """Every run ``run_id`` spawned while it ran, and every run each of those spawned while
        it ran, and so on, in walk order (a spawn into its session before it started belongs to
        the session's earlier run)."""
        found: list[str] = []
        frontier = [run_id]
        while frontier:
            parent = frontier.pop(0)
            start = self.starts.get(parent)
            if start is None:
                continue
            until = self.ends.get(parent, 2**62)
            for child in self.by_session.get(self.spawns[parent].data["child_session_key"], ()):
                if start < self.spawns[child].seq < until:
                    found.append(child)
                    frontier.append(child)
        return found

    def killed_in_its_instant(self, stopped: Sequence[str], kill: Record) -> list[str]:
        """The runs a run of ``stopped`` (or one of these, in turn) spawned in the kill's very
        instant but after it (after its answer or record), that ended killed (``subagent run
        terminated``) in that instant: the stop goes session by session, and a session it had
        not reached yet may spawn meanwhile; OpenClaw's kill re-reads the tree until no new
        descendant shows (``killSubagentRunTree``'s refresh loop), so such a run may be
        stopped with the rest (seed 50495). One that runs on is owed as usual."""
        found: list[str] = []
        frontier = list(stopped)
        while frontier:
            parent = frontier.pop(0)
            start = self.starts.get(parent)
            if start is None:
                continue
            for child in self.by_session.get(self.spawns[parent].data["child_session_key"], ()):
                spawn, end = self.spawns[child], self.end_records.get(child)
                if spawn.seq > max(start, kill.seq) and spawn.t_ms == kill.t_ms \
                        and end is not None and end.t_ms == kill.t_ms \
                        and end.data["error"] == KILLED and child not in found:
                    found.append(child)
                    frontier.append(child)
        return found


def _tree(trace: Sequence[Record]) -> _Tree:
    tree = _Tree({}, {}, {}, {}, {})
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
            tree.end_records[run_id] = r
    return tree


def unended_descendants(trace: Sequence[Record], run_id: str, seq: int) -> list[str]:
    """The runs ``run_id`` and its descendants had spawned before trace position ``seq`` that had
    not ended by then, as the spawn records show them."""
    return shared(trace, "tree", _tree).unended_descendants(run_id, seq)


def descendants(trace: Sequence[Record], run_id: str) -> list[str]:
    """Every run under ``run_id``, as the spawn records show them (see ``_Tree.descendants``)."""
    return shared(trace, "tree", _tree).descendants(run_id)


def killed_silently(trace: Sequence[Record]) -> dict[str, Record]:
    """run_id -> what killed it with its completion suppressed, so that nothing of it is owed:
    its requester's reset or delete (:func:`killed_by_reset`, reference §c17) or a kill of it
    (:func:`kills`, reference §c18), and in either case every descendant of it that had not
    ended then (a kill stops the run's tree), and every run spawned under it in that instant
    that the stop ended killed then (:meth:`_Tree.killed_in_its_instant`)."""
    return shared(trace, "killed-silently", _killed_silently)


def _killed_silently(trace: Sequence[Record]) -> dict[str, Record]:
    killed = dict(killed_by_reset(trace))
    found = kills(trace)
    if not killed and not found:
        return killed  # most runs kill nothing: no tree to read
    tree = shared(trace, "tree", _tree)
    if killed:
        for run_id, reset in list(killed.items()):
            below = tree.unended_descendants(run_id, reset.seq)
            for late in (*below, *tree.killed_in_its_instant((run_id, *below), reset)):
                killed.setdefault(late, reset)
    for kill in found:
        for run_id in (*kill.stopped, *tree.killed_in_its_instant(kill.stopped, kill.answer)):
            killed.setdefault(run_id, kill.answer)
    return killed
