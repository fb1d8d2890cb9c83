"""The registry's sweeper (reference §c18): it discards suspended results after 7 days and
archives delete-mode runs.

*Retention.* A suspended delivery keeps its payload for 7 days counted from its suspension; then
the sweeper discards it (``expired``), and a later redrive delivers nothing (actors/delivery/
redrive.py refuses it). A redrive before that starts the next generation as usual, and a later
suspension starts a new 7 days. Nothing is pruned to relieve pressure: from 25 suspended rows
the sweeper only warns (again when the count changes).

*Archiving.* A run spawned with cleanup ``delete`` is archived at its end + archiveAfterMinutes
(0: never; a ``keep`` run never is), and never while its required completion is pending: one due
then waits until its delivery resolves. Archiving deletes the run's live session (unless a newer
run of that session owns it now) and keeps its archive, which reads still reach (FMT-6).

Long virtual spans stay cheap: there is no periodic tick; one timer is armed for the earliest due
time, and a new incarnation re-arms it from the store's rows.

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
from actors.mutants import MUTANT_ARCHIVE_WHILE_PENDING, MUTANT_RETENTION_FROM_END
from actors.records.retry import RETENTION_MS
from actors.records.run_record import Archived, Change, CleanedUp, Expired, GaveUp, RunRecord
from actors.runtime import Port
from actors.states import DeliveryStatus

# From this many suspended rows OpenClaw warns (and prunes nothing).
BACKLOG_WARNING = 25
EXPIRE, ARCHIVE = "expire", "archive"


@attrs.frozen
class SweepDue:
    """The sweeper's timer, armed for ``at_ms``. Housekeeping: a world whose only work left is
    such timers past its end is quiescent (sim/kernel.py)."""

    at_ms: int
    housekeeping: ClassVar[bool] = True


class Sweeper:
    """Which suspended deliveries are due to expire and which runs to archive, and when to wake
    next. Pure."""

    def __init__(self, from_run_end: bool = False, archive_after_ms: int = 0,
                 archive_pending: bool = False) -> None:
        self._from_run_end = from_run_end  # the mutant: counted from the run's end
        self.archive_after_ms = archive_after_ms
        self.archive_pending = archive_pending  # the mutant: archived at its deadline anyway
        self._suspended: dict[str, tuple[int, int]] = {}  # run -> (suspended at, due)
        self._archiving: dict[str, int] = {}  # run -> its archive deadline
        self._waiting: set[str] = set()  # archive deadline passed, its completion pending
        self._due: list[tuple[int, str, str]] = []  # (due, run, what), a heap; stale skipped
        self.armed_at: int | None = None
        self._warned: int | None = None

    def __contains__(self, run_id: str) -> bool:
        return run_id in self._suspended or run_id in self._waiting

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
            heapq.heappush(self._due, (due, run_id, EXPIRE))

    def note_archive(self, record: RunRecord, now_ms: int) -> None:
        """A delete-mode run whose delivery resolved (its cleanup ran), or one waiting for that:
        archived at its end + archiveAfterMinutes, or now when that is past."""
        run_id = record.run_id
        if not self.archive_after_ms or record.cleanup_mode != "delete" \
                or record.archived_at_ms is not None or record.ended_at_ms is None \
                or run_id in self._archiving:
            return
        self._waiting.discard(run_id)
        due = max(record.ended_at_ms + self.archive_after_ms, now_ms)
        self._archiving[run_id] = due
        heapq.heappush(self._due, (due, run_id, ARCHIVE))

    def due(self, now_ms: int, row: Callable[[str], RunRecord]) -> list[tuple[str, RunRecord]]:
        """What is due by ``now_ms``: (``expire`` or ``archive``, the run's row as stored now).
        Each row is read again first: another actor may have written it since (a requester's
        reset); a run whose completion is pending again waits to be archived."""
        found: list[tuple[str, RunRecord]] = []
        due = self._due
        while due and due[0][0] <= now_ms:
            at, run_id, what = heapq.heappop(due)
            if what == EXPIRE:
                held = self._suspended.get(run_id)
                if held is None or held[1] != at:
                    continue  # redriven, dismissed or suspended again since
                del self._suspended[run_id]
                stored = row(run_id)
                if stored.delivery_status == DeliveryStatus.SUSPENDED \
                        and stored.suspended_at_ms == held[0]:
                    found.append((EXPIRE, stored))
                continue
            if self._archiving.get(run_id) != at:
                continue
            del self._archiving[run_id]
            stored = row(run_id)
            if stored.archived_at_ms is not None:
                continue
            if stored.owes and not self.archive_pending:
                self._waiting.add(run_id)  # archived once its delivery resolves
                continue
            found.append((ARCHIVE, stored))
        return found

    def next_wake(self, now_ms: int) -> int | None:
        """The delay to arm a timer for, when the earliest due time is earlier than the armed
        one (None: the armed timer serves)."""
        due = self._due
        while due and not self._live(due[0]):
            heapq.heappop(due)  # stale
        if not due:
            return None
        # A due time already past (a new incarnation restoring rows that fell due while the
        # process was down) is served now: the timer is armed for the instant it fires, which
        # is what its message carries (seed 19368: armed for the past, it never matched).
        wake = max(due[0][0], now_ms)
        if self.armed_at is not None and self.armed_at <= wake:
            return None
        self.armed_at = wake
        return wake - now_ms

    def _live(self, entry: tuple[int, str, str]) -> bool:
        at, run_id, what = entry
        if what == EXPIRE:
            return self._suspended.get(run_id, (0, -1))[1] == at
        return self._archiving.get(run_id) == at

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

    def __init__(self, port: Port, store: DeliveryStore, mutants: frozenset[str],
                 archive_after_ms: int = 0) -> None:
        self.port, self.store = port, store
        self.core = Sweeper(MUTANT_RETENTION_FROM_END in mutants, archive_after_ms,
                            MUTANT_ARCHIVE_WHILE_PENDING in mutants)
        self.archives = archive_after_ms > 0

    def restore(self) -> None:
        """A new incarnation: every suspended row, and every delete-mode run not archived yet
        whose delivery resolved, as the store holds them."""
        rows = self.store.suspended_rows()
        if rows:
            self.port.probe("delivery.sweeper-restored")
        for record in self.store.get_many([run_id for run_id, _ in rows]):
            self.core.note(record)
        if self.archives:
            for record in self.store.get_many(self.store.archive_candidates()):
                self.core.note_archive(record, self.port.now_ms)
        self.arm()

    def ended(self, record: RunRecord) -> None:
        """A run's end reached the registry: only the bug archives from here, before its
        completion resolved."""
        if self.archives and self.core.archive_pending:
            self.core.note_archive(record, self.port.now_ms)

    def persisted(self, run_id: str, change: Change) -> None:
        """A change the actor just made durable: a suspension starts its 7 days; a redrive, a
        dismissal or an expiry ends them; a delete-mode run's cleanup (its delivery resolved)
        starts its archive deadline."""
        if isinstance(change, GaveUp) or (run_id in self.core and hasattr(change,
                                                                          "delivery_status")):
            record = self.store.get(run_id)
            self.core.note(record)
            if self.archives and not record.owes:
                self.core.note_archive(record, self.port.now_ms)  # a wait is over
        elif self.archives and isinstance(change, CleanedUp):
            self.core.note_archive(self.store.get(run_id), self.port.now_ms)

    def due(self, message: SweepDue, perform: Callable[[Iterable[Effect]], None]) -> None:
        if not self.core.fired(message.at_ms):
            return
        now, effects = self.port.now_ms, list[Effect]()
        for what, record in self.core.due(now, self.store.get):
            run_id = record.run_id
            if what == "expire":
                self.port.probe("delivery.suspended-expired")
                effects += [Persist(run_id, Expired(now)),
                            events.DeliveryExpired(run_id, record.suspended_at_ms or 0)]
                continue
            key = record.child_session_key
            latest = self.store.latest_run(key)
            deleted = False
            if latest is None or latest.run_id == run_id:
                deleted = self.store.delete_session(key)  # first: an archive mark means done
            else:
                self.port.probe("delivery.archive-session-reused")  # a newer run's session
            if record.delivery_status != DeliveryStatus.DELIVERED:
                self.port.probe("delivery.archived-undelivered")
            if now > (record.ended_at_ms or 0) + self.core.archive_after_ms:
                self.port.probe("delivery.archive-waited")  # its completion resolved late
            effects += [Persist(run_id, Archived(now)), events.RunArchived(run_id, key, deleted)]
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
