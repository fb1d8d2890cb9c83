"""A delivery-process crash and its restart: the process dies (its timers and the announce call
in flight die with it; what it saved stays in SQLite), and a new process on the same state folder
restores the rows and resumes them, as OpenClaw's gateway does on start
(``initSubagentRegistry`` then ``activateSubagentRegistry``). An attempt the crash cut short
never answers, and each answer the trace states belongs to the process that made the attempt
(the Node end answers a call of a process that the model's run shows dying before its next
attempt with no answer at all). A child's end while the process was down reaches the new one
when it starts (the model's restarted delivery actor reads it then), so its end and the row
check after it move to the restart. So does an end the process died on before it recorded
anything of the run's delivery (a crash at the instant the end came): OpenClaw's registry
starts the announce on the end at once, so the end is given to the process that acted on it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sim.conform.registry.model import Replay
from sim.conform.registry.sends import Attempts
from sim.trace import Record


class Process:
    """The delivery process's crashes and restarts, read record by record in trace order."""

    def __init__(self, replay: Replay, runs: Iterable[Attempts],
                 records: Sequence[Record]) -> None:
        self.replay = replay
        self.runs = list(runs)
        self.starts = 0  # the first start is the world's own, not a restart
        self.down = False
        self.held: list[dict[str, Any]] = []  # steps of children's ends while it was down
        self.unhandled = unhandled_ends(records, {attempts.run_id for attempts in self.runs})
        self.taken: list[dict[str, Any]] = []  # steps of such an end, until the crash

    def read(self, record: Record) -> bool:
        """True when ``record`` was the process's crash or (re)start."""
        if record.kind == "crash":
            for attempts in self.runs:
                attempts.crashed()
            if self.taken:
                self.held.extend(self.taken)
                self.replay.steps = [step for step in self.replay.steps
                                     if all(step is not taken for taken in self.taken)]
                self.taken = []
            self.replay.steps.append({"t": record.t_ms, "kind": "crash"})
            self.down = True
            return True
        if record.kind != "world.restart" or record.data.get("process") != "delivery":
            return False
        self.starts += 1
        if self.starts > 1:
            self.replay.steps.append({"t": record.t_ms, "kind": "restart"})
            for attempts in self.runs:
                attempts.incarnation = self.starts
            for step in self.held:
                self.replay.steps.append({**step, "t": record.t_ms})
            self.held = []
        self.down = False
        return True

    def ended(self, run_id: str, mark: int) -> None:
        """A child's end was translated into ``replay.steps[mark:]``: held until the crash
        that cut its handling short (an end while the process is down waits in :meth:`finish`)."""
        if not self.down and run_id in self.unhandled:
            self.taken.extend(self.replay.steps[mark:])

    def finish(self) -> None:
        """Ends that reach the registry while the process is down (at their own time, or late
        through a delayed message) reach the next process when it starts: each end, with the
        check after it, moves to just after that restart."""
        steps = sorted(self.replay.steps, key=lambda step: step["t"])
        out: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        down = False
        for step in steps:
            if step["kind"] == "crash":
                down = True
            elif step["kind"] == "restart":
                down = False
                out.append(step)
                out.extend({**late, "t": step["t"]} for late in waiting)
                waiting = []
                continue
            elif down and (step["kind"] == "end" or self._after_end(step, waiting)):
                waiting.append(step)
                continue
            out.append(step)
        self.replay.steps = out + waiting  # a world that ends with the process down

    def _after_end(self, step: dict[str, Any], waiting: list[dict[str, Any]]) -> bool:
        """``step`` is the check after an end that waits (the same run, the same time)."""
        return step["kind"] == "check" and any(
            late["kind"] == "end" and late["run"] == step["run"] and late["t"] == step["t"]
            and self.replay.expects[step["expect"]].kind in ("child.end", "child.correction")
            for late in waiting)


def unhandled_ends(records: Sequence[Record], runs: set[str]) -> frozenset[str]:
    """Runs whose end the delivery process died on: a crash after the end before any record
    of the run's delivery (an attempt it may have claimed died with it; the Node end answers
    no call of a process with another process's answer)."""
    ended: set[str] = set()  # ended, nothing of its delivery recorded since
    found: set[str] = set()
    for record in records:
        if record.kind == "crash":
            found |= ended
            ended = set()
            continue
        run_id = record.data.get("run_id")
        if not isinstance(run_id, str) or run_id not in runs:
            continue
        if record.kind == "child.end":
            ended.add(run_id)
        elif record.kind.startswith("delivery.") or record.kind == "run.cleanup":
            ended.discard(run_id)
    return frozenset(found)
