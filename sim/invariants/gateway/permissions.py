"""DEL-17: session control is checked against the current caller's own permission.

What was asked is what the harness recorded: each session's owners (``world.session``) and each
session-control request with its number, action, child and caller (``world.spawn`` and
``world.action``; a caller is a person's name or ``report:<child>``, the turn that child's
completion report started). What happened is what the session recorded and did: a refusal
(``requester.refused``, naming the request) and the action's own effect (``spawn``, ``abort``,
``requester.history``, ``requester.status``, ``session.cleanup``, ``requester.archive``).

A person among the session's owners may act; anyone else may not, and neither may a report's
turn, whoever spawned the child it reports on (a completion never carries the original person's
permission). A refused action is recorded and has no effect.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

# The record each action leaves when it is performed.
EFFECTS = {"spawn": "spawn", "abort": "abort", "history": "requester.history",
           "status": "requester.status", "cleanup": "session.cleanup",
           "archive-read": "requester.archive", "steer": "steer"}
DEFAULT_OWNERS = ("owner",)


def _allowed(caller: str, owners: Sequence[str]) -> bool:
    return not caller.startswith("report:") and caller in owners


def control_permission(trace: Sequence[Record]) -> list[Violation]:
    owners: dict[str, Sequence[str]] = {}
    asked: dict[int, Record] = {}
    refused: dict[int, int] = {}  # request -> index of its refusal in the trace
    step_limited = False
    for index, r in enumerate(trace):
        if r.kind == "world.session":
            owners[r.data["key"]] = r.data["owners"]
        elif r.kind in ("world.action", "world.spawn") and "request" in r.data:
            asked[r.data["request"]] = r
        elif r.kind == "requester.refused":
            refused.setdefault(r.data["request"], index)
        elif r.kind == "world.end":
            step_limited = r.data["reason"] == "step-limit"
    violations: list[Violation] = []
    for number, request in asked.items():
        data = request.data
        if request.kind == "world.spawn":
            session, action = data["requester"], "spawn"
        else:
            session, action = data["session"], data["action"]
        allowed = _allowed(data["caller"], owners.get(session, DEFAULT_OWNERS))
        at = refused.get(number)
        if allowed and at is not None:
            violations.append(Violation(
                "control-permission", "DEL-17",
                f"request {number}: {data['caller']} owns {session}, yet its {action} of "
                f"{data['child']} was refused", (request.seq, trace[at].seq)))
        elif not allowed and at is None and not step_limited:
            violations.append(Violation(
                "control-permission", "DEL-17",
                f"request {number}: {data['caller']} holds no permission in {session}, yet its "
                f"{action} of {data['child']} was not refused", (request.seq,)))
        elif at is not None and not _twin(asked, refused, owners, number):
            # The refusal is the whole answer: the session's step that recorded it (its records
            # just before and after, from the same actor at the same instant) shows no effect.
            # (An owner's own request for the same action at that instant, not refused, may
            # have made that effect: seed 5110.)
            refusal = trace[at]
            for near in (trace[at - 1] if at > 0 else None,
                         trace[at + 1] if at + 1 < len(trace) else None):
                if (near is not None and near.actor == refusal.actor
                        and near.t_ms == refusal.t_ms and near.kind == EFFECTS[action]
                        and near.data.get("child") == data["child"]):
                    violations.append(Violation(
                        "control-permission", "DEL-17",
                        f"request {number}: the {action} of {data['child']} was refused and "
                        "performed all the same", (refusal.seq, near.seq)))
    return violations


def _twin(asked: dict[int, Record], refused: dict[int, int],
          owners: dict[str, Sequence[str]], number: int) -> bool:
    """Whether another request asked at the same instant for the same action on the same child
    of the same session by a caller it allows, and not refused (its effect is its own)."""
    data = asked[number].data
    for other, request in asked.items():
        them = request.data
        if other == number or other in refused or request.kind != "world.action" or \
                request.t_ms != asked[number].t_ms:
            continue
        if (them["session"], them["action"], them["child"]) == (
                data.get("session"), data.get("action"), data["child"]) and \
                _allowed(them["caller"], owners.get(them["session"], DEFAULT_OWNERS)):
            return True
    return False


INVARIANTS = (
    Invariant("control-permission", "DEL-17", "safety",
              "A session-control action (spawn, abort, history, status, cleanup, archive read) "
              "is performed only for a caller among the session's owners; a report's turn or a "
              "stranger is refused, the refusal recorded and nothing done.",
              control_permission),
)
