"""Lost-answer recovery (DEL-2, seed 002): a pure core beside the delivery state machine.

A required run that ended ok but answered exactly ``NO_REPLY`` or nothing does not satisfy its
requester: the requester gets ``(no output)`` and, once that hand-off is recorded delivered, the
normal lost-answer recovery starts. Each recovery attempt reads the run's retained transcript from
the store (the child's stored session, reference §c4: the complete final answer of the exact run)
for a visible final answer the captured reply missed; one that is found is handed to the
requester session as an internal injection under the run's ``:recovered`` key (the session
records a key once, so a resend after a lost answer or a restart never reaches it twice).

Bounded as the reference bounds a requester recovery (the batch wake of §c11): at most
:data:`RECOVERY_ATTEMPTS` attempts, the later ones 30 s and 120 s after the one before; an
attempt that finds nothing, or whose hand-off is refused or unanswered, leads to the next, and
the last one ends the recovery ``exhausted``. The attempt count is durable (its own store table,
written before each attempt), so a restarted delivery actor resumes the recovery where it was
and never exceeds the bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from actors import events
from actors.messages import CompletionAck, RecoveredAnswer, SendRejected
from actors.records import retry
from actors.records.keys import recovery_key
from actors.records.run_record import RunRecord
from actors.states import OutcomeStatus

RECOVERY_ATTEMPTS = 3
# The wait before attempt n+1 after attempt n (the batch wake's retry delays, §c11).
RECOVERY_WAITS_MS = (30_000, 120_000)
# The known bug (a mutant) ignores the bound; this cap only keeps such a run finite.
UNBOUNDED_CAP = 12
RECOVERED = "recovered"
EXHAUSTED = "exhausted"


def silent(text: str | None) -> bool:
    """No visible answer: nothing, blank text, or an exact NO_REPLY (DEL-2, FMT-3)."""
    return text is None or text.strip() in ("", "NO_REPLY")


def needs_recovery(record: RunRecord) -> bool:
    """A required run that ended ok without a visible answer: its requester read (no output)."""
    return (record.required and record.outcome_status == OutcomeStatus.OK
            and silent(record.result_text))


def final_answer(messages: Sequence[Any]) -> str | None:
    """The run's visible final answer in its transcript (reference §c4, read forward): a user
    message opens a turn and clears it, an assistant message with text makes that text the
    answer, one that calls a tool clears it, an empty one (a token-limit cut-off) leaves it;
    tool results never count."""
    answer: str | None = None
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "user":
            answer = None  # a new turn: an older turn's answer is never replayed
            continue
        if message.get("role") != "assistant":
            continue
        blocks = [b for b in message.get("content") or () if isinstance(b, dict)]
        if any(b.get("type") == "tool-call" for b in blocks):
            answer = None
            continue
        text = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        if text.strip():
            answer = text
    return None if silent(answer) else answer


# -- timers, and the effect the shell performs on the recovery table ---------------------------


@attrs.frozen
class RecoveryDue:
    run_id: str
    attempt: int


@attrs.frozen
class RecoveryTimeout:
    run_id: str
    attempt: int


@attrs.frozen
class RecoveryWrite:
    """Make the recovery's attempt count (and, once it ends, its outcome) durable."""

    run_id: str
    attempts: int
    outcome: str | None = None


@attrs.frozen
class RecoveryTimer:
    delay_ms: int
    payload: RecoveryDue | RecoveryTimeout


RecoveryEffect = RecoveryWrite | RecoveryTimer | RecoveredAnswer | events.Event


@attrs.define
class _Open:
    """A recovery in progress: only the run's identity (its obligation to the requester is
    resolved, so its full text stays in the store until an attempt needs it, DEL-16)."""

    run_id: str
    child_session_key: str
    attempt: int  # attempts made so far


class RecoveryCore:
    """``find_answer(child_session_key, run_id)`` reads the run's transcript from the store;
    ``load(run_id)`` reads its full record from there (the reads of full text recovery needs);
    ``render(record)`` makes the announce block of a recovered answer."""

    def __init__(self, find_answer: Callable[[str, str], str | None],
                 load: Callable[[str], RunRecord], render: Callable[[RunRecord], str],
                 probe: Callable[[str], None], unbounded: bool = False,
                 short: bool = False) -> None:
        self._find_answer = find_answer
        self._load = load
        self._render = render
        self._probe = probe
        # ``short``: the off-by-one mutant, one attempt under the bound.
        self._bound = UNBOUNDED_CAP if unbounded else RECOVERY_ATTEMPTS - short
        self._open: dict[str, _Open] = {}

    def start(self, record: RunRecord, attempts_done: int = 0) -> list[RecoveryEffect]:
        """Start (or, after a restart, resume) the recovery of ``record``'s lost answer."""
        if record.run_id in self._open:
            return []
        self._open[record.run_id] = _Open(record.run_id, record.child_session_key,
                                          attempts_done)
        if attempts_done >= self._bound:
            return self._end(record.run_id, EXHAUSTED)
        return self.due(RecoveryDue(record.run_id, attempts_done + 1))

    def due(self, timer: RecoveryDue) -> list[RecoveryEffect]:
        run = self._open.get(timer.run_id)
        if run is None or timer.attempt != run.attempt + 1:
            return []  # ended, or a timer of an earlier attempt
        run.attempt = timer.attempt
        self._probe("delivery.recovery-attempted")
        answer = self._find_answer(run.child_session_key, run.run_id)
        effects: list[RecoveryEffect] = [
            RecoveryWrite(run.run_id, run.attempt),
            events.RecoveryAttempt(run.run_id, run.attempt, answer is not None)]
        if answer is None:
            return effects + self._next(run)
        self._probe("delivery.payload-reloaded")
        record = attrs.evolve(self._load(run.run_id), result_text=answer)
        key = recovery_key(record.child_session_key, record.run_id)
        status = str(record.outcome_status or OutcomeStatus.UNKNOWN)
        return [*effects,
                RecoveredAnswer(key, record.run_id, record.child_session_key, record.requester,
                                status, self._render(record),
                                ended_at_ms=record.receipt_at_ms or 0),
                RecoveryTimer(retry.ANNOUNCE_TIMEOUT_MS, RecoveryTimeout(record.run_id,
                                                                         run.attempt))]

    def acked(self, ack: CompletionAck) -> list[RecoveryEffect]:
        if ack.run_id not in self._open:
            return []  # a late or repeated acknowledgement
        self._probe("delivery.answer-recovered")
        if self._open[ack.run_id].attempt == RECOVERY_ATTEMPTS:
            self._probe("delivery.recovered-on-last-attempt")  # one under the bound (issue 36)
        return self._end(ack.run_id, RECOVERED)

    def failed(self, message: SendRejected | RecoveryTimeout) -> list[RecoveryEffect]:
        run = self._open.get(message.run_id)
        if run is None or (isinstance(message, RecoveryTimeout)
                           and message.attempt != run.attempt):
            return []
        self._probe("delivery.recovery-send-failed")
        return self._next(run)

    def _next(self, run: _Open) -> list[RecoveryEffect]:
        if run.attempt >= self._bound:
            self._probe("delivery.recovery-bound-reached")
            return self._end(run.run_id, EXHAUSTED)
        wait = RECOVERY_WAITS_MS[min(run.attempt, len(RECOVERY_WAITS_MS)) - 1]
        return [RecoveryTimer(wait, RecoveryDue(run.run_id, run.attempt + 1))]

    def _end(self, run_id: str, outcome: str) -> list[RecoveryEffect]:
        run = self._open.pop(run_id)
        return [RecoveryWrite(run_id, run.attempt, outcome),
                events.RecoveryEnded(run_id, outcome, run.attempt)]
