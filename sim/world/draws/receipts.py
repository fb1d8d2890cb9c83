"""The default world's draws and records for receipts and recovery claims (DEL-12, DEL-13).

Some children correct their answer a while after their end (a newer receipt of the same run),
on their own stream so other draws keep still: soon enough that the first receipt is often still
on its way (a delayed or retried send), sometimes after it was delivered. When the seed turns
network delays on, half of those children's first completion is held on its way to the requester
past the correction, so the older receipt arrives after the newer one (out of order).
When the seed turns crashes and unclassified refusals on, a nested child's correction is aimed
at its parent's frozen findings (``aim_at_frozen_findings``, held as it happens by
sim/faults/findings_hold.py).
"""

from __future__ import annotations

import attrs

from actors.messages import ChildSpec
from actors.private.rules import COMPLETION_TARGET_PARENT
from actors.records.run_record import RunRecord
from sim.choices import Chooser
from sim.faults.kinds import FaultKind
from sim.faults.plan import ArmedFault, FaultPlan, TimelineEvent

CORRECTION_SHARE = 0.15
# A nested child corrects more often: its parent's findings were often rendered by then (DEL-6).
NESTED_CORRECTION_SHARE = 0.5
CORRECTION_WITHIN_S = 90
REORDER_SHARE = 0.5
# How much later (at most, in seconds) an aimed nested child corrects its answer.
AIMED_CORRECTION_LATER_S = 600


def draw_correction(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> ChildSpec:
    share = CORRECTION_SHARE if child.parent is None else NESTED_CORRECTION_SHARE
    if not chooser.chance("workload:correction", share):
        return child
    after_s = 1 + chooser.choose("workload:correction", CORRECTION_WITHIN_S)
    if FaultKind.DELAY in plan.rates and chooser.chance("fault:delay:receipt", REORDER_SHARE):
        # The child's first completion message on the network (its first receipt, on its way
        # from the gateway to the requester) is held until after the correction was sent.
        held_ms = 1000 * (after_s + 1 + chooser.choose("fault:delay:receipt", 30))
        plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.DELAY, child=child.id,
                                                   delay_ms=held_ms), 1))
    return attrs.evolve(child, correction_after_ms=1000 * after_s)


def aim_at_frozen_findings(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> int | None:
    """DEL-6 x DEL-12: a nested child's correction lands while its parent's
    announcement (its findings already rendered) waits to be sent again: the parent's first two
    sends are refused with an unclassified error (it backs off) and the delivery process dies a
    few seconds after the correction is due as drawn. Only when the seed turns crashes and
    unclassified refusals on. Returns when to kill the process, or None; on its own stream.
    Drawn instants seldom meet that order (docs/oracles.md): :func:`hold_frozen_findings`
    holds the parent as it happens. Kept beside it for the corners it reaches (a crash in a
    backoff, a refusal of an earlier incarnation's send) and the saved runs that replay them."""
    if (child.parent is None or child.correction_after_ms is None
            or FaultKind.CRASH not in plan.rates or FaultKind.SEND_OTHER not in plan.rates):
        return None
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_OTHER, child=child.parent), 2))
    return (child.spawn_at_ms + child.run_ms + child.correction_after_ms
            + 1000 * (1 + chooser.choose("fault:crash:findings", 10)))


def hold_frozen_findings(chooser: Chooser, plan: FaultPlan, child: ChildSpec,
                         parent: ChildSpec) -> ChildSpec:
    """DEL-6 x DEL-12: a nested child's correction lands while its parent's announcement
    (its findings already rendered and handed over) waits at the gateway to be sent again,
    and the delivery process dies just after it: the restarted process must resend the
    findings as first rendered. Held as it happens (sim/faults/findings_hold.py): the parent's
    sends after the child's end are refused with an unclassified error until the correction,
    then the process dies at its next crash point. Only when the seed turns crashes and
    unclassified refusals on, and for a parent whose announcement a restart keeps (a public
    one it expects; a private hand-off is discarded by a restart, PRV-3)."""
    if (child.correction_after_ms is None or FaultKind.CRASH not in plan.rates
            or FaultKind.SEND_OTHER not in plan.rates or not parent.expects_completion
            or parent.completion_target == COMPLETION_TARGET_PARENT):
        return child
    plan.findings.aim(parent.id, child.id)
    # The parent renders once all its children settled, often minutes after this one ended:
    # the correction comes later too, so it often follows the parent's first rendering.
    later = 1000 * chooser.choose("aim:findings-held", AIMED_CORRECTION_LATER_S + 1)
    return attrs.evolve(child, correction_after_ms=child.correction_after_ms + later)


def row_columns(record: RunRecord) -> dict[str, str | int | None]:
    """A row's recovery claim and saved evidence, as an operator reads them (DEL-13)."""
    return {"generation": record.generation,
            "claim": None if record.claim_phase is None else str(record.claim_phase),
            "evidence": None if record.evidence_kind is None else str(record.evidence_kind),
            "evidence_key": record.evidence_key}
