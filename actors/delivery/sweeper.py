"""The sweeper of suspended results (reference §c18): a suspended delivery keeps its payload for
7 days counted from its suspension; then the sweeper discards it (``expired``), and a later
redrive delivers nothing (actors/delivery/redrive.py refuses it). A redrive before that starts the
next generation as usual, and a later suspension starts a new 7 days.

The sweeper never prunes to relieve pressure: from 25 suspended rows it only warns (again when
the count changes). Long virtual spans stay cheap: there is no periodic tick; one timer is armed
for the earliest due time, and a new incarnation re-arms it from the store's rows.

:class:`Sweeper` is the pure core (due times, the warning); :class:`SweeperShell` wires it to the
delivery actor's port and store.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import ClassVar

import attrs

from actors import events
from actors.delivery.edge import Effect, Persist
from actors.delivery.store import DeliveryStore
from actors.mutants import MUTANT_RETENTION_FROM_END
from actors.records.run_record import Change, Expired, GaveUp, RunRecord
from actors.runtime import Port
from actors.states import DeliveryStatus

# SUBAGENT_SUSPENDED_DELIVERY_RETENTION_MS: 7 days.
RETENTION_MS = 7 * 24 * 3600 * 1000
# From this many suspended rows OpenClaw warns (and prunes nothing).
BACKLOG_WARNING = 25


@attrs.frozen
class SweepDue:
    """The sweeper's timer, armed for ``at_ms``. Housekeeping: a world whose only work left is
    such timers past its end is quiescent (sim/kernel.py)."""

    at_ms: int
    housekeeping: ClassVar[bool] = True


class Sweeper:
    """Which suspended deliveries are due to expire, and when to wake next. Pure."""

    def __init__(self, from_run_end: bool = False) -> None:
        self._from_run_end = from_run_end  # the mutant: counted from the run's end
        self._suspended: dict[str, tuple[int, int]] = {}  # run -> (suspended at, due)
        self._due: list[tuple[int, str]] = []  # (due, run), a heap; stale entries are skipped
        self.armed_at: int | None = None
        self._warned: int | None = None

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._suspended

    def note(self, record: RunRecord) -> None:
        """``record`` as its row now stands: tracked while it is suspended."""
        run_id, since = record.run_id, record.suspended_at_ms
        if record.delivery_status != DeliveryStatus.SUSPENDED or since is None:
            self._suspended.pop(run_id, None)
            return
        start = since
        if self._from_run_end and record.ended_at_ms is not None:
            start = record.ended_at_ms  # the bug: the run's end, not the suspension
        due = start + RETENTION_MS
        if self._suspended.get(run_id) != (since, due):
            self._suspended[run_id] = (since, due)
            heapq.heappush(self._due, (due, run_id))

    def expire(self, now_ms: int, row: Callable[[str], RunRecord]) -> list[Effect]:
        """The suspended deliveries due by ``now_ms``, discarded as expired. Each one's row is
        read again first: another actor may have written it since (a requester's reset)."""
        effects: list[Effect] = []
        due = self._due
        while due and due[0][0] <= now_ms:
            at, run_id = heapq.heappop(due)
            held = self._suspended.get(run_id)
            if held is None or held[1] != at:
                continue  # redriven, dismissed or suspended again since
            del self._suspended[run_id]
            stored = row(run_id)
            if stored.delivery_status != DeliveryStatus.SUSPENDED \
                    or stored.suspended_at_ms != held[0]:
                continue
            effects += [Persist(run_id, Expired(now_ms)),
                        events.DeliveryExpired(run_id, held[0])]
        return effects

    def next_wake(self, now_ms: int) -> int | None:
        """The delay to arm a timer for, when the earliest due time is earlier than the armed
        one (None: the armed timer serves)."""
        due = self._due
        while due and self._suspended.get(due[0][1], (0, -1))[1] != due[0][0]:
            heapq.heappop(due)  # stale
        if not due or (self.armed_at is not None and self.armed_at <= due[0][0]):
            return None
        self.armed_at = due[0][0]
        return max(0, self.armed_at - now_ms)

    def fired(self, at_ms: int) -> bool:
        """Whether a timer for ``at_ms`` is the one armed (an earlier-armed one replaced it)."""
        if at_ms != self.armed_at:
            return False
        self.armed_at = None
        return True

    def warning(self) -> int | None:
        """The suspended count to warn about: from 25 rows, once per count."""
        count = len(self._suspended)
        if count < BACKLOG_WARNING or count == self._warned:
            return None
        self._warned = count
        return count


class SweeperShell:
    """The sweeper inside the delivery actor: fed every change the actor persists, woken by its
    own timer."""

    def __init__(self, port: Port, store: DeliveryStore, mutants: frozenset[str]) -> None:
        self.port, self.store = port, store
        self.core = Sweeper(MUTANT_RETENTION_FROM_END in mutants)

    def restore(self) -> None:
        """A new incarnation: every suspended row as the store holds it."""
        rows = self.store.suspended_rows()
        if rows:
            self.port.probe("delivery.sweeper-restored")
        for record in self.store.get_many([run_id for run_id, _ in rows]):
            self.core.note(record)
        self.arm()

    def persisted(self, run_id: str, change: Change) -> None:
        """A change the actor just made durable: a suspension starts its 7 days; a redrive, a
        dismissal or an expiry ends them."""
        if isinstance(change, GaveUp) or (run_id in self.core and hasattr(change,
                                                                          "delivery_status")):
            self.core.note(self.store.get(run_id))

    def due(self, message: SweepDue, perform: Callable[[Iterable[Effect]], None]) -> None:
        if not self.core.fired(message.at_ms):
            return
        effects = self.core.expire(self.port.now_ms, self.store.get)
        if effects:
            self.port.probe("delivery.suspended-expired")
        perform(effects)

    def arm(self) -> None:
        """After each message: wake at the earliest due time; warn of a big backlog."""
        delay = self.core.next_wake(self.port.now_ms)
        if delay is not None:
            at = self.core.armed_at
            self.port.set_timer(delay, SweepDue(self.port.now_ms + delay),
                                lambda: self.core.armed_at == at)
        count = self.core.warning()
        if count is not None:  # (no probe: the default world's eight children cannot reach 25)
            self.port.emit(events.SuspendedBacklog(count))
