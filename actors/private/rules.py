"""Private parent completion (``completionTarget: "parent"``, PRV-1..8): the pure rules.

A private child's result goes back to the very requester turn and session incarnation that
spawned it, as private input of that session (never to a channel):

* **Spawn-time validation (PRV-4).** Only hidden, native, one-shot runs may complete privately:
  :func:`spawn_refusal` names every forbidden option a request combines with it, in the
  reference's spelling (§c10), or any target other than ``"parent"``.
* **Retention (PRV-5, PRV-7).** While the spawning turn is open the finished result is retained:
  no announce runs and no deadline runs. A normal finish of that turn releases it and starts its
  30-minute window; a yield hands it to the turn's batch (the batch wake owns it).
* **Binding (PRV-3).** The hand-off is bound to the requester's incarnation at spawn (its session
  id and lifecycle revision, one number here): once the session was reset (``/new``), replaced
  or deleted, the result is closed as ``completion_handoff_unavailable`` and nothing is sent.
* **Stable input (PRV-8).** The hand-off leaves out the changing usage statistics (the stats line:
  runtime, tokens, cost), so a retried hand-off carries exactly the same text.

Everything here is pure: the delivery core asks :func:`private_hold` what to do with a private
run, the requester shell asks :func:`spawn_refusal` before it registers one.
"""

from __future__ import annotations

import enum

import attrs

from actors.records.retry import COMPLETION_EXPIRY_MS
from actors.yields.turns import TurnState

COMPLETION_TARGET_PARENT = "parent"
# The delivery result's reason when the bound requester incarnation is gone (reference §a, §c10).
HANDOFF_UNAVAILABLE = "completion_handoff_unavailable"
# The window a released private result has, counted from its release (PRV-7, reference §c9).
PRIVATE_WINDOW_MS = COMPLETION_EXPIRY_MS


class Runtime(enum.StrEnum):
    NATIVE = "native"
    ACP = "acp"


class SpawnMode(enum.StrEnum):
    RUN = "run"  # one-shot
    SESSION = "session"  # a persistent session


@attrs.frozen
class SpawnOptions:
    """The ``sessions_spawn`` options that decide whether a run may complete privately (the
    others a spawn carries live on :class:`actors.messages.ChildSpec`)."""

    runtime: Runtime = Runtime.NATIVE
    collect: bool = False  # a collector run never announces
    visible: bool = False
    thread: bool = False
    mode: SpawnMode = SpawnMode.RUN

    @property
    def is_default(self) -> bool:
        return self == SpawnOptions()


DEFAULT_OPTIONS = SpawnOptions()


def spawn_refusal(completion_target: str | None, options: SpawnOptions,
                  expects_completion: bool) -> str | None:
    """Why ``sessions_spawn`` refuses this request before dispatch, or None (PRV-4). Without a
    completion target nothing is refused here: private completion never changes the default
    completion mode."""
    if completion_target is None:
        return None
    if completion_target != COMPLETION_TARGET_PARENT:
        return (f'completionTarget must be "{COMPLETION_TARGET_PARENT}" '
                f'(got "{completion_target}")')
    forbidden = []
    if options.runtime is Runtime.ACP:
        forbidden.append('runtime "acp"')
    if options.collect:
        forbidden.append("collect: true")
    if options.visible:
        forbidden.append("visible: true")
    if options.thread:
        forbidden.append("thread: true")
    if options.mode is SpawnMode.SESSION:
        forbidden.append('mode: "session"')
    if not expects_completion:
        forbidden.append("expectsCompletionMessage: false")
    if not forbidden:
        return None
    return (f'completionTarget "{COMPLETION_TARGET_PARENT}" cannot be combined with '
            f"{', '.join(forbidden)}: only hidden, native, one-shot runs complete privately")


class Hold(enum.StrEnum):
    """What the delivery core does with a finished private run."""

    RETAIN = "retain"  # the spawning turn is open: keep the result, run no deadline
    RELEASE = "release"  # hand it off privately; its window starts at the release
    BATCH = "batch"  # the turn yielded: the batch wake owns it
    CLOSE = "close"  # the bound incarnation is gone: completion_handoff_unavailable


def private_hold(turn: TurnState | None, bound: int, current: int | None) -> Hold:
    """What the spawning turn (None: spawned outside any turn) and the requester's incarnation
    say about a finished private result. The binding is checked first: a result is never passed
    to another incarnation of its requester session (a reset bumps the incarnation: a new
    session id and lifecycle revision), neither released nor handed to a batch (PRV-3).
    ``current`` is None when the session's entry is deleted."""
    if current != bound or turn is TurnState.ABANDONED:
        return Hold.CLOSE
    if turn is TurnState.OPEN:
        return Hold.RETAIN
    if turn is TurnState.YIELDED:
        return Hold.BATCH
    return Hold.RELEASE


def window_start_ms(turn_settled_at_ms: int, ended_at_ms: int) -> int:
    """A result ready when its turn settles is released then; one that finishes later is
    released as it finishes (the turn no longer holds it). The window starts at the release."""
    return max(turn_settled_at_ms, ended_at_ms)


def window_deadline_ms(window_started_at_ms: int) -> int:
    """The released result's delivery deadline: its window counts from the release, never from
    the child's end, so waiting for the spawning turn used none of it (PRV-7)."""
    return window_started_at_ms + PRIVATE_WINDOW_MS
