"""A requester session's records: spawns, completions it accepted, its turns, history and archive
reads, refusals of its actions."""

from __future__ import annotations

from typing import ClassVar

import attrs

from actors.events.base import Event, JsonValue

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
    """The session's answer to a kill of its child: ``running`` whether it knows the child,
    ``killed`` whether that child's latest run had not ended and was killed (reference §c18:
    a kill of an ended run answers ``killed: false`` and changes nothing)."""

    kind: ClassVar[str] = "abort"
    child: str
    running: bool
    killed: bool


@attrs.frozen(slots=True)
class SteerRequested(Event):
    """The session's answer to a steer of its child (reference §c18): ``killed`` whether the
    child's latest run had not ended and was aborted (no announce); if so, the replacement
    run's spawn in the same child session follows this answer."""

    kind: ClassVar[str] = "steer"
    child: str
    running: bool
    killed: bool


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
    offset: int | None = None  # as asked: None when no offset was passed (not 0)
    request: int = 0  # the harness's number of the request (``world.action``; 0: not numbered)


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
    request: int = 0  # the harness's number of the request (``world.action``; 0: not numbered)


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


@attrs.frozen(slots=True)
class RestartNoticed(Event):
    """The requester's conversation read the resumed notice of a run interrupted by a Gateway
    restart (reference §c18): ``text`` as read; ``attempt`` the notice attempt that landed
    (a completion arriving first pays the notice just before it: ``with_completion``)."""

    kind: ClassVar[str] = "requester.restart-notice"
    run_id: str
    restart: int
    text: str
    attempt: int
    with_completion: bool


@attrs.frozen(slots=True)
class RestartNoticeFailed(Event):
    """An attempt to give the requester's conversation the resumed notice failed: it is kept
    as a debt and tried again later."""

    kind: ClassVar[str] = "requester.restart-notice-failed"
    run_id: str
    attempt: int
    retry_in_ms: int
