"""A child run's records: its start, streamed messages and deltas, attempts, tool results, its end.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event, JsonValue

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
class ChildInterrupted(Event):
    """The run was streaming when the Gateway restarted: interrupted where it stood."""

    kind: ClassVar[str] = "child.interrupted"
    run_id: str
    reason: str  # ``gateway-restart`` (reference §a's interruptionReason)


@attrs.frozen(slots=True)
class ChildResumed(Event):
    """Recovery resumed the interrupted run from its transcript (its one recovery turn)."""

    kind: ClassVar[str] = "child.resumed"
    run_id: str
    restart: int


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
