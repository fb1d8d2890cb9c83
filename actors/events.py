"""The model's observable vocabulary: every trace record an actor emits, as a frozen class.

Like h11's events: each class is one thing that happened, with a ``kind`` (the trace's name for
it) and its fields. An actor hands an event to :meth:`actors.runtime.Port.emit`; the trace keeps
its JSON form (:meth:`Event.to_json`), which is all the simulator's invariants ever read: they
never import this module. :data:`KINDS` lists each kind with the fields it carries, so a test can
check that every kind and field an invariant reads is one the model can emit.

A field named after a Python keyword takes a trailing underscore (``try_``); its JSON name drops it.
``fields`` is a class attribute (the JSON names); no event may have a field called ``fields``.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, cast

import attrs

from actors.states import DeliveryStatus, GiveUpReason

JsonValue = Any


class Event:
    """Base of every trace event. :func:`register` gives each class its ``to_json``."""

    __slots__ = ()
    kind: ClassVar[str]
    fields: ClassVar[tuple[str, ...]] = ()  # JSON names, in order

    def to_json(self) -> dict[str, JsonValue]:
        raise NotImplementedError(f"{type(self).__name__} is not registered")


# -- requester sessions ------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Spawned(Event):
    kind: ClassVar[str] = "spawn"
    run_id: str
    child: str
    child_session_key: str
    child_session_id: str | None
    requester: str
    required: bool
    task: str
    turn_run_id: str | None = None  # the requester turn that spawned it (reference §a)
    incarnation: int = 1  # the requester session's incarnation at the spawn


@attrs.frozen(slots=True)
class AbortRequested(Event):
    kind: ClassVar[str] = "abort"
    child: str
    running: bool


@attrs.frozen(slots=True)
class CompletionAccepted(Event):
    """A completion entered the requester's transcript: ``text`` is what its model reads."""

    kind: ClassVar[str] = "requester.accept"
    run_id: str
    key: str
    status: str
    text: str
    # The receipt (DEL-12): its producer end time and delivery generation, and the transcript
    # entry it supersedes ({run_id, key, ended_at} of that reply), if any.
    ended_at: int
    generation: int
    replaces: dict[str, JsonValue] | None
    visible_reply: bool = True  # a batch wake: whether the resumed turn replied visibly


@attrs.frozen(slots=True)
class CompletionDuplicate(Event):
    kind: ClassVar[str] = "requester.duplicate"
    run_id: str
    key: str
    ended_at: int
    why: str  # duplicate (key and end time taken), equal-end or older (DEL-12)


@attrs.frozen(slots=True)
class RecoveredAccepted(Event):
    """Lost-answer recovery's answer entered the requester's transcript (DEL-2)."""

    kind: ClassVar[str] = "requester.recovered"
    run_id: str
    key: str
    text: str


@attrs.frozen(slots=True)
class MirrorRecorded(Event):
    """The session's transcript recorded the tagged mirror of a direct delivery (DEL-8)."""

    kind: ClassVar[str] = "requester.mirror"
    run_id: str
    key: str
    chars: int


@attrs.frozen(slots=True)
class SessionCompacted(Event):
    """The requester session compacted its transcript (DEL-7): ``folded`` entries became one."""

    kind: ClassVar[str] = "requester.compacted"
    folded: int


@attrs.frozen(slots=True)
class HistoryServed(Event):
    kind: ClassVar[str] = "requester.history"
    child: str
    include_tools: bool
    result: dict[str, JsonValue]
    limit: int | None = None  # as asked (the request, not a verdict)


@attrs.frozen(slots=True)
class SessionCleaned(Event):
    """Cleanup deleted a child's live session; its runs' archives stay (FMT-6)."""

    kind: ClassVar[str] = "session.cleanup"
    child: str
    run_id: str
    session_key: str
    deleted: bool


@attrs.frozen(slots=True)
class RequestIgnored(Event):
    """A cleanup or archive read named a child this session has not spawned (yet)."""

    kind: ClassVar[str] = "requester.ignored"
    child: str
    why: str


@attrs.frozen(slots=True)
class ArchiveServed(Event):
    """What the requester read of one run's retained transcript (FMT-6)."""

    kind: ClassVar[str] = "requester.archive"
    child: str
    run_id: str
    session_key: str
    status: str
    reason: str
    retryable: bool
    result: dict[str, JsonValue] | None


@attrs.frozen(slots=True)
class ActionRefused(Event):
    """A session-control action was refused: its caller lacks the permission (DEL-17)."""

    kind: ClassVar[str] = "requester.refused"
    request: int  # the harness's number of the request (0: not numbered)
    action: str
    child: str
    caller: str
    reason: str


@attrs.frozen(slots=True)
class StatusServed(Event):
    """What a status read of a child told the requester: its latest run's states."""

    kind: ClassVar[str] = "requester.status"
    child: str
    run_id: str | None
    outcome: str | None
    delivery: str | None


@attrs.frozen(slots=True)
class TurnStarted(Event):
    kind: ClassVar[str] = "requester.turn"
    turn: str
    turn_run_id: str
    incarnation: int
    reply_mode: str


@attrs.frozen(slots=True)
class TurnEnded(Event):
    """A turn ended: ``how`` is finish, yield (paused until its wake), or abandoned."""

    kind: ClassVar[str] = "requester.turn_end"
    turn_run_id: str
    how: str
    children: list[str]


@attrs.frozen(slots=True)
class StatusChecked(Event):
    kind: ClassVar[str] = "requester.status_check"
    child: str
    run_id: str | None
    status: str  # running, an outcome status, or unknown (never spawned)
    turn_run_id: str | None


@attrs.frozen(slots=True)
class SessionLifecycle(Event):
    """``/new`` (reset) or a delete: the session's new incarnation."""

    kind: ClassVar[str] = "requester.lifecycle"
    what: str
    incarnation: int
    abandoned: list[str]


# -- child runs ----------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class ChildStarted(Event):
    kind: ClassVar[str] = "child.start"
    run_id: str
    child: str
    encoding: str


@attrs.frozen(slots=True)
class ChildMessage(Event):
    """A committed assistant message: its blocks and the text its stream carried."""

    kind: ClassVar[str] = "child.message"
    run_id: str
    step: int
    blocks: list[dict[str, JsonValue]]
    streamed: str
    embedded: bool  # the event carried its stream (V2), rather than V1 chunk events (OUT-10)
    interrupted: bool


@attrs.frozen(slots=True)
class ChildAttempt(Event):
    """A failed model attempt, with the text its stream carried."""

    kind: ClassVar[str] = "child.attempt"
    run_id: str
    step: int
    streamed: str


@attrs.frozen(slots=True)
class ChildDelta(Event):
    """A V1 text chunk, as the session log appended it."""

    kind: ClassVar[str] = "child.delta"
    run_id: str
    step: int
    text: str


@attrs.frozen(slots=True)
class ChildToolResult(Event):
    kind: ClassVar[str] = "child.tool_result"
    run_id: str
    text: str


@attrs.frozen(slots=True)
class ChildTurnEnd(Event):
    kind: ClassVar[str] = "child.turn_end"
    run_id: str
    reason: str
    cause: str | None  # an aborted turn's cause (``parent``, ``disposed``, ...)


@attrs.frozen(slots=True)
class ChildInherited(Event):
    """Events at the start of the child's log that are not its own (OUT-3): one answered turn
    of a fork's parent (``origin`` ``fork``) or of an earlier epoch (``earlier-epoch``)."""

    kind: ClassVar[str] = "child.inherited"
    run_id: str
    origin: str
    text: str
    events: int


@attrs.frozen(slots=True)
class ChildAborted(Event):
    kind: ClassVar[str] = "child.abort"
    run_id: str


@attrs.frozen(slots=True)
class ChildConsumers(Event):
    """What each consumer (in-process reader, activation capture, SDK, ACP) made of the run."""

    kind: ClassVar[str] = "child.consumers"
    run_id: str
    fold: dict[str, JsonValue]  # OUT-2: the incremental fold and the whole-suffix function
    foreground: dict[str, JsonValue]  # OUT-7: the foreground tool result of the run's result
    in_process: dict[str, JsonValue]
    activation: dict[str, JsonValue]
    sdk: dict[str, JsonValue]
    acp: dict[str, JsonValue]


@attrs.frozen(slots=True)
class ChildEnd(Event):
    """The child's own end record: what it wrote to the store as its outcome."""

    kind: ClassVar[str] = "child.end"
    run_id: str
    status: str
    error: str | None
    stop_reason: str | None
    result: str | None
    usage: list[int] | None
    archive: dict[str, JsonValue]  # the store row of the run's retained transcript (FMT-6)


# -- the delivery actor --------------------------------------------------------------------------


@attrs.frozen(slots=True)
class DeliveryStarted(Event):
    kind: ClassVar[str] = "delivery.start"
    incarnation: int


@attrs.frozen(slots=True)
class DeliverySkipped(Event):
    kind: ClassVar[str] = "delivery.skip"
    run_id: str
    reason: DeliveryStatus


@attrs.frozen(slots=True)
class DeliveryReopened(Event):
    """A newer receipt of a run (a correction) opens its next delivery generation (DEL-12)."""

    kind: ClassVar[str] = "delivery.reopen"
    run_id: str
    generation: int
    ended_at: int | None


@attrs.frozen(slots=True)
class ChildCorrected(Event):
    """The producer corrected its result after the end: a newer receipt (DEL-12)."""

    kind: ClassVar[str] = "child.correction"
    run_id: str
    ended_at: int
    result: str | None


@attrs.frozen(slots=True)
class DeliveryDeferred(Event):
    """The run's announcement waits: it has descendants still pending (DEL-6, §c8)."""

    kind: ClassVar[str] = "delivery.defer"
    run_id: str
    pending: int
    recheck_at_ms: int


@attrs.frozen(slots=True)
class FindingsFrozen(Event):
    """The run's findings were rendered and stored with the run for this delivery generation
    (DEL-6): every later send under ``key``, after a restart too, carries the same text."""

    kind: ClassVar[str] = "delivery.findings-frozen"
    run_id: str
    key: str


@attrs.frozen(slots=True)
class AnnounceSkipped(Event):
    """The child replied exactly ANNOUNCE_SKIP: nothing is announced and the obligation is
    recorded as delivered (reference §c1)."""

    kind: ClassVar[str] = "delivery.announce_skip"
    run_id: str


@attrs.frozen(slots=True)
class RunCleanedUp(Event):
    """The run's obligations resolved and its cleanup ran (DEL-16); once per run."""

    kind: ClassVar[str] = "run.cleanup"
    run_id: str
    delivery: str  # the resolved delivery status


@attrs.frozen(slots=True)
class StaleInput(Event):
    """An acknowledgement or rejection for a try that is no longer in flight."""

    kind: ClassVar[str] = "delivery.stale"
    run_id: str
    what: str  # ack | rejection


@attrs.frozen(slots=True)
class AttemptSent(Event):
    kind: ClassVar[str] = "delivery.attempt"
    run_id: str
    key: str
    attempt: int
    try_: int


@attrs.frozen(slots=True)
class DeliveryRecorded(Event):
    """The registry recorded the run as delivered (``duplicate``: the requester had it)."""

    kind: ClassVar[str] = "delivery.delivered"
    run_id: str
    key: str
    duplicate: bool


@attrs.frozen(slots=True)
class SendFailed(Event):
    kind: ClassVar[str] = "delivery.send_failed"
    run_id: str
    error: dict[str, JsonValue]  # the error chain in its JSON form (actors.send_error)
    class_: str
    try_: int


@attrs.frozen(slots=True)
class DeliveryRetry(Event):
    kind: ClassVar[str] = "delivery.retry"
    run_id: str
    attempt: int
    next_attempt_at_ms: int


@attrs.frozen(slots=True)
class DeliveryGaveUp(Event):
    kind: ClassVar[str] = "delivery.give_up"
    run_id: str
    status: DeliveryStatus
    reason: GiveUpReason
    error: str | None


@attrs.frozen(slots=True)
class DeliveryBlocked(Event):
    """The blocked-completion warning (DEL-9): the run, its child session, and the concrete
    error its delivery is blocked on (kept across retries)."""

    kind: ClassVar[str] = "delivery.warning"
    run_id: str
    child_session_key: str
    error: str


@attrs.frozen(slots=True)
class RecoveryAttempt(Event):
    """Lost-answer recovery read the run's transcript (DEL-2); ``found``: an answer was there."""

    kind: ClassVar[str] = "recovery.attempt"
    run_id: str
    attempt: int
    found: bool


@attrs.frozen(slots=True)
class RecoveryEnded(Event):
    """Lost-answer recovery ended: ``recovered`` (the requester has the answer) or
    ``exhausted`` (its attempt bound was reached)."""

    kind: ClassVar[str] = "recovery.end"
    run_id: str
    outcome: str
    attempts: int


# -- the gateway -------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class ChannelChunk(Event):
    """Chunk ``index`` of ``total`` of a completion reached ``channel``: what its user sees."""

    kind: ClassVar[str] = "gateway.chunk"
    channel: str
    session: str
    run_id: str
    key: str
    index: int
    total: int
    text: str
    # DEL-5: the chat and thread within the channel the chunk went to.
    to: str | None = None
    thread: str | None = None


@attrs.frozen(slots=True)
class ChunkFailed(Event):
    """The channel refused or aborted chunk ``index`` of ``total`` (earlier ones were sent)."""

    kind: ClassVar[str] = "gateway.chunk_failed"
    channel: str
    run_id: str
    key: str
    index: int
    total: int
    error: dict[str, JsonValue]


@attrs.frozen(slots=True)
class CallbackFailed(Event):
    """The session confirmed the hand-off, then the receive callback failed (DEL-9)."""

    kind: ClassVar[str] = "gateway.callback_failed"
    run_id: str
    key: str
    error: str


@attrs.frozen(slots=True)
class Injected(Event):
    """The gateway handed an input to a requester session (its lane holds it until confirmed)."""

    kind: ClassVar[str] = "gateway.inject"
    session: str
    run_id: str
    key: str


@attrs.frozen(slots=True)
class MirrorQueued(Event):
    """A direct delivery was confirmed: its mirror waits in the session's lane (DEL-8)."""

    kind: ClassVar[str] = "gateway.mirror_queued"
    session: str
    run_id: str
    key: str


@attrs.frozen(slots=True)
class MirrorFailed(Event):
    """Appending a mirror failed; the delivery it mirrors stays delivered (DEL-8)."""

    kind: ClassVar[str] = "gateway.mirror_failed"
    session: str
    run_id: str
    key: str
    error: str


# -- nesting (docs/nesting.md) -------------------------------------------------------------------


@attrs.frozen(slots=True)
class SpawnRefused(Event):
    """A session's spawn was refused (reference §c15; an invalid private request, PRV-4): nothing
    was registered, nothing runs."""

    kind: ClassVar[str] = "spawn.refused"
    child: str
    requester: str
    reason: str


@attrs.frozen(slots=True)
class SessionRefused(Event):
    """A deleted session refused a completion that was on its way when it was deleted."""

    kind: ClassVar[str] = "requester.gone"
    run_id: str
    key: str
    error: dict[str, JsonValue]


@attrs.frozen(slots=True)
class RequesterFallback(Event):
    """The run's requester session is gone: its completion goes to ``target`` instead (DEL-4);
    ``target`` None means no fallback exists and the completion stays retryable."""

    kind: ClassVar[str] = "delivery.fallback"
    run_id: str
    requester: str
    target: str | None


@attrs.frozen(slots=True)
class AbortCascaded(Event):
    """An aborted run's session cancels its own not-yet-ended children."""

    kind: ClassVar[str] = "abort.cascade"
    session: str
    children: list[str]


@attrs.frozen(slots=True)
class LaneQueued(Event):
    """A child run waits for a free slot of the global maxConcurrent lane."""

    kind: ClassVar[str] = "lane.queued"
    run_id: str
    running: int


@attrs.frozen(slots=True)
class LaneStarted(Event):
    """A queued child run (behind the maxConcurrent lane or its session's earlier run) starts
    now."""

    kind: ClassVar[str] = "lane.started"
    run_id: str


@attrs.frozen(slots=True)
class SessionQueued(Event):
    """A child run was spawned into a session whose earlier run has not ended: it waits behind
    ``behind`` (actors/session_queue.py) and starts with ``lane.started``."""

    kind: ClassVar[str] = "session.queued"
    run_id: str
    child_session_key: str
    behind: str



# -- operator actions on a run's delivery (actors/redrive.py) ----------------------------------


@attrs.frozen(slots=True)
class DeliveryRedriven(Event):
    """An operator redrove a run from its retained payload: its next generation (DEL-16)."""

    kind: ClassVar[str] = "delivery.redrive"
    run_id: str
    request: int
    generation: int
    was: str  # suspended, failed or paused (pending, waiting out a retry backoff)
    ended_at: int | None  # the producer end time of the retained receipt it carries


@attrs.frozen(slots=True)
class DeliveryDismissed(Event):
    """An operator dismissed a given-up delivery: discarded, its payload released."""

    kind: ClassVar[str] = "delivery.dismiss"
    run_id: str
    request: int
    was: str


@attrs.frozen(slots=True)
class OperatorRefused(Event):
    """The registry refused an operator's action on a run, and why (actors/redrive.py)."""

    kind: ClassVar[str] = "delivery.operator_refused"
    run_id: str
    request: int
    action: str
    reason: str


# Event classes kept in their own modules, registered here with the others.
from actors import private_events  # noqa: E402, F401

E = TypeVar("E", bound=Event)


def register(cls: type[E]) -> type[E]:
    """Give an attrs event class its ``to_json``: generated once, as attrs generates ``__init__``,
    so emitting costs one dict display and no reflection. Every class in this module has it; a
    simulator-only event (a benchmark's) applies this as its outer decorator."""
    names = [(f.name, f.name.rstrip("_")) for f in attrs.fields(cast(Any, cls))]
    body = ", ".join(f"{json_name!r}: self.{name}" for name, json_name in names)
    namespace: dict[str, Any] = {}
    exec(f"def to_json(self):\n    return {{{body}}}\n", namespace)
    to_json = namespace["to_json"]
    to_json.__qualname__ = f"{cls.__qualname__}.to_json"
    cls.to_json = to_json  # type: ignore[method-assign]
    cls.fields = tuple(json_name for _, json_name in names)
    return cls


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

# Yield-batch events live in their own module and register themselves there.
from actors import batch_events as _batch_events  # noqa: E402,F401
