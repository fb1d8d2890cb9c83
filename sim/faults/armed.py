"""The scripted faults a plan holds armed, indexed so that an opportunity looks only at its own.

Every message on the network and every crash point asks the plan whether an armed fault of its
kind (for its child, actor, crash point) takes it. A flat list made each question scan every
armed fault: in a big world, where corrections and refusals arm faults per child, that was a
fifth of a 8,000-child run and grew with the square of the children (docs/performance-log.md).
Faults are kept by (kind, child) in the order they were armed; a question looks at the bucket
of its child and the bucket of faults for any child, and takes the first match in arming order,
exactly as the scan of the list did.
"""

from __future__ import annotations

import attrs

from actors.permissions import Caller
from actors.records.send_error import SendError


@attrs.frozen
class TimelineEvent:
    """One entry of a scenario's scripted timeline: a fault to arm, or a world event (an abort,
    a history read) at ``at_ms``."""

    at_ms: int
    fault: str  # a FaultKind a timeline can script, or a world event (abort, history-read)
    child: str | None = None
    actor: str | None = None
    point: str | None = None  # crash: a CrashPoint
    count: int = 1
    error: SendError | None = None  # send faults: the error chain the gateway fails with
    delay_ms: int = 0
    restart_after_ms: int | None = None  # crash: how long the actor stays down
    limit: int | None = None  # history-read: sessions_history parameters
    offset: int | None = None  # None: no offset passed (no paging fields, §c19); 0 is one
    include_tools: bool = False
    caller: Caller | None = None  # world events: who asks (DEL-17); None: the session's owner
    # steer: the replacement run's time and answer (reference §c18)
    run_ms: int = 30_000
    reply: str | None = None
    # gateway-restart: the children whose execution context is lost, the notices that fail
    lost: tuple[str, ...] = ()
    notice_fails: int = 0


@attrs.define
class ArmedFault:
    """A scripted fault waiting for its opportunity (the next matching message or crash point);
    ``remaining`` counts down from the event's ``count``."""

    event: TimelineEvent
    remaining: int


class ArmedFaults:
    def __init__(self) -> None:
        self._order = 0
        # (kind, child or None) -> {arming order: fault}, in arming order.
        self._buckets: dict[tuple[str, str | None], dict[int, ArmedFault]] = {}
        # How many faults are still armed, per kind that has any: most opportunities (every
        # message, every crash point: ~300 a default-world seed) find none armed at all, or
        # none of their kind, and look no further.
        self._armed: dict[str, int] = {}

    def append(self, fault: ArmedFault) -> None:
        key = (str(fault.event.fault), fault.event.child)
        self._order += 1
        self._buckets.setdefault(key, {})[self._order] = fault
        self._armed[key[0]] = self._armed.get(key[0], 0) + 1

    def __len__(self) -> int:
        return sum(len(bucket) for bucket in self._buckets.values())

    def take(self, kind: str, child: str | None = None, actor: str | None = None,
             point: str | None = None) -> TimelineEvent | None:
        """The first armed fault (in arming order) that this opportunity matches, counted down
        and dropped once spent; None when none matches."""
        if not self._armed or str(kind) not in self._armed:
            return None
        found: tuple[int, dict[int, ArmedFault]] | None = None
        keys = [(str(kind), None)] if child is None else [(str(kind), None), (str(kind), child)]
        for key in keys:
            bucket = self._buckets.get(key)
            if not bucket:
                continue
            for order, fault in bucket.items():
                event = fault.event
                if (event.actor is None or event.actor == actor) and \
                        (event.point is None or event.point == point):
                    if found is None or order < found[0]:
                        found = (order, bucket)
                    break
        if found is None:
            return None
        order, bucket = found
        fault = bucket[order]
        fault.remaining -= 1
        if fault.remaining <= 0:
            del bucket[order]
            self._armed[str(kind)] -= 1
            if not self._armed[str(kind)]:
                del self._armed[str(kind)]
        return fault.event
