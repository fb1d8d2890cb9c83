"""The operator's desk: redrives and dismissals of a run's delivery, scripted or drawn (DEL-16).

An operator names a child (as a task list shows it); at the instant of the request the desk finds
that child's latest run from what the trace has shown so far (the requester's ``spawn`` records),
records the request as asked (``world.operator``: its number, action, child and run) and sends it
to the registry (``actors/delivery/redrive.py`` decides). A child with no run yet has nothing to act
on: the request is recorded with no run and not sent. The registry may be down at that instant; the
request is then lost, as a real operator's call would fail.

The default world draws, on its own stream, an operator for some children: a redrive (now and
then a dismissal) soon after the child should have ended (when a permanent rejection gave it up
or a retry backoff paused it) or after its 30-minute expiry, and sometimes a second action later
(a redrive of a run delivered meanwhile, or of one dismissed, is refused).

A late action drawn in the expiry's first minute is aimed at the run's give-up itself: OpenClaw
2026.9.6 gives up at the first resume at or past the deadline, a whole backoff after the last
decision (issue 34), an instant the world reads from the store (the driver may read the model;
oracles may not): at the deadline the action goes to the pending retry's due time, so it meets
the give-up (and a delete-mode run's archive) in its instant.
"""

from __future__ import annotations

import itertools

from actors import addresses
from actors.messages import ChildSpec, OperatorRequest
from actors.store.durable import RunStore
from sim.choices import Chooser
from sim.faults.expiry_aim import deadline_ms
from sim.kernel import Kernel

SUB = "workload:operator"
OPERATOR_SHARE = 0.2
DISMISS_SHARE = 0.2
SECOND_SHARE = 0.4
SOON_S = 300  # a first action within this long after the child should have ended ...
LATE_S = (1800, 2700)  # ... or in this span after it, once the expiry may have given it up
LATE_AIM_S = 60  # a late action this soon after the expiry is moved to the give-up's instant
SECOND_WITHIN_S = 900
# After a redrive drawn about a week after a child's end, how long the world still runs: its
# try's 30-minute window and retries, and the requester's answer, fit in it.
LATE_TAIL_MS = 2 * 3600 * 1000


class OperatorDesk:
    def __init__(self, kernel: Kernel, store: RunStore) -> None:
        self.kernel = kernel
        self.store = store
        self._requests = 0
        self._latest: dict[str, str] = {}  # child id -> its latest run id seen so far
        self._seen = 0  # how far the trace was read for spawns
        # How long the world runs for the redrives drawn about a week after a child's end
        # (None: none drawn; the world keeps its own length).
        self.late_until_ms: int | None = None

    def _run_of(self, child: str) -> str | None:
        trace = self.kernel.trace
        # The records not read yet, skipped to in C (indexing the trace is a call a record).
        for r in itertools.islice(trace, self._seen, None):
            if r.kind == "spawn":
                self._latest[r.data["child"]] = r.data["run_id"]
        self._seen = len(trace)
        return self._latest.get(child)

    def _give_up_at(self, run_id: str) -> int | None:
        """When the run's delivery gives up if nothing else happens (read now, at or past its
        deadline): its pending retry's due time, at or past the deadline; None when no retry
        waits (given up already, delivered, or a try in flight)."""
        record = self.store.get(run_id)
        deadline, due = deadline_ms(record), record.next_attempt_at_ms
        if deadline is None or due is None or due < self.kernel.now_ms:
            return None
        return due if due >= deadline else deadline  # before it: look again at the deadline

    def ask(self, at_ms: int, action: str, child: str, aim: bool = False) -> None:
        """At ``at_ms`` the operator asks for ``action`` (redrive, dismiss) on ``child``'s
        latest run; with ``aim``, at that run's give-up instead (read from ``at_ms`` on)."""
        self._requests += 1
        number = self._requests

        def send() -> None:
            run_id = self._run_of(child)
            later = self._give_up_at(run_id) if aim and run_id is not None else None
            if later is not None and later > self.kernel.now_ms:
                self.kernel.at(later, f"{action} {child} (at its give-up)", send)
                return
            self.kernel.emit(addresses.HARNESS, "world.operator", {
                "request": number, "action": action, "child": child, "run_id": run_id})
            if run_id is not None:
                self.kernel.send(addresses.TIMELINE, addresses.DELIVERY,
                                 OperatorRequest(action, run_id, number))

        self.kernel.at(at_ms, f"{action} {child}", send)

    def ask_late(self, at_ms: int, child: str) -> None:
        """A redrive of ``child`` about a week after its end, around its suspended result's
        7-day expiry (reference §c18): the world runs on past its own length until this
        redrive's delivery had room to resolve."""
        self.ask(at_ms, "redrive", child)
        self.late_until_ms = max(self.late_until_ms or 0, at_ms + LATE_TAIL_MS)

    def draw(self, chooser: Chooser, child: ChildSpec) -> None:
        """The default world's operator for ``child``, if any (on its own stream)."""
        if not chooser.chance(SUB, OPERATOR_SHARE):
            return
        ends_ms = child.spawn_at_ms + child.run_ms + (child.correction_after_ms or 0)
        aim = False
        if chooser.chance(SUB, 0.5):
            at_ms = ends_ms + 1000 * (1 + chooser.choose(SUB, SOON_S))
        else:
            offset_s = chooser.choose(SUB, LATE_S[1] - LATE_S[0])
            at_ms, aim = ends_ms + 1000 * (LATE_S[0] + offset_s), offset_s < LATE_AIM_S
        self.ask(at_ms, "dismiss" if chooser.chance(SUB, DISMISS_SHARE) else "redrive",
                 child.id, aim)
        if chooser.chance(SUB, SECOND_SHARE):
            self.ask(at_ms + 1000 * (1 + chooser.choose(SUB, SECOND_WITHIN_S)), "redrive",
                     child.id)
