"""How a child's own delivery hands its result to a yielded batch (reference §b: ended,
undelivered members get the disposition ``intentional_non_delivery``: the batch owns delivery).

Plain functions of the delivery core's state (``actors/delivery/core.py``), which its table and
send path call by reference: at every decision point of a
member's own delivery (its end, a restore, the next attempt or try, a failed try) the core asks
whether a yield froze it into a batch; if so it stops, records the hand-over, and forgets the
run, so no expiry, backoff or cleanup of that one child can run under the batch (YLD-2). A try
already out is left to its answer: an acknowledgement delivers it individually, anything else
hands it over. The outbox (``actors/delivery/wakes/batch_wake.py``) may also claim a member
whose delivery is only waiting (:class:`~actors.delivery.edge.BatchClaim`).
"""

from __future__ import annotations

from typing import Any

from actors.delivery.core import Core
from actors.delivery.edge import Persist
from actors.events import batches as batch_events
from actors.records.run_record import HandedToBatch, RunRecord


def owned_by(core: Core, record: RunRecord) -> str | None:
    return core._batch_of(record.run_id)


def batch_takes(core: Core, active: Any) -> str | None:
    """The batch that takes this run's result now: none while its last try went
    unanswered (the requester may hold it; only an answer can tell)."""
    return None if active.ambiguous else owned_by(core, active.record)


def hand_over(core: Core, record: RunRecord, batch_id: str) -> list[Any]:
    core._active.pop(record.run_id, None)
    core._probe("delivery.handed-to-batch")
    if record.generation > 1:
        core._probe("delivery.correction-handed-to-batch")
    return [Persist(record.run_id, HandedToBatch()),
            batch_events.HandedToBatch(record.run_id, batch_id)]


def claimed(core: Core, active: Any, event: Any, now_ms: int) -> list[Any]:
    """Waiting between tries or attempts: nothing is out, so it is handed over now."""
    assert active is not None
    batch_id = batch_takes(core, active)
    if batch_id is None:
        return []  # not a member (a stale claim), or its last try is unanswered
    core._probe("delivery.claimed-while-waiting")
    return hand_over(core, active.record, batch_id)


def claim_later(core: Core, active: Any, event: Any, now_ms: int) -> list[Any]:
    return []  # a try is out: its answer decides (delivered, or handed over)


def claim_idle(core: Core, active: Any, event: Any, now_ms: int) -> list[Any]:
    """Nothing in flight: a member that ended (its end not yet seen here) and was never
    attempted is handed over at once; its end, when it comes, finds it owned."""
    record = event.record
    batch_id = owned_by(core, record)
    if batch_id is None or record.ended_at_ms is None or record.attempt_count > 0 \
            or record.delivery_disposition is not None:
        return []
    core._probe("delivery.claimed-before-end-seen")
    return hand_over(core, record, batch_id)
