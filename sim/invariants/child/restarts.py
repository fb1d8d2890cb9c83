"""Gateway restarts (reference §c18), restated from what the harness did and what an outsider
reads afterwards: each restart as scripted or drawn (``world.gateway-restart``: when, when the
Gateway was back, the runs whose execution context it lost), each run's spawn (required or not),
its start (``spawn``, or ``lane.started`` after a wait) and its end (``child.end``), the child
session's recovery turn (``child.resumed``), and what the requester's conversation read (the
resumed notice, ``requester.restart-notice``; a completion, ``requester.accept``). Never the
model's own record of whom it interrupted or owes a notice.

The runs a restart interrupted are the ones started and not yet ended when it came (by trace
position). For each:
- context lost: it never resumes and, unless a kill ended it first, ends ``error`` with exactly
  ``subagent run lost active execution context`` when the Gateway is back; no notice of it;
- otherwise: it does not end while the Gateway is down (unless killed), it is resumed at most
  once (no second recovery turn, also when its notice is retried), and:
  - completion required: its requester reads ``Resumed your interrupted task after the Gateway
    restart.`` at most once, and before any of its completions is taken;
  - not required: no notice at all.
No notice names a run no restart interrupted, and no run ends with the lost-context error but
one whose context a restart lost.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.lineage import killed_silently
from sim.trace import Record

RESUMED_NOTICE = "Resumed your interrupted task after the Gateway restart."
LOST_CONTEXT = "subagent run lost active execution context"
ANNOUNCE_KEY = "announce:v1:"
_KINDS = ("world.gateway-restart", "spawn", "lane.queued", "session.queued", "lane.started",
          "child.end", "child.resumed", "requester.restart-notice", "requester.accept")


def _fail(text: str, *seqs: int) -> Violation:
    return Violation("restart-resumes", "DEL-13", text, tuple(seqs))


def restart_resumes(trace: Sequence[Record]) -> list[Violation]:
    records = of_kinds(trace, _KINDS)
    if not any(r.kind == "world.gateway-restart" for r in records):
        return []
    killed = killed_silently(trace)
    required: dict[str, bool] = {}
    started: dict[str, None] = {}  # runs started and not ended, in start order
    ended: dict[str, Record] = {}
    # run id -> (restart number, restart record, context lost, Gateway back) of the latest
    # restart that interrupted it: its context lost by any restart that interrupted it, the
    # Gateway back at the latest of the returns announced so far
    hit: dict[str, tuple[int, Record, bool, int]] = {}
    back = 0
    resumed: dict[tuple[str, int], Record] = {}
    noticed: dict[tuple[str, int], Record] = {}
    restarts = 0
    violations: list[Violation] = []
    for r in records:
        kind = r.kind
        if kind not in _KINDS:
            continue
        data = r.data
        if kind == "world.gateway-restart":
            restarts += 1
            back = max(back, data["back_ms"])
            for run_id in started:
                lost = run_id in data["lost"] or (run_id in hit and hit[run_id][2])
                hit[run_id] = (restarts, r, lost, back)
            continue
        run_id = data["run_id"]
        if kind == "spawn":
            required[run_id] = bool(data["required"])
            started[run_id] = None
        elif kind in ("lane.queued", "session.queued"):
            started.pop(run_id, None)
        elif kind == "lane.started":
            started[run_id] = None
        elif kind == "child.end":
            if run_id in ended:
                continue
            ended[run_id] = r
            started.pop(run_id, None)
            violations += _end(r, hit.get(run_id), run_id in killed)
        elif kind == "child.resumed":
            number, _, lost, _ = hit.get(run_id, (0, r, False, 0))
            if number == 0 or lost:
                violations.append(_fail(
                    f"{run_id} was resumed, though " + ("no Gateway restart interrupted it"
                                                         if number == 0 else
                                                         f"restart {number} lost its context"),
                    r.seq))
            elif (run_id, number) in resumed:
                violations.append(_fail(
                    f"{run_id} was resumed twice after restart {number} (a second recovery "
                    "turn)", resumed[(run_id, number)].seq, r.seq))
            resumed.setdefault((run_id, number), r)
        elif kind == "requester.restart-notice":
            violations += _notice(r, hit.get(run_id), required.get(run_id, False), noticed)
        elif kind == "requester.accept" and data["key"].startswith(ANNOUNCE_KEY):
            at = hit.get(run_id)
            if at is not None and not at[2] and required.get(run_id, False) \
                    and (run_id, at[0]) not in noticed:
                violations.append(_fail(
                    f"{actor_name(r)} took a completion of {run_id}, which Gateway restart "
                    f"{at[0]} interrupted and recovery resumed, without first reading "
                    f"{RESUMED_NOTICE!r}", at[1].seq, r.seq))
    return violations


def actor_name(r: Record) -> str:
    return r.actor.removeprefix("requester:")


def _end(end: Record, at: tuple[int, Record, bool, int] | None,
         killed: bool) -> list[Violation]:
    """A run's end, read against the latest restart that interrupted it (if any)."""
    run_id, error = end.data["run_id"], end.data["error"]
    if at is None:
        if error == LOST_CONTEXT:
            return [_fail(f"{run_id} ended {LOST_CONTEXT!r}, though no Gateway restart "
                          "interrupted it", end.seq)]
        return []
    number, restart, lost, back = at
    if lost:
        if killed and end.t_ms < back:
            return []  # a kill while the Gateway was down ended it first
        if end.data["status"] != "error" or error != LOST_CONTEXT or end.t_ms != back:
            return [_fail(f"{run_id}'s execution context was lost by Gateway restart {number} "
                          f"(back at {back} ms), yet it ended {end.data['status']} "
                          f"{error!r} at {end.t_ms} ms", restart.seq, end.seq)]
        return []
    if error == LOST_CONTEXT:
        return [_fail(f"{run_id} ended {LOST_CONTEXT!r}, though restart {number} kept its "
                      "context", restart.seq, end.seq)]
    if end.t_ms < back and not killed:
        return [_fail(f"{run_id} was interrupted by Gateway restart {number} at "
                      f"{restart.t_ms} ms, yet it ended {end.data['status']} at {end.t_ms} ms, "
                      f"before the Gateway was back at {back} ms", restart.seq, end.seq)]
    return []


def _notice(notice: Record, at: tuple[int, Record, bool, int] | None, required: bool,
            noticed: dict[tuple[str, int], Record]) -> list[Violation]:
    run_id = notice.data["run_id"]
    if notice.data["text"] != RESUMED_NOTICE:
        return [_fail(f"the resumed notice of {run_id} read {notice.data['text']!r}, not "
                      f"{RESUMED_NOTICE!r}", notice.seq)]
    if at is None or at[2] or not required:
        why = ("no Gateway restart interrupted it" if at is None else
               f"restart {at[0]} lost its context" if at[2] else
               "its completion is not required (it resumes silently)")
        return [_fail(f"{actor_name(notice)} read the resumed notice of {run_id}, though "
                      f"{why}", notice.seq)]
    key = (run_id, at[0])
    if key in noticed:
        return [_fail(f"the resumed notice of {run_id} after restart {at[0]} was read twice",
                      noticed[key].seq, notice.seq)]
    noticed[key] = notice
    return []


INVARIANTS = (
    Invariant("restart-resumes", "DEL-13", "safety",
              "After a Gateway restart, each run it interrupted is resumed once from its "
              "transcript, or (context lost) ends error 'subagent run lost active execution "
              "context' when the Gateway is back; a required one's requester reads 'Resumed "
              "your interrupted task after the Gateway restart.' once, before its completion; "
              "a not-required one resumes silently (reference §c18).", restart_resumes),
)
