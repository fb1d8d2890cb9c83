"""A finished run's trace -> a :class:`Replay`: the runs :mod:`.scope` admits, their records
dispatched by kind, in trace order (so steps and checks keep the trace's time order)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.child.frozen import cap_frozen_result
from sim.conform.registry import child_end, correction, restart, scope, spawn
from sim.conform.registry.model import Replay
from sim.conform.registry.sends import Attempts
from sim.trace import Record


def translate(records: Sequence[Record]) -> Replay:
    replay = Replay()
    by_run = scope.run_records(records)
    private = scope.private_children(records)
    lost = scope.lost_answers(records)
    child_of = {str(r.data["run_id"]): str(r.data.get("child")) for r in records
                if r.kind == "spawn"}
    same_instant = scope.same_instant_backoffs(records)
    same_instant.update(scope.stopped_otherwise(records))  # (both: not replayed, with why)
    admitted: dict[str, Attempts] = {}
    messages: dict[str, list[Record]] = {}
    ends: dict[str, str] = {}  # each run's end status
    for candidate, mine in by_run.items():
        if mine[0].kind != "spawn":
            continue  # not a child's run (a requester's turn or wake carries its own run id)
        why = scope.reason(mine, private) or same_instant.get(candidate)
        if why is None:
            admitted[candidate] = Attempts(candidate, replay)
        else:
            replay.skipped[candidate] = why
    last_end: str | None = None  # an admitted run whose end is the latest record
    process = restart.Process(replay, admitted.values(), records)
    for record in records:
        if process.read(record):
            last_end = None
            continue
        if record.kind == "fault" and "run_id" not in record.data:
            if last_end is not None:
                child_end.delivered_late(record, replay)
            continue
        run_id = record.data.get("run_id")
        last_end = None
        if not isinstance(run_id, str) or run_id not in admitted:
            continue
        if record.kind == "spawn":
            spawn.translate(record, replay)
        elif record.kind == "child.message":
            messages.setdefault(run_id, []).append(record)
        elif record.kind == "child.abort":
            # The requester killed the running child: OpenClaw's kill path, before its end.
            replay.steps.append({"t": record.t_ms, "kind": "kill", "run": run_id})
        elif record.kind == "child.correction":
            reopen = correction.reopen_of(by_run[run_id], record)
            at = record.t_ms if reopen is None else reopen.t_ms
            correction.translate(attrs.evolve(record, t_ms=at), replay, ends.get(run_id, "ok"),
                                 admitted[run_id].given_up)
            result = record.data.get("result")  # the newer receipt owns the payload (DEL-12)
            admitted[run_id].correct(cap_frozen_result(result) if isinstance(result, str)
                                     else None, at_reopen=reopen is not None)
        elif record.kind == "child.end":
            ends[run_id] = str(record.data.get("status"))
            mark = len(replay.steps)
            child_end.translate(record, replay, messages.get(run_id, []),
                                lost=child_of.get(run_id) in lost)
            process.ended(run_id, mark)
            result = record.data.get("result")
            admitted[run_id].result = (cap_frozen_result(result) if isinstance(result, str)
                                       else None)
            last_end = run_id
        else:
            admitted[run_id].read(record)
    process.finish()
    replay.in_time_order()
    return replay

