"""The delivery core's vocabulary at its edge: the inputs it takes and the effects it returns.

Kept apart from the transition table (``actors/delivery/table.py``) so that the table module holds
one idea, the state machine; the shell (``actors/delivery/shell.py``) and tests build these values
directly.
"""

from __future__ import annotations

import attrs

from actors import events
from actors.messages import Completion, CompletionAck, SendRejected
from actors.records.run_record import Change, RunRecord, apply

# -- inputs ------------------------------------------------------------------------------------


@attrs.frozen
class RunFinished:
    """A child run ended (the shell read its row from the store)."""

    record: RunRecord

    @property
    def run_id(self) -> str:
        return self.record.run_id


@attrs.frozen
class Restored:
    """A new incarnation found this ended run's delivery still pending in the store."""

    record: RunRecord

    @property
    def run_id(self) -> str:
        return self.record.run_id


@attrs.frozen
class OperatorAsked:
    """An operator's redrive or dismissal of this run (actors/delivery/redrive.py), with the run's
    row as the store holds it (its retained payload), never the core's memory of it."""

    record: RunRecord
    action: str  # actors.delivery.redrive.Action
    request: int

    @property
    def run_id(self) -> str:
        return self.record.run_id


# Timer payloads: they die with the incarnation that set them.


@attrs.frozen
class AckTimeout:
    run_id: str
    token: int


@attrs.frozen
class TryDue:
    run_id: str
    token: int


@attrs.frozen
class AttemptDue:
    run_id: str
    generation: int = 1  # the delivery generation that set it (an older one's is stale)


@attrs.frozen
class BatchClaim:
    """The batch-wake outbox asks for a yielded member's result
    (actors/delivery/wakes/batch_handover.py)."""

    record: RunRecord

    @property
    def run_id(self) -> str:
        return self.record.run_id


Input = (RunFinished | Restored | CompletionAck | SendRejected | AckTimeout | TryDue | AttemptDue
         | OperatorAsked | BatchClaim)

# -- effects -----------------------------------------------------------------------------------


@attrs.frozen
class Persist:
    run_id: str
    change: Change
    # (the record the core changed, the record after the change) when the core applied it
    # itself (:func:`persisted`): a store whose row is that very record takes the result as it
    # stands instead of building it again. Not part of the effect's value.
    known: tuple[RunRecord, RunRecord] | None = attrs.field(default=None, eq=False, repr=False)


def persisted(record: RunRecord, change: Change) -> tuple[RunRecord, Persist]:
    """``record`` after ``change``, and the effect that makes the change durable. A transition
    and the store apply the same change to the same row (the row the core read), so the effect
    carries the result: building a run record is ~5 µs (40 frozen fields), and a store that
    takes it builds ~50 fewer a default-world seed (148 to 101; docs/performance-log.md, wave 10b)."""
    after = apply(record, change)
    return after, Persist(record.run_id, change, (record, after))


@attrs.frozen
class Send:
    requester: str
    completion: Completion


@attrs.frozen
class StartTimer:
    delay_ms: int
    payload: AckTimeout | TryDue | AttemptDue


Effect = Persist | Send | StartTimer | events.Event
