"""Which runs the registry check can replay, and why the others cannot.

A run translates when every record about it is one the translation drives or reads (its
spawn, the child's own progress, its end, its announce attempts and their sends' outcomes, an
announce skip, an operator's redrive, a correction and the generation it reopens; the delivery
process's crashes and restarts name no run and are always driven) and nothing around it needs
machinery the Node end does not drive yet. Each other kind is left
out with the reason it is not driven, so the report can say what was not compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sim.trace import Record

# Records about a run that the translation reads (or that change nothing OpenClaw's registry
# holds: the child's own transcript work, the gateway's side of an acknowledged send).
DRIVEN = frozenset({
    "spawn", "child.start", "child.message", "child.delta", "child.tool_result",
    "child.turn_end", "child.consumers", "child.attempt", "child.end",
    "delivery.attempt", "gateway.send", "fault", "delivery.send_failed", "delivery.retry",
    "delivery.warning", "delivery.delivered", "gateway.inject", "requester.accept",
    "delivery.give_up", "run.cleanup", "requester.mirror", "gateway.mirror_queued",
    # A chunked send's chunks are sends inside one attempt: the attempt's end says how it went.
    "gateway.chunk", "gateway.chunk_failed",
    # Reads that change no row (the seed: a status check does not consume a result).
    "requester.status_check", "requester.archive",
    # An announce skip (ANNOUNCE_SKIP: the flow sends nothing and the row is delivered) and a
    # not-required run's skip are row states the check compares.
    "delivery.announce_skip", "delivery.skip",
    # Lost-answer recovery after a silent reply (DEL-2) keeps its own table and changes no
    # registry row; OpenClaw's counterpart lives in the announce flow the check replaces.
    "recovery.attempt", "recovery.end", "requester.recovered",
    # An operator's redrive: the harness's request, and the delivery's answer (taken or
    # refused), replayed as OpenClaw's operator retry.
    "delivery.redrive",
    # A correction (a newer receipt of the run) and the generation it reopens.
    "child.correction", "delivery.reopen",
    # The requester's side of a duplicate, and a stale acknowledgement the delivery drops:
    # neither changes a registry row.
    "requester.duplicate", "delivery.stale",
    # A kill of the running child: OpenClaw's kill path (its intent, then its tombstone).
    "child.abort",
})
REDRIVE = "redrive"

# Why a run with such a record is not replayed (the first one met is reported).
NOT_DRIVEN: Mapping[str, str] = {
    "delivery.batch_owned": "yield batch: the requester's settle wake is not driven",
    "delivery.defer": "requester turn pending: the busy requester is not driven",
    "world.operator": "operator dismissal: not driven",
    "delivery.operator_refused": "operator dismissal: not driven",
    "child.inherited": "nested child: the descendant registry is not driven",
    "private.retained": "private child: private completion is not driven",
}
OTHER = "record kind {kind}: not driven"
# OpenClaw's registry announces such a correction again at once (and more than once), beside
# the retry the model makes with the corrected payload: not yet matched call for call.
PENDING_CORRECTION = ("correction while its delivery is still pending (no reopened generation): "
                      "not driven yet")
SETTLE_WAKE = "announce:requester-settle:"  # a batch wake's idempotency key (reference §a)


def run_records(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Each run's records in trace order, by run id (records naming no run are left out)."""
    by_run: dict[str, list[Record]] = {}
    for record in records:
        run_id = record.data.get("run_id")
        if isinstance(run_id, str):
            by_run.setdefault(run_id, []).append(record)
    return by_run


def private_children(records: Iterable[Record]) -> frozenset[str]:
    """Children spawned with ``completionTarget: parent`` (the world's spawn requests)."""
    return frozenset(str(r.data.get("child")) for r in records
                     if r.kind == "world.spawn" and r.data.get("completion_target") == "parent")


def lost_answers(records: Iterable[Record]) -> frozenset[str]:
    """Children whose captured answer the world made lost (``answer_lost``, DEL-2)."""
    return frozenset(str(r.data.get("child")) for r in records
                     if r.kind == "world.spawn" and r.data.get("answer_lost"))


def spawn_reason(spawn: Mapping[str, Any], private: frozenset[str]) -> str | None:
    """A spawned inside a requester's turn is replayed like any other (the registry holds its
    completion only for a private child; a busy requester shows as ``delivery.defer``)."""
    if ":subagent:" in str(spawn.get("requester", "")):
        return "nested requester: the descendant registry is not driven"
    if str(spawn.get("child")) in private:
        return "private child (completionTarget parent): the parent's private turn is not driven"
    return None


def reason(records: list[Record], private: frozenset[str] = frozenset()) -> str | None:
    """Why this run (its records start with its spawn) cannot be replayed, or None."""
    first = records[0]
    why = spawn_reason(first.data, private)
    if why is not None:
        return why
    for record in records:
        if str(record.data.get("key", "")).startswith(SETTLE_WAKE):
            # A run that joined a yield batch after it froze has no `delivery.batch_owned`; the
            # batch's wake reaching it (YLD-2 releases a suspended member) is still not driven.
            return NOT_DRIVEN["delivery.batch_owned"]
        if record.kind == "child.correction" and not any(
                later.kind == "delivery.reopen" and later.seq > record.seq for later in records):
            return PENDING_CORRECTION
        if record.kind in DRIVEN:
            continue
        if record.kind in ("world.operator", "delivery.operator_refused") \
                and record.data.get("action") == REDRIVE:
            continue
        return NOT_DRIVEN.get(record.kind, OTHER.format(kind=record.kind))
    return None


NOT_A_KILL = ("stopped by a reset, delete or steer: the harness drives only OpenClaw's kill path "
              "(no suppressTaskDelivery); a stop that records not_required is not driven")


def stopped_otherwise(records: Iterable[Record]) -> dict[str, str]:
    """Runs stopped while they ran (``child.abort``) by anything but a kill of them: the
    requester's ``abort`` answering ``killed`` for the run's child in that instant. A reset or
    delete (``killSessionSubagentRuns``, ``suppressTaskDelivery: true``) and a steer take other
    paths of OpenClaw's registry than the kill the translation drives (issue 34)."""
    spawns: dict[str, tuple[str, str]] = {}
    kills: set[tuple[str, str, int]] = set()
    stopped: dict[str, int] = {}
    for r in records:
        if r.kind == "spawn":
            spawns[str(r.data["run_id"])] = (str(r.data.get("requester")), str(r.data["child"]))
        elif r.kind == "abort" and r.data.get("killed"):
            kills.add((r.actor.removeprefix("requester:"), str(r.data["child"]), r.t_ms))
        elif r.kind == "child.abort":
            stopped.setdefault(str(r.data["run_id"]), r.t_ms)
    return {run: NOT_A_KILL for run, at in stopped.items()
            if run in spawns and (*spawns[run], at) not in kills}


SAME_INSTANT = ("backs off in the same instant as another run: which of them takes which jitter "
                "is not pinned down by the trace")


def same_instant_backoffs(records: Iterable[Record]) -> dict[str, str]:
    """Runs that retry in the same instant as another run's retry: OpenClaw's registry may back
    them off in either order, and the jitter each takes follows that order."""
    retries: dict[int, set[str]] = {}
    for record in records:
        if record.kind == "delivery.retry":
            retries.setdefault(record.t_ms, set()).add(str(record.data.get("run_id")))
    return {run: SAME_INSTANT for runs in retries.values() if len(runs) > 1
            for run in sorted(runs)}
