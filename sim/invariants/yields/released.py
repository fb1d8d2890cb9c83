"""YLD-2 from the registry's side: once a yield batch's wake is taken, the batch's results count
as delivered (seed 002: after ``sessions_yield`` no single child's cleanup may expire or suspend
them). The registry's rows say how (reference §b): a member handed to the batch (its delivery
``intentional_non_delivery``) is delivered when the batch completes, and a member whose own
delivery had given up (``suspended``, by a refusal for good or by its expiry, DEL-10, or by an
earlier close of its batch) is released to ``delivered`` by the wake's receipt of the same run
and delivery generation (§c12). An unfrozen wave's wake takes the same receipt rule
(docs/fidelity.md). Either way the member is delivered from the take on: an operator's redrive
finds nothing to send again, and the sweeper has no suspended row to discard.

Restated from what an outsider sees: the spawn requests (which runs must be delivered, which are
private), the producers' receipts (``child.end``, ``child.correction``), each send the gateway
was handed and how it was refused (``gateway.send``, refusals), what the requester took
(``requester.accept``: the wake's key names its runs), the acknowledgement faults, the operator's
requests, the delivery process's crashes and the registry's rows when the world stopped
(``world.rows``). A run whose own send was refused for good is read as the DEL-16 oracles read it
(:class:`~sim.invariants.given_up.GivenUp`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.retention import RETENTION_MS
from sim.invariants.given_up import GivenUp
from sim.invariants.index import of_kinds
from sim.invariants.observations import (
    asked_runs,
    is_delivery_crash,
    is_wake,
    key_runs,
    rejection_class,
)
from sim.invariants.private.completion import private_runs, releases
from sim.invariants.yields.carried import batch_of
from sim.invariants.yields.waves import ANSWER_MS
from sim.trace import Record

_LOST = ("send-ambiguous", "ack-slow")  # a take's answer lost or slowed on its way back


def _lost(r: Record) -> bool:
    """A fault that held up the answer of a take on its way back to the registry."""
    kind = r.data.get("kind")
    return kind in _LOST or (kind == "delay" and r.data.get("message") == "CompletionAck")


def wake_releases_suspended(trace: Sequence[Record]) -> list[Violation]:
    """When the world stops quiescent, every run a counted settle wake's take named (its key's
    runs) is recorded ``delivered``, and no new generation of it is handed to the gateway
    after the take, when all of these hold: its delivery was required; it ended ok before the
    wake's first send (when the findings were rendered); and at the take its own delivery was
    over: its latest own key refused for good (as :class:`GivenUp` reads it), or no own key of
    it ever sent (handed to the batch, or given up by its expiry before any try went out, so no
    try of it can be out). A take counts when the registry must take it as the wake done: a
    wave's, or a yield's with a visible reply or in a batch with a private member (reference
    §c9: only then is no visible reply required), of the batch's latest key, before any
    refusal for good closed the batch. Not judged, where the registry may know better or
    nothing is left: an own send of the run between the render and the take (its own delivery
    was deciding), a correction of it between the render and the take (the wake may carry the
    older receipt, which releases nothing), a new generation sent after a correction that
    followed the take (a newer receipt is a new delivery, DEL-12, which may give up on its
    own), a private run's correction after the take (its new generation goes to its parent's
    turn, which may be gone: PRV-3), an operator's dismissal before the take, a take a
    week or more after its end (the sweeper may have discarded its suspended row first,
    reference §c18), a fault on the way back of that wake's answer, a take of a copy of it
    held on its way past the answer timeout (the registry gave that try up unanswered first),
    a crash of the delivery process from the render to the take, a row gone when the world
    stopped."""
    end = trace[-1] if trace else None
    if end is None or end.kind != "world.end" or end.data["reason"] != "quiescent":
        return []
    gone = GivenUp(releases(trace))
    asked, private = asked_runs(trace), private_runs(trace)
    ended: dict[str, tuple[int, bool]] = {}  # run -> its end and whether it ended ok
    own_sent: dict[str, list[int]] = {}  # run -> where in the trace its own keys were sent
    wake_sent: dict[str, str] = {}  # batch -> its latest key handed over
    rendered_by: dict[str, Record] = {}  # batch -> its first wake's send (findings rendered)
    closed: dict[str, int] = {}  # batch -> when a send of it was first refused for good
    dismissed: dict[str, int] = {}  # run -> an operator's first dismissal of it
    corrected: dict[str, list[int]] = {}  # run -> where in the trace it was corrected
    receipts: dict[str, list[Record]] = {}  # run -> its corrections (newer receipts)
    lost: dict[str, list[int]] = {}  # a run or batch -> when an answer of it was held up
    # a run or batch -> (when, delay) a send of it was held past the answer timeout on its
    # way to the requester: the registry gave that try up unanswered (and may have closed the
    # batch as ambiguous) before the held copy was taken (seed 34975)
    held: dict[str, list[tuple[int, int]]] = {}
    crashes: list[Record] = []  # the delivery process's deaths
    rows: dict[str, str] = {}
    # run -> (take, the render: its batch's first send, why judged). Records of one instant
    # are told apart by their order in the trace (a run's own send may go out just before the
    # wave it settled starts, seed 5).
    judged: dict[str, tuple[Record, Record, str]] = {}
    resent: dict[str, Record] = {}  # run -> its first new generation sent after the take

    def over(run_id: str, take: Record, rendered: Record) -> str | None:
        """Why ``run_id``'s own delivery was over at ``take`` (None: it was not, or unknown)."""
        request, (ended_at, ok) = asked.get(run_id), ended.get(run_id, (take.t_ms + 1, False))
        if request is None or not request.required or not ok or ended_at > rendered.t_ms \
                or any(rendered.seq < seq < take.seq for seq in own_sent.get(run_id, ())):
            return None
        if run_id not in gone.latest:
            return "no own key of it was ever sent"
        why = gone.why(run_id, take.t_ms, released=True)
        return "its own key was refused for good" if why == "refused for good" else None

    for r in of_kinds(trace, (*GivenUp.KINDS, "child.end", "world.rows")):
        kind = r.kind
        if kind == "requester.accept" and is_wake(r.data["key"]):
            key, batch = r.data["key"], batch_of(r.data["key"])
            runs = key_runs(key)
            if (":yield-" not in key or r.data.get("visible_reply")
                    or any(run in private for run in runs)) \
                    and wake_sent.get(batch) == key and batch not in closed:
                rendered = rendered_by[batch]
                for run_id in runs:
                    why = None if run_id in judged else over(run_id, r, rendered)
                    if why is not None:
                        judged[run_id] = (r, rendered, why)
        gone.see(r)
        if kind == "child.end":
            ended[r.data["run_id"]] = (r.t_ms, r.data["status"] == "ok")
        elif kind == "world.operator" and r.data["action"] == "dismiss" and r.data["run_id"]:
            dismissed.setdefault(r.data["run_id"], r.t_ms)
        elif kind == "gateway.send" and is_wake(r.data["key"]):
            wake_sent[batch_of(r.data["key"])] = r.data["key"]
            rendered_by.setdefault(batch_of(r.data["key"]), r)
        elif kind == "gateway.send":
            run_id = r.data["run_id"]
            own_sent.setdefault(run_id, []).append(r.seq)
            before = gone.latest.get(run_id)
            if before is None or before.data["key"] != r.data["key"]:
                if run_id in judged:
                    resent.setdefault(run_id, r)
                gone.sent(r)  # a new generation: its own delivery decides from now on
        elif kind == "child.correction":
            corrected.setdefault(r.data["run_id"], []).append(r.seq)
            receipts.setdefault(r.data["run_id"], []).append(r)
        elif kind == "fault" and _lost(r) and "run_id" in r.data:
            # (A wake's answer names its batch as the run.)
            lost.setdefault(r.data["run_id"], []).append(r.t_ms)
        elif kind == "fault" and r.data.get("kind") == "delay" and "run_id" in r.data \
                and int(r.data.get("delay_ms") or 0) >= ANSWER_MS:
            held.setdefault(r.data["run_id"], []).append((r.t_ms, int(r.data["delay_ms"])))
        elif rejection_class(r) in ("permanent", "sent") and is_wake(r.data.get("key") or ""):
            closed.setdefault(batch_of(r.data["key"]), r.t_ms)
        elif is_delivery_crash(r):
            crashes.append(r)
        elif kind == "world.rows":
            rows = {row["run_id"]: row["delivery_status"] for row in r.data["rows"]}
    violations = []
    for run_id, (take, rendered, why) in judged.items():
        if dismissed.get(run_id, take.t_ms + 1) <= take.t_ms \
                or take.t_ms >= ended[run_id][0] + RETENTION_MS \
                or any(t >= take.t_ms for t in lost.get(take.data["run_id"], ())) \
                or any(t <= take.t_ms <= t + delay
                       for t, delay in held.get(take.data["run_id"], ())) \
                or any(c.seq > rendered.seq and c.t_ms <= take.t_ms for c in crashes) \
                or any(rendered.seq < seq < take.seq for seq in corrected.get(run_id, ())):
            continue
        took = (f"the settle wake {take.data['key']} that {take.actor} took at {take.t_ms} ms "
                f"carried {run_id}'s result ({why} before it)")
        again = resent.get(run_id)
        if again is not None and any(take.seq < seq < again.seq
                                     for seq in corrected.get(run_id, ())):
            continue  # a newer receipt's own delivery (DEL-12) decides from then on
        if again is not None and any(
                c.seq < take.seq and _escaped(c.data.get("result") or "") not in take.data["text"]
                for c in receipts.get(run_id, ())):
            # The wake carried an older receipt than one the producer made before the take (a
            # yield batch's member is frozen as it is handed over): the newer one is owed its
            # own delivery (DEL-12; seed 20305: corrected 14 s after it ended, 12 s before the
            # wake first went out). A wake whose text shows the correction releases it whole.
            continue
        if again is None and run_id in private \
                and any(seq > take.seq for seq in corrected.get(run_id, ())):
            # A private run's newer receipt goes to its parent's turn, not to the gateway: once
            # that hand-off is gone (PRV-3) the new generation closes unsent, its row discarded
            # (seeds 8406, 9884). A public one's is sent on its own (DEL-12), which a row kept
            # suspended never does (a given-up run's correction only updates its payload).
            continue
        if again is not None:
            violations.append(Violation(
                "wake-releases-suspended", "YLD-2",
                f"{took}, yet {run_id} was handed over again as a new generation under "
                f"{again.data['key']} at {again.t_ms} ms with no newer receipt: it was "
                "delivered", (take.seq, again.seq)))
            continue
        status = rows.get(run_id)
        if status is not None and status != "delivered":
            violations.append(Violation(
                "wake-releases-suspended", "YLD-2",
                f"{took}, yet its row reads {status}, not delivered", (take.seq, end.seq)))
    return violations


def _escaped(text: str) -> str:
    """A result as a wake's ``<prompt-data>`` block shows it (FMT-2: ``&`` and ``<`` escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


INVARIANTS = (
    Invariant("wake-releases-suspended", "YLD-2", "safety",
              "A required run that ended ok, whose own delivery was over (its key refused for "
              "good, or none ever sent) when a counted settle wake naming it was taken, ends "
              "delivered and is never sent again as a new generation (a newer receipt aside).",
              wake_releases_suspended),
)
