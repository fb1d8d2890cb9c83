"""A delivery-process crash and its restart: the process dies (its timers and the announce call
in flight die with it; what it saved stays in SQLite), and a new process on the same state folder
restores the rows and resumes them, as OpenClaw's gateway does on start
(``initSubagentRegistry`` then ``activateSubagentRegistry``). An attempt the crash cut short
never answers; a child's end while the process was down reaches the new one when it starts
(the model's restarted delivery actor reads it then), so its end and the row check after it
move to the restart. So does an end the process took but died on before it recorded anything
of the run's delivery or counted an attempt for it (a crash at the instant the end came):
OpenClaw's registry starts the announce on the end at once, so the end is given to the
process that acted on it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sim.conform.registry.model import Replay
from sim.conform.registry.sends import Attempts
from sim.trace import Record

# Crash points inside an attempt the model had claimed (and counted): the process that died
# there was making an announce call.
IN_ATTEMPT = frozenset({"before-claim-reserved", "before-claim-attempted", "before-send",
                        "before-record-delivered", "before-save-evidence", "before-clear-claim"})


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
        self.restarted_at: tuple[int, int] | None = None  # the last restart: time, step index
        self.acted = False  # the delivery process recorded something since that restart

    def read(self, record: Record) -> bool:
        """True when ``record`` was the process's crash or (re)start."""
        if record.kind.startswith("delivery.") and record.kind != "delivery.start":
            self.acted = True
            return False
        point = str(getattr(record.data.get("point"), "value", record.data.get("point")))
        if record.kind == "crash" and self.restarted_at is not None and not self.acted \
                and self.restarted_at[0] == record.t_ms and point not in IN_ATTEMPT:
            # The new process died in the instant it started, before it did anything (not inside
            # an attempt it claimed): OpenClaw's would have resumed its rows at once, so that
            # start is not replayed at all.
            index = self.restarted_at[1]
            self.held = self.replay.steps[index + 1:]
            del self.replay.steps[index:]
            self.restarted_at = None
            self.down = True
            return True
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
            self.restarted_at = (record.t_ms, len(self.replay.steps))
            self.acted = False
            self.replay.steps.append({"t": record.t_ms, "kind": "restart"})
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
    of the run's delivery, and the restarted process's first attempt is the run's first (a
    crashed process that had counted an attempt acted on the end: that attempt is a call that
    died with it, see :meth:`Attempts.crashed`)."""
    ended: set[str] = set()  # ended, nothing of its delivery recorded since
    crashed: set[str] = set()  # ... and the process crashed since
    found: set[str] = set()
    for record in records:
        if record.kind == "crash":
            crashed |= ended
            continue
        run_id = record.data.get("run_id")
        if not isinstance(run_id, str) or run_id not in runs:
            continue
        if record.kind == "child.end":
            ended.add(run_id)
        elif run_id in ended and (record.kind.startswith("delivery.")
                                  or record.kind == "run.cleanup"):
            ended.discard(run_id)
            counted = record.kind == "delivery.attempt" and int(record.data.get("attempt", 1)) > 1
            if run_id in crashed and not counted:
                found.add(run_id)
    return frozenset(found)
