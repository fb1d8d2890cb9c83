"""Messages between actors (and from the scripted timeline). Small frozen values."""

from __future__ import annotations

import attrs

from actors.permissions import OWNER, Caller
from actors.private.rules import DEFAULT_OPTIONS, SpawnOptions
from actors.records.send_error import SendError
from actors.states import StepFinish, values


@attrs.frozen
class Target:
    """A channel target (where a completion goes: actors/gateway/routing.py). Fields may be
    missing (a channel-only origin, a thread-only hook)."""

    channel: str | None = None
    to: str | None = None
    thread: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {"channel": self.channel, "to": self.to, "thread": self.thread}


@attrs.frozen
class StepSpec:
    """One agent-loop step of a child: what the model streams and how the attempt ends.

    ``finish``: ``auto`` (tool calls if any, else stop), ``stop``, ``tool-calls``,
    ``max-tokens`` (a token-limit cut-off), ``error`` (a failed attempt, retried once), or
    ``stream-error`` (the stream breaks half-way and the turn fails).
    """

    duration_ms: int
    text: str = ""
    reasoning: str = ""
    tool_calls: int = 0
    finish: StepFinish = StepFinish.AUTO
    # The step's reported token usage (input, output); None: the model's usual report (a few
    # hundred in, a quarter of the text's length out). FMT-3/FMT-4 scenarios script it.
    tokens: tuple[int, int] | None = None


STEP_FINISHES = values(StepFinish)


DEFAULT_CORRECTION = "the figures above are now verified."


@attrs.frozen
class ExtraReceipt:
    """A further completion receipt of the same run (DEL-12): the producer writes it
    ``after_ms`` after the run's end, with its own producer end time (absolute, which may be
    older than, equal to or newer than the receipt the registry holds) and reply."""

    after_ms: int
    ended_at_ms: int
    text: str


@attrs.frozen
class ChildSpec:
    """One child run, from the scenario (or the seeded workload) to the actor that runs it:
    which requester spawns it and when, and how its agent loop will behave."""

    id: str
    requester: str  # the spawning session's key
    task: str
    spawn_at_ms: int
    steps: tuple[StepSpec, ...]
    encoding: str = "v2"  # session-log encoding: v2 (embedded streams) or v1 (chunk events)
    timeout_ms: int | None = None
    error: str | None = None  # the failure message of a stream error
    expects_completion: bool = True
    usage_recorded: bool = True  # False: the run settles before its usage is written
    # OUT-3: a fork's log starts with the parent's seeded answer; a continued session's log
    # holds an earlier epoch that answered so. Neither is the child's own output.
    fork_seed: str | None = None
    earlier_epoch: str | None = None
    # FMT-6: the label of the child session key; a later child with the same label reuses the
    # key (a new generation of that session). Default: the child id.
    session: str | None = None
    # A model-route change notice its run reports (terminalReply.modelRouteChange, §a, §c9).
    route_change: str | None = None
    # DEL-6: the id of the child whose run spawns this one (a nested child); its requester is
    # then that child's session. None: spawned by a top-level session.
    parent: str | None = None
    # DEL-17: who asks for the spawn; None: the requester session's owner.
    caller: Caller | None = None
    # DEL-2: the answer reaches the child's transcript but the producer's captured reply is lost
    # (the registry records no result); lost-answer recovery finds it in the transcript.
    answer_lost: bool = False
    # DEL-12: the producer corrects its result this long after its end (a newer receipt), with
    # this text after its answer; None: no correction.
    correction_after_ms: int | None = None
    correction: str = DEFAULT_CORRECTION
    # The requester turn that spawns it (a scenario's [[turns]] id); None: outside any turn.
    turn: str | None = None
    # PRV: completionTarget ("parent": the result goes privately to the spawning turn) and the
    # spawn options that may not be combined with it (checked at spawn time, PRV-4).
    completion_target: str | None = None
    options: SpawnOptions = DEFAULT_OPTIONS
    # DEL-12: further receipts of this run, in the order the producer writes them.
    receipts: tuple[ExtraReceipt, ...] = ()
    # Reference §c18: the spawn's runTimeoutSeconds as asked, in ms (30.9 s is 30900; the
    # deadline floors it to whole seconds, actors/child/deadline.py); None or 0: no deadline.
    run_timeout_ms: int | None = None
    # Reference §c18: the spawn's cleanup mode, "keep" (the default) or "delete" (the registry's
    # sweeper archives the run archive_after_minutes after its end, actors/delivery/sweeper.py).
    cleanup: str = "keep"
    # Issue 36's boundary draws: the world sizes the final answer as its step begins to stream
    # (sim/world/aims.py) so that the run's announce block is the 160,000-character shared
    # cap plus this many characters (-1, 0 or 1); None: the answer as scripted.
    reply_to_cap: int | None = None

    @property
    def run_ms(self) -> int:
        """How long the child would run if nothing stopped it."""
        return sum(step.duration_ms for step in self.steps)


@attrs.frozen
class HistoryRead:
    """The requester reads a child's transcript with ``sessions_history``."""

    child_id: str
    limit: int | None = None
    offset: int | None = None  # None: no offset passed (no paging fields, §c19); 0 is one
    include_tools: bool = False
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class CleanupSession:
    """Cleanup deletes the child's live session; its runs' archives stay retained (FMT-6)."""

    child_id: str
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class Compact:
    """The requester session compacts its transcript (DEL-7): earlier entries fold into a
    summary; each completion input keeps its own turn identity (its key) through it."""


@attrs.frozen
class RunHistoryRead:
    """The requester reads one run's retained transcript from the archive (FMT-6)."""

    child_id: str
    limit: int | None = None
    offset: int | None = None  # None: no offset passed (no paging fields, §c19); 0 is one
    include_tools: bool = False
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class StatusRead:
    """The requester asks for a child run's status (session control, DEL-17)."""

    child_id: str
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class Spawn:
    child: ChildSpec
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0
    # A steer's replacement (reference §c18): the run it replaces, whose place it takes (no
    # spawn limit applies to it).
    replaces: str | None = None


@attrs.frozen
class StartTurn:
    """A requester turn opens (the user wrote to the session)."""

    turn: str


@attrs.frozen
class EndTurn:
    """The open turn ends: ``finish`` (a normal reply) or ``yield`` (``sessions_yield``)."""

    turn: str
    how: str  # actors.yields.turns.TurnEnd


@attrs.frozen
class CheckStatus:
    """The open turn checks a child's status (``subagents`` list/status; consumes nothing)."""

    child_id: str


@attrs.frozen
class ResetSession:
    """``/new`` (``delete=False``) or a deletion of the session entry."""

    delete: bool = False


@attrs.frozen
class NestedSessionDeleted:
    """The world deleted this nested requester's session once its run was over (DEL-4): the
    session kills its child runs that have not ended, delivery suppressed (reference §c17)."""


@attrs.frozen
class SessionActs:
    """What a requester session is asked to do at one instant, in order (one message, so the
    scheduler cannot reorder a turn's start, its spawns and its end among themselves)."""

    acts: tuple[StartTurn | Spawn | CheckStatus | EndTurn | ResetSession, ...]


@attrs.frozen
class BatchReady:
    """The requester froze a yield batch (the outbox row is in the store)."""

    batch_id: str


@attrs.frozen
class TurnSettled:
    """A requester turn finished, yielded or was abandoned by a reset: the delivery actor
    releases or closes the private results it retained for that turn (PRV-5, PRV-2, PRV-3)."""

    turn_run_id: str


@attrs.frozen
class AbortChild:
    child_id: str
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class SteerChild:
    """Steer a running child (reference §c18): its run is aborted without an announce and a
    replacement run, of ``run_ms`` answering ``reply``, starts in the same child session."""

    child_id: str
    run_ms: int = 30_000
    reply: str = "steered answer"
    # DEL-17: who asks (checked against the session's owners) and the harness's request number.
    caller: Caller = OWNER
    request: int = 0


@attrs.frozen
class AbortRun:
    """An aborted run's session cancels the children that run spawned and that have not ended
    (sent by the session that aborted it; docs/nesting.md). ``keep_status``: a kill's cascade,
    whose stopped runs keep their delivery status (a steer's or a reset's record
    ``not_required``)."""

    run_id: str
    keep_status: bool = False


@attrs.frozen
class RunResumed:
    """A run interrupted by a Gateway restart was resumed (reference §c18): its requester
    session owes its conversation the resumed notice (actors/requester/notices.py)."""

    run_id: str
    restart: int  # which restart of the world it was resumed after


@attrs.frozen
class NoticeRetry:
    """The requester's timer: try a failed resumed notice again (no second recovery turn)."""

    run_id: str
    attempt: int  # the attempt this timer makes (2, 3, ...)


@attrs.frozen
class ChildEnded:
    run_id: str


@attrs.frozen
class Completion:
    """A child's result handed to its requester session (the follow-up agent call)."""

    key: str  # idempotency key: announce:v1:<childSessionKey>:<runId>
    run_id: str
    child_session_key: str
    requester: str
    status: str
    text: str  # what the requester's model reads: the rendered announce message
    # DEL-4, DEL-5: the channel target of a follow-up agent call with deliver=true; None: an
    # internal injection only (deliver=false: webchat, a nested requester, no route).
    target: Target | None = None
    # The receipt (DEL-12): the producer's end time of this result and its delivery generation.
    ended_at_ms: int = 0
    generation: int = 1
    # A batch wake (reference §c9): the yielded turn run it resumes, and its source tool
    # (``subagent_settle``: an internal call, never copied to a channel).
    turn_run_id: str | None = None
    source_tool: str | None = None
    # PRV-1: private input of the spawning session only (never sent to a channel), bound to
    # this incarnation of the requester session (PRV-3; None: not bound).
    private: bool = False
    incarnation: int | None = None
    # A batch wake's dispatch (its outbox's token) or a run's try (its try token; 0: none):
    # echoed by its answer, so that the late answer of an earlier dispatch or try on the same
    # key is told from this one's (§c17).
    dispatch: int = 0


@attrs.frozen
class RecoveredAnswer:
    """Lost-answer recovery (DEL-2) hands a silent run's answer, found in its transcript, to the
    requester session (an internal injection under the run's ``:recovered`` key)."""

    key: str
    run_id: str
    child_session_key: str
    requester: str
    status: str
    text: str  # the announce block with the recovered answer
    # Its receipt (DEL-12): the run's end time; the ``:recovered`` key is a reply of its own.
    ended_at_ms: int = 0
    generation: int = 1


@attrs.frozen
class TranscriptMirror:
    """The tagged transcript mirror of a direct delivery: what the channel received (DEL-8)."""

    key: str
    run_id: str
    text: str


@attrs.frozen
class CompletionAck:
    key: str
    run_id: str
    accepted: bool  # False: the requester had already recorded this key (source-delivery fact)
    # The receive callback failed after the session confirmed the hand-off (DEL-9): the
    # completion is still delivered; this is only its bookkeeping error.
    callback_error: str | None = None
    # A batch wake's answer: whether the resumed turn replied visibly, and whether the turn it
    # was meant to resume is gone (the session was reset or deleted: requester_abandoned).
    visible_reply: bool = True
    abandoned: bool = False
    # ... or whether the session was busy in another turn (requester_turn_pending): the wake
    # waits and tries again, spending no attempt (reference §b, §c11).
    turn_pending: bool = False
    dispatch: int = 0  # the answered Completion's ``dispatch``


@attrs.frozen
class SendRejected:
    """The gateway failed to hand the completion over. Nothing reached the requester's
    transcript; the chain says whether part of the send reached the platform before the error
    (then another try could duplicate it)."""

    key: str
    run_id: str
    error: SendError
    # The requester session that refused it (a deleted one, DEL-4); None: the gateway did (on a
    # session's word only for a private call whose expected session had changed, PRV-3). The
    # same key may be on its way to a fallback session too, whose mirror lane it still holds.
    session: str | None = None
    dispatch: int = 0  # the refused Completion's ``dispatch``


@attrs.frozen
class OperatorRequest:
    """An operator's action on one run's delivery, sent to the registry
    (actors/delivery/redrive.py): ``redrive`` (send it again from its retained payload, as a new
    generation) or ``dismiss`` (discard a given-up delivery and release its payload). ``request``
    numbers it."""

    action: str
    run_id: str
    request: int
