"""The model's observable vocabulary: every trace record an actor emits, as a frozen class.

Like h11's events: each class is one thing that happened, with a ``kind`` (the trace's name for
it) and its fields. An actor hands an event to :meth:`actors.runtime.Port.emit`; the trace keeps
its JSON form (:meth:`Event.to_json`), which is all the simulator's invariants ever read: they
never import this package. :data:`KINDS` lists each kind with the fields it carries, so a test
can check that every kind and field an invariant reads is one the model can emit.

A field named after a Python keyword takes a trailing underscore (``try_``); its JSON name drops it.
``fields`` is a class attribute (the JSON names); no event may have a field called ``fields``.

Owns: the event classes, one module per actor (``sessions``, ``child``, ``delivery``,
``gateway``, ``nesting``) and per protocol feature (``private``, ``batches``), each importing
only ``base`` (the :class:`Event` base and :func:`register`). This package gathers and registers
them, so ``events.ChildEnd`` reads the same from anywhere. Pure: no IO, no shell.
"""

from __future__ import annotations

from actors.events.base import Event, JsonValue, register
from actors.events.batches import (
    BatchFrozen,
    ConversationReply,
    HandedToBatch,
    TurnAnswered,
    WakeClosed,
    WakeDeferred,
    WakeDelivered,
    WakeDispatched,
    WakeRefused,
    WakeRetry,
    WakeTurnPending,
    WaveSettled,
)
from actors.events.child import (
    ChildAborted,
    ChildAttempt,
    ChildConsumers,
    ChildDelta,
    ChildEnd,
    ChildInherited,
    ChildInterrupted,
    ChildMessage,
    ChildResumed,
    ChildStarted,
    ChildToolResult,
    ChildTurnEnd,
)
from actors.events.delivery import (
    AnnounceSkipped,
    AttemptSent,
    ChildCorrected,
    DeliveryBlocked,
    DeliveryDeferred,
    DeliveryDismissed,
    DeliveryExpired,
    DeliveryGaveUp,
    DeliveryRecorded,
    DeliveryRedriven,
    DeliveryReopened,
    DeliveryRetry,
    DeliverySkipped,
    DeliveryStarted,
    FindingsFrozen,
    OperatorRefused,
    RecoveryAttempt,
    RecoveryEnded,
    RunArchived,
    RunCleanedUp,
    SendFailed,
    StaleInput,
    SuspendedBacklog,
)
from actors.events.gateway import (
    CallbackFailed,
    ChannelChunk,
    ChunkFailed,
    GatewayRefused,
    Injected,
    MirrorFailed,
    MirrorQueued,
)
from actors.events.nesting import (
    AbortCascaded,
    LaneQueued,
    LaneStarted,
    RequesterFallback,
    SessionQueued,
    SessionRefused,
    SpawnRefused,
)
from actors.events.private import PrivateClosed, PrivateRefused, PrivateReleased, PrivateRetained
from actors.events.sessions import (
    AbortRequested,
    ActionRefused,
    ArchiveServed,
    CompletionAccepted,
    CompletionDuplicate,
    HistoryServed,
    MirrorRecorded,
    RecoveredAccepted,
    RequestIgnored,
    RestartNoticed,
    RestartNoticeFailed,
    SessionCleaned,
    SessionCompacted,
    SessionLifecycle,
    Spawned,
    StatusChecked,
    StatusServed,
    SteerRequested,
    TurnEnded,
    TurnStarted,
)


def _subclasses(cls: type[Event]) -> list[type[Event]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


# attrs builds a new class for slots; the registry keeps the final ones (they have fields).
EVENT_TYPES: tuple[type[Event], ...] = tuple(
    register(cls) for cls in _subclasses(Event) if "__attrs_attrs__" in cls.__dict__)
KINDS: dict[str, tuple[str, ...]] = {cls.kind: cls.fields for cls in EVENT_TYPES}
assert len(KINDS) == len(EVENT_TYPES), "two event classes share a kind"

__all__ = [
    'EVENT_TYPES',
    'KINDS',
    'AbortCascaded',
    'AbortRequested',
    'ActionRefused',
    'AnnounceSkipped',
    'ArchiveServed',
    'AttemptSent',
    'BatchFrozen',
    'CallbackFailed',
    'ChannelChunk',
    'ChildAborted',
    'ChildAttempt',
    'ChildConsumers',
    'ChildCorrected',
    'ChildDelta',
    'ChildEnd',
    'ChildInherited',
    'ChildInterrupted',
    'ChildMessage',
    'ChildResumed',
    'ChildStarted',
    'ChildToolResult',
    'ChildTurnEnd',
    'ChunkFailed',
    'CompletionAccepted',
    'CompletionDuplicate',
    'ConversationReply',
    'DeliveryBlocked',
    'DeliveryDeferred',
    'DeliveryDismissed',
    'DeliveryExpired',
    'DeliveryGaveUp',
    'DeliveryRecorded',
    'DeliveryRedriven',
    'DeliveryReopened',
    'DeliveryRetry',
    'DeliverySkipped',
    'DeliveryStarted',
    'Event',
    'FindingsFrozen',
    'GatewayRefused',
    'HandedToBatch',
    'HistoryServed',
    'Injected',
    'JsonValue',
    'LaneQueued',
    'LaneStarted',
    'MirrorFailed',
    'MirrorQueued',
    'MirrorRecorded',
    'OperatorRefused',
    'PrivateClosed',
    'PrivateRefused',
    'PrivateReleased',
    'PrivateRetained',
    'RecoveredAccepted',
    'RecoveryAttempt',
    'RecoveryEnded',
    'RequestIgnored',
    'RequesterFallback',
    'RestartNoticeFailed',
    'RestartNoticed',
    'RunArchived',
    'RunCleanedUp',
    'SendFailed',
    'SessionCleaned',
    'SessionCompacted',
    'SessionLifecycle',
    'SessionQueued',
    'SessionRefused',
    'SpawnRefused',
    'Spawned',
    'StaleInput',
    'StatusChecked',
    'StatusServed',
    'SteerRequested',
    'SuspendedBacklog',
    'TurnAnswered',
    'TurnEnded',
    'TurnStarted',
    'WakeClosed',
    'WakeDeferred',
    'WakeDelivered',
    'WakeDispatched',
    'WakeRefused',
    'WakeRetry',
    'WakeTurnPending',
    'WaveSettled',
    'register',
]
