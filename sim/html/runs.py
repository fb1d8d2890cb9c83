"""The timeline's bars: each child run from its start to its end on the child's lane, and each
delivery attempt of that run on the same lane, from the attempt to what answered it.

Read from the records' own fields (which run a record is about, the spawn naming the child),
never from the model: pure, records and lane numbers in, bars out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actors import addresses
from sim.trace import Record

# What a bar is, and how it ended: ok (the run ended ok; the attempt was acknowledged), failed
# (the run ended otherwise; the send failed or was given up), open (no answer in the trace: the
# run never ended, or the delivery crashed or tried again before an answer came).
RUN, ATTEMPT = 0, 1
OK, FAILED, OPEN = 0, 1, 2

_ATTEMPT_FAILED = ("delivery.send_failed", "delivery.give_up", "delivery.stale")


def bars(records: Sequence[Record], lane: dict[str, int]) -> list[list[int]]:
    """[lane, t0, t1, first record, last record (-1: none), RUN or ATTEMPT, OK/FAILED/OPEN],
    in order of their first record. An open bar reaches the trace's last time."""
    end_t = records[-1].t_ms if records else 0
    child_lane: dict[str, int] = {}  # run id -> its child's lane (from the spawn)
    running: dict[str, list[int]] = {}  # run id -> its bar, until child.end
    sending: dict[str, list[int]] = {}  # run id -> its attempt's bar, until answered
    out: list[list[int]] = []

    def close(bar: list[int], r: Record, how: int) -> None:
        bar[2], bar[4], bar[6] = r.t_ms, r.seq, how

    for r in records:
        d: Any = r.data
        run_id = d.get("run_id") if isinstance(d.get("run_id"), str) else None
        if run_id is None:
            if r.kind == "crash" and r.actor == addresses.DELIVERY:  # no answer will come
                for bar in sending.values():
                    close(bar, r, OPEN)
                sending.clear()
            continue
        if r.kind == "spawn" and isinstance(d.get("child"), str):
            child = addresses.child(d["child"])
            if child in lane:
                child_lane[run_id] = lane[child]
        elif r.kind == "child.start":
            running[run_id] = [lane[r.actor], r.t_ms, end_t, r.seq, -1, RUN, OPEN]
            out.append(running[run_id])
        elif r.kind == "child.end" and run_id in running:
            close(running.pop(run_id), r, OK if d.get("status") == "ok" else FAILED)
        elif r.kind == "delivery.attempt":
            if run_id in sending:  # tried again before an answer
                close(sending.pop(run_id), r, OPEN)
            sending[run_id] = [child_lane.get(run_id, lane[r.actor]), r.t_ms, end_t, r.seq, -1,
                               ATTEMPT, OPEN]
            out.append(sending[run_id])
        elif r.kind == "delivery.delivered" and run_id in sending:
            close(sending.pop(run_id), r, OK)
        elif r.kind in _ATTEMPT_FAILED and run_id in sending:
            close(sending.pop(run_id), r, FAILED)
    return out
