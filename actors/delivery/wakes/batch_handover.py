"""How a child's own delivery hands its result to a yielded batch (reference §b: ended,
undelivered members get the disposition ``intentional_non_delivery``: the batch owns delivery).

Part of the delivery core (``actors/delivery/table.py`` mixes it in): at every decision point of a
member's own delivery (its end, a restore, the next attempt or try, a failed try) the core asks
whether a yield froze it into a batch; if so it stops, records the hand-over, and forgets the
run, so no expiry, backoff or cleanup of that one child can run under the batch (YLD-2). A try
already out is left to its answer: an acknowledgement delivers it individually, anything else
hands it over. The outbox (``actors/delivery/wakes/batch_wake.py``) may also claim a member
whose delivery is only waiting (:class:`~actors.delivery.edge.BatchClaim`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from actors.delivery.edge import Persist
from actors.events import batches as batch_events
from actors.records.run_record import HandedToBatch, RunRecord


class BatchHandover:
    """Handlers of the delivery core for :class:`BatchClaim` and the hand-over step."""

    _active: dict[str, Any]
    _probe: Callable[[str], None]
    _batch_of: Callable[[str], str | None]

    def _owned_by(self, record: RunRecord) -> str | None:
        return self._batch_of(record.run_id)

    def _batch_takes(self, active: Any) -> str | None:
        """The batch that takes this run's result now: none while its last try went
        unanswered (the requester may hold it; only an answer can tell)."""
        return None if active.ambiguous else self._owned_by(active.record)

    def unowned(self, run_id: str) -> bool:
        """Whether a :class:`BatchClaim` of this run is refused whatever the run's state: no
        open batch owns its result (a public sibling in a private batch keeps its own delivery,
        PRV-5; a wave's members were never frozen). Every handler below refuses such a claim
        with no effect and no probe, so the outbox's shell need not ask: it re-claims each
        unsettled member after every message of the delivery actor, and in a big tree one such
        member waiting out its backoff was asked tens of thousands of times (docs/performance-log.md,
        wave 13d)."""
        return self._batch_of(run_id) is None

    def sending(self, run_id: str) -> bool:
        """Whether the run's own delivery is still deciding (a try out, or unanswered)."""
        active = self._active.get(run_id)
        return active is not None and (active.waiting == "ack" or active.ambiguous)

    def in_flight(self, run_ids: Sequence[str]) -> list[bool]:
        """:meth:`sending` of each run, with no Python call per run (a batch look reads it for
        every member to tell whether anything changed since its last look)."""
        get = self._active.get
        return [(active := get(run_id)) is not None
                and (active.waiting == "ack" or active.ambiguous) for run_id in run_ids]

    def _hand_over(self, record: RunRecord, batch_id: str) -> list[Any]:
        self._active.pop(record.run_id, None)
        self._probe("delivery.handed-to-batch")
        if record.generation > 1:
            self._probe("delivery.correction-handed-to-batch")
        return [Persist(record.run_id, HandedToBatch()),
                batch_events.HandedToBatch(record.run_id, batch_id)]

    def _claimed(self, active: Any, event: Any, now_ms: int) -> list[Any]:
        """Waiting between tries or attempts: nothing is out, so it is handed over now."""
        assert active is not None
        batch_id = self._batch_takes(active)
        if batch_id is None:
            return []  # not a member (a stale claim), or its last try is unanswered
        self._probe("delivery.claimed-while-waiting")
        return self._hand_over(active.record, batch_id)

    def _claim_later(self, active: Any, event: Any, now_ms: int) -> list[Any]:
        return []  # a try is out: its answer decides (delivered, or handed over)

    def _claim_idle(self, active: Any, event: Any, now_ms: int) -> list[Any]:
        """Nothing in flight: a member that ended (its end not yet seen here) and was never
        attempted is handed over at once; its end, when it comes, finds it owned."""
        record = event.record
        batch_id = self._owned_by(record)
        if batch_id is None or record.ended_at_ms is None or record.attempt_count > 0 \
                or record.delivery_disposition is not None:
            return []
        self._probe("delivery.claimed-before-end-seen")
        return self._hand_over(record, batch_id)
