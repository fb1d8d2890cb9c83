"""A spawn: OpenClaw's ``registerSubagentRun`` with the spawn's keys, task and whether a
completion message is required; the row then holds a pending (or not-required) delivery, no
attempts, no outcome and no frozen result."""

from __future__ import annotations

from sim.conform.registry.model import Expect, Replay, RunScript
from sim.trace import Record


def translate(record: Record, replay: Replay) -> None:
    data = record.data
    run_id = str(data["run_id"])
    required = bool(data.get("required", True))
    replay.runs[run_id] = RunScript(
        child_session_key=str(data["child_session_key"]),
        requester_session_key=str(data["requester"]), task=str(data.get("task") or ""),
        required=required)
    replay.steps.append({"t": record.t_ms, "kind": "spawn", "run": run_id})
    replay.check(Expect(run_id, record.seq, record.t_ms, record.kind, {
        "row": True, "status": "pending" if required else "not_required", "attempts": 0,
        "nextAttemptAt": None, "ended": False, "outcome": None, "frozen": None, "handed": 0}))
