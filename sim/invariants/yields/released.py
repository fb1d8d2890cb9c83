"""YLD-2 from the registry's side: once a yield batch's wake is taken, the batch's results count
as delivered (seed 002: after ``sessions_yield`` no single child's cleanup may expire or suspend
them); a member whose own delivery had given up is released from ``suspended`` to ``delivered``
by the wake's receipt of the same run and delivery generation (reference §b, §c12). An unfrozen
wave's wake takes the same receipt rule (docs/fidelity.md).

Restated from what an outsider sees: the spawns, each send the gateway was handed and how it was
refused (``gateway.send``, refusals), what the requester took (``requester.accept``: the wake's
key names its runs, its findings name each one's child session), the producers' corrections
(``child.correction``), the operator's requests, the delivery process's crashes and the
registry's rows when the world stopped (``world.rows``). When a run counted as given up is read
as the DEL-16 oracles read it (``_GivenUp`` in ``sim/invariants/delivery/redrive.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.redrive import _GivenUp
from sim.invariants.index import of_kinds
from sim.invariants.observations import is_delivery_crash
from sim.invariants.private.completion import releases
from sim.trace import Record


def wake_releases_suspended(trace: Sequence[Record]) -> list[Violation]:
    """When the world stops quiescent, a run that ended ok, whose latest own send had been
    refused for good (permanently, or after part of it reached the platform) and never taken,
    and whose result a settle wake its requester then took carried (a yield's wake with a
    visible reply, or a wave's), is recorded ``delivered``: unless a newer generation of it was
    sent since (its own delivery decides then) or an operator dismissed it before the take
    (its payload released, nothing is left to release). A run that did not end ok failed for
    good: only a suspended row is released. Not judged, where the registry cannot know
    better: a correction of the run between the wake's first send (when its findings were
    rendered) and the take (the wake may carry the older receipt, which releases nothing); a
    fault on the way back of that wake's answer; a crash of the delivery process after the
    wake first went out; a give-up by expiry alone (an outsider cannot tell whether a try of
    the run was still out when the wake was taken)."""
    end = trace[-1] if trace else None
    if end is None or end.kind != "world.end" or end.data["reason"] != "quiescent":
        return []
    gone = _GivenUp(releases(trace))
    ok: dict[str, bool] = {}  # run -> whether its run ended ok (only an ok one is suspended)
    dismissed: dict[str, int] = {}  # run -> an operator's first dismissal of it
    corrected: dict[str, list[int]] = {}
    lost: dict[str, list[int]] = {}  # a run or batch -> when an answer of it was held up
    crashes: list[int] = []
    rows: dict[str, str] = {}
    for r in of_kinds(trace, (*_GivenUp.KINDS, "child.end", "world.rows")):
        gone.see(r)
        kind = r.kind
        if kind == "child.end":
            ok[r.data["run_id"]] = r.data["status"] == "ok"
        elif kind == "world.operator" and r.data["action"] == "dismiss" and r.data["run_id"]:
            dismissed.setdefault(r.data["run_id"], r.t_ms)
        elif kind == "gateway.send" and not r.data["key"].startswith("announce:requester-settle:"):
            before = gone.latest.get(r.data["run_id"])
            if before is None or before.data["key"] != r.data["key"]:
                gone.sent(r)  # a new generation: its own delivery decides from now on
        elif kind == "child.correction":
            corrected.setdefault(r.data["run_id"], []).append(r.t_ms)
        elif kind == "fault" and (r.data.get("kind") in ("send-ambiguous", "ack-slow") or (
                r.data.get("kind") == "delay" and r.data.get("message") == "CompletionAck")) \
                and "run_id" in r.data:
            # (A wake's answer names its batch as the run.)
            lost.setdefault(r.data["run_id"], []).append(r.t_ms)
        elif is_delivery_crash(r):
            crashes.append(r.t_ms)
        elif kind == "world.rows":
            rows = {row["run_id"]: row["delivery_status"] for row in r.data["rows"]}
    violations = []
    for run_id, (take, why) in gone.released.items():
        rendered = gone.wakes.rendered_at(take)
        # A yield's wake taken with no visible reply is retried when it needs one (no private
        # member); an outsider cannot tell which, so only a wave's or a visible one is judged.
        needs_reply = ":yield-" in take.data["key"] and not take.data.get("visible_reply")
        if why != "refused for good" or needs_reply or not ok.get(run_id) \
                or dismissed.get(run_id, take.t_ms + 1) <= take.t_ms \
                or any(t >= take.t_ms for t in lost.get(take.data["run_id"], ())) \
                or any(t >= rendered for t in crashes) \
                or any(rendered <= t <= take.t_ms for t in corrected.get(run_id, ())):
            continue
        status = rows.get(run_id)
        if status is not None and status != "delivered":
            violations.append(Violation(
                "wake-releases-suspended", "YLD-2",
                f"{run_id} was given up ({why}) before the settle wake {take.data['key']} that "
                f"{take.actor} took at {take.t_ms} ms carried its result, yet its row reads "
                f"{status}, not delivered", (take.seq, end.seq)))
    return violations


INVARIANTS = (
    Invariant("wake-releases-suspended", "YLD-2", "safety",
              "A run given up (refused for good) whose result a taken settle wake then carried "
              "ends delivered: the batch's results count as delivered (a newer generation "
              "sent since aside).", wake_releases_suspended),
)
