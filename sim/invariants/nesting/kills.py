"""A kill of a child run (reference §c18): a run that has not ended is stopped with its completion
suppressed, and so are its descendants that have not ended; a run that has ended is left alone.
A steer stops the running run the same way and starts a replacement run in its session.

Restated from what an outsider sees: the session's answer to the kill (``abort``: whether it
says it killed), each run's spawn and end (``spawn``, ``lane.started``, ``child.end``), what the
gateway was handed (``gateway.send``) and what a transcript took (``requester.accept``), and the
registry's rows when the world stops (``world.rows``). Which runs the kill had to stop is
worked out from those records alone (:func:`~sim.invariants.observations.kills`), never from
the model's own cascade records. A yielded batch that a killed run belongs to still wakes for
its other members and lists the killed one as unfinished (reference §c9); the wake oracles
judge that message, so a wake naming a killed run is not this oracle's.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.lineage import killed_silently, kills
from sim.invariants.observations import Asked, asked_runs, final_rows, is_wake
from sim.trace import Record

# The error a killed run ends with (reference §c6, §c18).
KILLED = "subagent run terminated"


def kill_suppresses(trace: Sequence[Record]) -> list[Violation]:
    """A kill's answer says it killed exactly when the child's latest run had not ended. Each
    run the kill had to stop (that run, and every run it or its descendants spawned that had not
    ended) ends at the kill's instant, error ``subagent run terminated``; its own completion is
    never handed to the gateway or taken by a transcript after the kill, and the registry's
    row, if kept, says so: after a kill (``abort``) it keeps the status the run was asked with,
    ``pending`` for a required run (the status label is the seed's silence, so OpenClaw
    2026.9.6's kill path decides: ``claimSubagentRunKill`` then ``markSubagentRunTerminated``
    suppress the announce and leave the status alone; docs/fidelity.md), ``not_required`` for
    one asked without a completion; after a steer, ``not_required`` (reference §c18). A kill of
    a run that had ended changes nothing: the run does not end again, and if its completion was
    asked for (and no earlier kill, reset or delete silenced it), its row never reads
    ``not_required``."""
    found = kills(trace)
    if not found:
        return []
    violations: list[Violation] = []
    stopped: dict[str, Record] = {}  # run -> the kill's answer that had to stop it
    spared: dict[str, Record] = {}  # ended run -> the first kill that named it
    first_end: dict[str, Record] = {}
    for r in of_kinds(trace, ("child.end",)):
        if r.kind == "child.end":
            first_end.setdefault(r.data["run_id"], r)
    for found_kill in found:
        answer = found_kill.answer
        should = bool(found_kill.stopped)
        if answer.data["killed"] != should:
            truth = ("had not ended" if should else "had ended" if found_kill.ended
                     else "was never spawned there")
            violations.append(Violation(
                "kill-suppresses", "DEL-1",
                f"a kill of {answer.data['child']} at {answer.t_ms} ms answered killed="
                f"{answer.data['killed']}, but its latest run {truth}", (answer.seq,)))
        for run_id in found_kill.stopped:
            end = first_end.get(run_id)
            if run_id != found_kill.target and end is not None and \
                    end.t_ms == answer.t_ms and end.data["error"] != KILLED:
                # A descendant that ended on its own in the kill's very instant: the cascade
                # goes session by session, and the run's end may come before it arrives
                # (seed 23451); which came first in one instant is the scheduler's.
                continue
            stopped.setdefault(run_id, answer)
        if found_kill.ended and found_kill.target is not None:
            spared.setdefault(found_kill.target, answer)
    ended: dict[str, Record] = {}
    for r in of_kinds(trace, ("child.end", "gateway.send", "requester.accept")):
        kind = r.kind
        if kind == "child.end":
            run_id = r.data["run_id"]
            kill = stopped.get(run_id)
            earlier = ended.setdefault(run_id, r)
            if earlier is not r:
                violations.append(Violation(
                    "kill-suppresses", "DEL-1",
                    f"{run_id} ended twice: at {earlier.t_ms} ms and at {r.t_ms} ms",
                    (earlier.seq, r.seq)))
            elif kill is not None and kill.seq < r.seq and (
                    r.t_ms != kill.t_ms or r.data["status"] != "error"
                    or r.data["error"] != KILLED):
                violations.append(Violation(
                    "kill-suppresses", "DEL-1",
                    f"{run_id} had not ended when a kill of {kill.data['child']} reached it at "
                    f"{kill.t_ms} ms, yet it ended {r.data['status']} "
                    f"({r.data['error'] or r.data['result']!r}) at {r.t_ms} ms instead of "
                    "killed then", (kill.seq, r.seq)))
        elif kind in ("gateway.send", "requester.accept") and not is_wake(r.data["key"]):
            run_id = r.data.get("run_id") or ""
            kill = stopped.get(run_id)
            if kill is not None and kill.seq < r.seq:
                what = "handed to the gateway" if kind == "gateway.send" else \
                    f"taken by {r.actor}"
                violations.append(Violation(
                    "kill-suppresses", "DEL-1",
                    f"{run_id} had not ended when a kill of {kill.data['child']} reached it "
                    f"at {kill.t_ms} ms, yet its completion was {what} at {r.t_ms} ms",
                    (kill.seq, r.seq)))
    rows = final_rows(trace)
    asked = asked_runs(trace)
    for run_id, kill in stopped.items():
        if run_id not in ended:
            violations.append(Violation(
                "kill-suppresses", "DEL-1",
                f"{run_id} had not ended when a kill of {kill.data['child']} reached it at "
                f"{kill.t_ms} ms, and it never ended (it was not killed)", (kill.seq,)))
        status, want = rows.get(run_id), _stopped_status(kill, asked.get(run_id))
        if status is not None and status != want:
            violations.append(Violation(
                "kill-suppresses", "DEL-1",
                f"{run_id} had not ended when a {_ACT[kill.kind]} of {kill.data['child']} reached "
                f"it, "
                f"yet the registry's row records its delivery {status}, not {want}",
                (kill.seq,)))
    silenced = killed_silently(trace)  # an earlier kill, reset or delete stopped it: not spared
    for run_id, kill in spared.items():
        run = asked.get(run_id)
        if run_id not in silenced and run is not None and run.required \
                and rows.get(run_id) == "not_required":
            violations.append(Violation(
                "kill-suppresses", "DEL-1",
                f"{run_id} had ended when a kill of {kill.data['child']} came at {kill.t_ms} "
                "ms, which must change nothing, yet the registry's row records its required "
                "delivery not_required", (kill.seq,)))
    return violations


_ACT = {"abort": "kill", "steer": "steer"}


def _stopped_status(answer: Record, run: Asked | None) -> str:
    """The delivery status the row of a run this kill or steer stopped keeps: a kill leaves a
    required run ``pending`` (OpenClaw 2026.9.6: its kill path passes no
    ``suppressTaskDelivery``, so the cleanup never relabels it); a steer, or a run asked for
    without a completion, reads ``not_required``."""
    kept = answer.kind == "abort" and run is not None and run.required
    return "pending" if kept else "not_required"


def steer_replaces(trace: Sequence[Record]) -> list[Violation]:
    """A steer that stopped a running run (its answer says so, and kill-suppresses holds it to
    the truth and to the silent stop) starts, in that same instant, a replacement run of the
    same child in the same child session under a run id of its own: the session's next spawn
    of that child, right after its answer. Its completion is then owed like any run's (the
    delivery oracles judge it), and nothing of the steered run is announced (kill-suppresses)."""
    steers = [k for k in kills(trace) if k.answer.kind == "steer" and k.stopped]
    if not steers:
        return []
    spawns = [r for r in of_kinds(trace, ("spawn",)) if r.kind == "spawn"]
    by_run = {r.data["run_id"]: r for r in spawns}
    violations: list[Violation] = []
    for steer in steers:
        answer = steer.answer
        steered = by_run[steer.stopped[0]]
        nxt = next((r for r in spawns if r.seq > answer.seq and r.actor == answer.actor
                    and r.data["child"] == answer.data["child"]), None)
        if nxt is None or nxt.t_ms != answer.t_ms:
            violations.append(Violation(
                "steer-replaces", "DEL-1",
                f"{steered.data['run_id']} was steered at {answer.t_ms} ms, yet no replacement "
                f"run of {answer.data['child']} started then", (answer.seq,)))
        elif nxt.data["child_session_key"] != steered.data["child_session_key"] \
                or nxt.data["run_id"] == steered.data["run_id"]:
            violations.append(Violation(
                "steer-replaces", "DEL-1",
                f"{steered.data['run_id']} was steered at {answer.t_ms} ms, but its replacement "
                f"{nxt.data['run_id']} runs in {nxt.data['child_session_key']}, not in a new run "
                f"of {steered.data['child_session_key']}", (answer.seq, nxt.seq)))
    return violations


INVARIANTS = (
    Invariant("kill-suppresses", "DEL-1", "safety",
              "A kill stops a run that has not ended, and its unended descendants, at once, "
              "killed, with nothing of them handed over; a kill's row keeps a required "
              "delivery pending (OpenClaw 2026.9.6), a steer's records not_required; a kill "
              "of an ended run changes nothing (reference §c18).",
              kill_suppresses),
    Invariant("steer-replaces", "DEL-1", "safety",
              "A steer of a running run starts, at once, a replacement run of the same child in "
              "the same child session under its own run id (reference §c18).", steer_replaces),
)
