"""A correction: the producer corrects its result after the end (``child.correction``, a newer
receipt of the same run, DEL-12). OpenClaw's registry hears it as another lifecycle end of the
run carrying the newer end time and the corrected final reply. It reaches the registry when the
model's delivery took it: at its ``delivery.reopen`` (a delivered or given-up run opens its next
delivery generation), else at the correction itself. After a reopen the trace states the new
generation's attempts, counted from 1; the row then holds the corrected result."""

from __future__ import annotations

from actors.child.frozen import cap_frozen_result
from sim.conform.registry.model import Expect, Replay
from sim.trace import Record


def translate(record: Record, replay: Replay, status: str, given_up: str | None) -> None:
    """``record``: the run's ``child.correction``; ``status``: the run's end status;
    ``given_up``: the delivery status the run gave up with, if it did (a correction after a
    give-up changes only the retained payload: the row stays given up)."""
    data = record.data
    run_id = str(data["run_id"])
    result = data.get("result")
    replay.steps.append({"t": record.t_ms, "kind": "end", "run": run_id, "status": status,
                         "error": None, "reply": result if isinstance(result, str) else None,
                         "endedAt": int(data.get("ended_at", record.t_ms))})
    fields = {"row": True, "ended": True,
              "frozen": cap_frozen_result(result) if isinstance(result, str) else None}
    if given_up is not None:
        fields["status"] = given_up
    replay.check(Expect(run_id, record.seq, record.t_ms, record.kind, fields))


def reopen_of(records: list[Record], correction: Record) -> Record | None:
    """The run's next ``delivery.reopen`` that took ``correction`` (None when the next
    correction, or nothing, comes first)."""
    for record in records:
        if record.seq > correction.seq and record.kind == "delivery.reopen":
            return record
        if record.seq > correction.seq and record.kind == "child.correction":
            break
    return None

