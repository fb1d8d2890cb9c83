"""A child's end: a lifecycle event (``end``, or ``error`` for a failed run; a timeout carries
``status: timeout``) with the child's final reply, as OpenClaw's agent runtime emits it. The
row then holds the run's outcome and its frozen result: the trace's ``result`` under the
frozen-result cap (the cap itself is the ``frozen-cap`` function check's)."""

from __future__ import annotations

from actors.child.frozen import cap_frozen_result
from sim.conform.registry.model import Expect, Replay
from sim.trace import Record

# The model's end status -> the registry's outcome status.
OUTCOME = {"ok": "ok", "error": "error", "timeout": "timeout", "killed": "error"}


def translate(record: Record, replay: Replay) -> None:
    data = record.data
    run_id = str(data["run_id"])
    status = str(data["status"])
    replay.steps.append({"t": record.t_ms, "kind": "end", "run": run_id, "status": status,
                         "error": data.get("error"), "result": data.get("result")})
    result = data.get("result")
    frozen = cap_frozen_result(result) if isinstance(result, str) else None
    replay.check(Expect(run_id, record.seq, record.t_ms, record.kind, {
        "row": True, "ended": True, "outcome": OUTCOME.get(status, status), "frozen": frozen}))
