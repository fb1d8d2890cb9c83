"""DEL-8 oracles: the transcript mirror of a direct delivery.

Read from the trace alone: the gateway's receipts (each input it handed a requester session,
``gateway.inject``; each confirmed direct delivery whose mirror it queued,
``gateway.mirror_queued``; each mirror that failed, ``gateway.mirror_failed``), what each channel
received (``gateway.chunk``), what each session received (``requester.accept``,
``requester.duplicate``, ``requester.recovered``, ``requester.mirror``, a deleted session's refusal
``requester.gone``, a refused batch wake ``requester.wake_refused``, a refused private hand-off
``requester.private_refused``), the acknowledgement faults
(``send-ambiguous``, ``ack-slow``), the delivery process's crashes and restarts, and what the
registry recorded (``delivery.delivered``, ``delivery.stale``). Restated from seed 002: the mirror
comes after the work already queued on the session, the send never waits for it, and after a
successful send it is still recorded (best effort).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import is_delivery_crash
from sim.trace import Record

# A session's lane waits this long for an input it never confirms (the announce timeout, §c11).
LANE_WAIT_MS = 120_000
# A deleted session's refusal (``requester.gone``) is its answer too: the input reached it; so is
# a session's refusal of a batch wake (``requester.wake_refused``: its turn is gone, or it is busy
# in another turn), and of a private hand-off bound to its earlier incarnation
# (``requester.private_refused``: answered since stop 45, as OpenClaw's agent method does).
_RECEIPTS = ("requester.accept", "requester.duplicate", "requester.recovered", "requester.gone",
             "requester.wake_refused", "requester.private_refused")


def mirror_after_queued_work(trace: Sequence[Record]) -> list[Violation]:
    """A mirror is recorded only after every input handed to its session before the mirror was
    queued reached the session, or waited out the lane's 120 s."""
    injected: dict[str, list[Record]] = {}  # session -> inputs handed to it, in order
    received: dict[tuple[str, str], Record] = {}  # (session, key) -> first receipt
    open_at: dict[tuple[str, str], list[Record]] = {}  # (session, key) of a mirror -> open work
    violations: list[Violation] = []
    for r in of_kinds(trace, ("gateway.inject", *_RECEIPTS, "gateway.mirror_queued",
                              "requester.mirror")):
        kind = r.kind
        if kind == "gateway.inject":
            injected.setdefault(r.data["session"], []).append(r)
        elif kind in _RECEIPTS:
            received.setdefault((r.actor.removeprefix("requester:"), r.data["key"]), r)
        elif kind == "gateway.mirror_queued":
            session, key = r.data["session"], r.data["key"]
            open_at[(session, key)] = [
                i for i in injected.get(session, ()) if i.data["key"] != key
                and (session, i.data["key"]) not in received]
        elif kind == "requester.mirror":
            session = r.actor.removeprefix("requester:")
            for work in open_at.pop((session, r.data["key"]), []):
                done = received.get((session, work.data["key"]))
                if (done is None or done.seq > r.seq) and r.t_ms < work.t_ms + LANE_WAIT_MS:
                    violations.append(Violation(
                        "mirror-after-queued-work", "DEL-8",
                        f"the mirror of {r.data['run_id']} was recorded on {session} at "
                        f"{r.t_ms} ms, ahead of {work.data['run_id']}'s input queued there at "
                        f"{work.t_ms} ms", (work.seq, r.seq)))
    return violations


def mirror_not_blocking(trace: Sequence[Record]) -> list[Violation]:
    """The send of a direct delivery completes without waiting for its mirror: once the session
    confirmed it, the registry learns so at that instant (unless the acknowledgement itself was
    lost or slowed, or the delivery process died)."""
    waiting: dict[str, Record] = {}  # run_id -> its mirror_queued receipt
    violations: list[Violation] = []
    for r in of_kinds(trace, ("gateway.mirror_queued", "fault", "crash", "delivery.start", "drop",
                              "delivery.delivered", "delivery.stale")):
        kind = r.kind
        if kind == "gateway.mirror_queued":
            waiting[r.data["run_id"]] = r
        elif kind == "fault" and r.data.get("kind") in ("send-ambiguous", "ack-slow"):
            waiting.pop(r.data.get("run_id", ""), None)
        elif is_delivery_crash(r) or kind in ("delivery.start", "drop"):
            waiting.clear()
        elif kind in ("delivery.delivered", "delivery.stale"):
            queued = waiting.pop(r.data["run_id"], None)
            if queued is not None and r.t_ms > queued.t_ms:
                violations.append(Violation(
                    "mirror-not-blocking", "DEL-8",
                    f"{r.data['run_id']}'s session confirmed it at {queued.t_ms} ms, but the "
                    f"registry heard of it only at {r.t_ms} ms (the send waited)",
                    (queued.seq, r.seq)))
    return violations


def mirror_recorded(trace: Sequence[Record]) -> list[Violation]:
    """After a successful direct send the mirror is recorded (or fails, best effort), holds
    what the channel received, and only a direct delivery is mirrored.

    One mirror per key and session (seed 002 suppresses duplicate deliveries by the recorded
    delivery facts; OpenClaw's transcript append looks an assistant message up by its
    idempotency key): a later confirmation of a key whose mirror the session already recorded
    owes no second copy (seeds 47853, 82528, 83346, 83691: a network copy of the first
    acceptance confirmed the resend made after the try timed out). Only a recorded mirror
    (``requester.mirror``) stands for it: after a failed one the next confirmation owes its own."""
    chars: dict[str, int] = {}  # key -> characters its channel received
    queued: dict[tuple[str, str], Record] = {}
    mirrored: set[tuple[str, str]] = set()  # (session, key) whose mirror is in the transcript
    violations: list[Violation] = []
    end: Record | None = None
    for r in of_kinds(trace, ("gateway.chunk", "gateway.mirror_queued", "requester.mirror",
                              "gateway.mirror_failed", "world.end")):
        kind = r.kind
        if kind == "gateway.chunk":
            chars[r.data["key"]] = chars.get(r.data["key"], 0) + len(r.data["text"])
        elif kind == "gateway.mirror_queued":
            if (r.data["session"], r.data["key"]) not in mirrored:
                queued[(r.data["session"], r.data["key"])] = r
        elif kind in ("requester.mirror", "gateway.mirror_failed"):
            session = (r.data["session"] if kind == "gateway.mirror_failed"
                       else r.actor.removeprefix("requester:"))
            if kind == "requester.mirror":
                mirrored.add((session, r.data["key"]))
            if queued.pop((session, r.data["key"]), None) is None:
                violations.append(Violation(
                    "mirror-recorded", "DEL-8",
                    f"{session} got a mirror of {r.data['run_id']} that no confirmed direct "
                    "delivery queued", (r.seq,)))
            elif kind == "requester.mirror" and r.data["chars"] != chars.get(r.data["key"]):
                violations.append(Violation(
                    "mirror-recorded", "DEL-8",
                    f"the mirror of {r.data['run_id']} holds {r.data['chars']} characters; its "
                    f"channel received {chars.get(r.data['key'])}", (r.seq,)))
        elif kind == "world.end":
            end = r
    if end is not None and end.data["reason"] == "quiescent":
        for (session, _), q in queued.items():
            violations.append(Violation(
                "mirror-recorded", "DEL-8",
                f"{q.data['run_id']}'s direct delivery to {session} was confirmed at {q.t_ms} ms, "
                "but its mirror was never recorded", (q.seq, end.seq)))
    return violations


INVARIANTS = (
    Invariant("mirror-after-queued-work", "DEL-8", "safety",
              "A direct delivery's transcript mirror is recorded after the work already queued "
              "on its requester session.", mirror_after_queued_work),
    Invariant("mirror-not-blocking", "DEL-8", "safety",
              "A direct delivery's send completes without waiting for its transcript mirror.",
              mirror_not_blocking),
    Invariant("mirror-recorded", "DEL-8", "liveness",
              "After a successful direct send its mirror is recorded (best effort) and holds "
              "what the channel received.", mirror_recorded),
)
