"""Gateway restarts as the harness makes them (reference §c18): the whole Gateway process goes
down for a while and comes back. The delivery actor dies where it waits (as a scripted ``crash``)
and restarts when the Gateway is back; every child run streaming at that instant is interrupted
(actors/child/restart.py) and, once the Gateway is back, resumed from its transcript, or ended
``error`` when its execution context was lost.

What the restart lost is a fault, decided here and recorded as asked (``world.gateway-restart``:
when the Gateway is back, the runs whose context is lost, how many resumed notices will fail),
never read back from the model: a scenario names the children whose context is lost, the default
world draws it per interrupted run on a stream of its own (``aim:restart``). Each failed
notice attempt is recorded as it strikes (``world.notice-fail``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from actors import addresses
from actors.child.restart import RestartGate
from actors.mutants import MUTANT_RESTART_NOTICE_SKIPPED
from actors.store.durable import RunStore
from sim.choices import Chooser
from sim.faults.expiry_aim import deadline_ms
from sim.faults.plan import FaultPlan, TimelineEvent
from sim.kernel import Kernel

# The stream the default world's restart draws are made on (sim/world/draws/lifecycle.py).
RESTART_STREAM = "aim:restart"


class RestartDesk:
    """Schedules the world's Gateway restarts and fails the resumed notices it was told to."""

    def __init__(self, kernel: Kernel, store: RunStore, plan: FaultPlan, chooser: Chooser,
                 mutants: frozenset[str]) -> None:
        self.kernel, self.store, self.plan, self.chooser = kernel, store, plan, chooser
        self.gate = RestartGate(notice_fails=self._notice_fails,
                                skip_notices=MUTANT_RESTART_NOTICE_SKIPPED in mutants)
        self._failures_left = 0
        plan.expiry_aim.crash_for = self.crash_delivery
        plan.expiry_aim.deadline_of = lambda run_id: deadline_ms(store.get(run_id))

    def crash_delivery(self, at_ms: int, down_ms: int) -> None:
        """Kill the delivery process alone at ``at_ms`` where it waits; it is back ``down_ms``
        later (sim/faults/expiry_aim.py aims it; a no-op while it is down or busy)."""
        def crash() -> None:
            self.plan.restart_after_ms = down_ms
            if not self.kernel.crash_parked(addresses.DELIVERY):
                self.plan.restart_after_ms = None

        self.kernel.at(at_ms, "crash delivery (aimed at a deadline)", crash)

    def schedule(self, at_ms: int, down_ms: int, lost_children: Sequence[str] = (),
                 notice_fails: int = 0, lost_share: float = 0.0) -> None:
        """The Gateway restarts at ``at_ms`` and is back ``down_ms`` later. The runs whose
        context is lost: those of ``lost_children`` interrupted, and (drawn) each other
        interrupted run with chance ``lost_share``. The next ``notice_fails`` resumed-notice
        attempts fail."""
        self.kernel.at(at_ms, "gateway restart", functools.partial(
            self._restart, down_ms, tuple(lost_children), notice_fails, lost_share))

    def scripted(self, event: TimelineEvent) -> None:
        """A scenario's ``gateway-restart`` timeline event."""
        assert event.restart_after_ms is not None  # the loader gives it a default
        self.schedule(event.at_ms, event.restart_after_ms, event.lost, event.notice_fails)

    def _restart(self, down_ms: int, lost_children: tuple[str, ...], notice_fails: int,
                 lost_share: float) -> None:
        kernel = self.kernel
        running = [r for r in self.store.each_run()
                   if r.started_at_ms is not None and r.ended_at_ms is None]
        lost = [r.run_id for r in running if r.child_id in lost_children
                or (lost_share > 0 and self.chooser.chance(RESTART_STREAM, lost_share))]
        back_ms = kernel.now_ms + down_ms
        self._failures_left += notice_fails
        kernel.emit(addresses.HARNESS, "world.gateway-restart", {
            "back_ms": back_ms, "lost": lost, "notice_fails": notice_fails})
        # The delivery process goes down with the Gateway and comes back with it (if it was
        # already down, it comes back on its own schedule).
        self.plan.restart_after_ms = down_ms
        if not kernel.crash_parked(addresses.DELIVERY, "gateway-restart"):
            self.plan.restart_after_ms = None
        self.gate.restart(back_ms, lost)

    def _notice_fails(self, run_id: str) -> bool:
        if self._failures_left <= 0:
            return False
        self._failures_left -= 1
        self.kernel.emit(addresses.HARNESS, "world.notice-fail", {"run_id": run_id})
        return True

