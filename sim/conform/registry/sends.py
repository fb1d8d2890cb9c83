"""Announce attempts and their sends: each of the model's attempts becomes one answer of the
announce flow OpenClaw's registry calls (acknowledged -> delivered; transient tries spent, an
unanswered send among them -> retryable; permanent -> a permanent failure; part sent before
the error -> the flow rethrows the error with its send evidence, as OpenClaw's does),
taking as long as
the model's attempt took. The row after each attempt's end holds what the trace says: a retry's
attempt count and next attempt time, a delivery, a give-up's status (suspended with its reason,
or failed); and the announce flow was handed the frozen result once per attempt.

The backoff's jitter is the model's: for each retry, the ``Math.random`` value that gives the
model's delay through OpenClaw's own ``resolveAnnounceRetryDelayMs``.
"""

from __future__ import annotations

from typing import Any

from actors.records.retry import JITTER_STEPS, backoff_ms
from sim.conform.registry.model import Expect, Replay
from sim.trace import Record

ENDS = frozenset({"delivery.retry", "delivery.delivered", "delivery.give_up",
                  "delivery.announce_skip"})


def jitter_for(attempt: int, delay_ms: int) -> float:
    """The jitter fraction that gives ``delay_ms`` after ``attempt`` failures (0 when none does:
    the model's waits are OpenClaw's whole backoffs, never cut at the expiry since issue 34, so
    only a mutant's wait falls here; OpenClaw then shows its own)."""
    for step in range(JITTER_STEPS):
        fraction = step / (JITTER_STEPS - 1)
        if backoff_ms(attempt, fraction) == delay_ms:
            return fraction
    return 0.0


def plain(value: Any) -> Any:
    """A trace value as JSON carries it (the model's status enums are their strings)."""
    return getattr(value, "value", value)


class Attempts:
    """The attempts of one run, read record by record in trace order."""

    def __init__(self, run_id: str, replay: Replay) -> None:
        self.run_id = run_id
        self.replay = replay
        self.number = 0
        self.started_at: int | None = None
        self.error: str | None = None
        self.permanent = False
        self.result: str | None = None  # the child's result, once it ended (child_end)
        # A correction the run's next delivery.reopen takes: until then the attempts under way
        # carry the result they began with (seed 148: a correction while the first attempt was
        # out; that attempt's delivery was handed the first answer).
        self.correction: tuple[str | None] | None = None
        # Deliveries a restarted process settled without an attempt of its own (the requester's
        # checkpoint already held the completion): OpenClaw's registry calls its announce flow
        # again for such a row, and the flow finds the completion delivered.
        self.reconciled = 0
        # The delivery process crashed while this run was open: from then on, how often
        # OpenClaw's registry called the announce flow depends on where each crash fell inside
        # an attempt, which the trace does not pin down, so the call count is not compared.
        self.through_crash = False
        self.incarnation = 1  # the delivery process now running (restart.Process sets it)
        self.started_in = 1  # ... and the one that started the attempt under way
        self.redriven = False  # an operator's redrive was taken: compared no further
        self.earlier = 0  # announce calls of the run's earlier delivery generations
        self.given_up: str | None = None  # the status its delivery gave up with, until reopened

    def read(self, record: Record) -> None:
        if self.redriven:
            return
        data = record.data
        if record.kind == "delivery.attempt":
            if data.get("attempt") != self.number or self.started_at is None:
                self.number = int(data.get("attempt", self.number + 1))
                self.started_at = record.t_ms
                self.started_in = self.incarnation
                self.permanent = False
        elif record.kind == "delivery.send_failed":
            error = data.get("error")
            self.error = str(error.get("message")) if isinstance(error, dict) else str(error)
            self.permanent = data.get("class") == "permanent"
        elif record.kind in ENDS:
            self._end(record)
        elif record.kind == "delivery.reopen":
            if self.correction is not None:
                (self.result,) = self.correction
                self.correction = None
            # A correction opened the run's next delivery generation: attempts count from 1.
            # An attempt of the older generation still waiting for its answer never gets one
            # the trace states before the reopen (its late acknowledgement is stale).
            if self.started_at is not None:
                self._answer({"outcome": "hung", "error": None, "durationMs": 0})
            self.earlier = self.calls()
            self.number = 0
            self.reconciled = 0
            self.started_at = None
            self.given_up = None
        elif record.kind in ("delivery.redrive", "delivery.operator_refused"):
            self._redrive(record)
        elif record.kind == "delivery.skip":
            # Not required (or not any more): no announce; the row says so.
            self.replay.check(Expect(self.run_id, record.seq, record.t_ms, record.kind, {
                "status": plain(data.get("reason")), **self._handed()}))

    def correct(self, result: str | None, at_reopen: bool) -> None:
        """A correction's result: the payload from now on, or from the reopen that takes it."""
        if at_reopen:
            self.correction = (result,)
        else:
            self.result = result

    def _handed(self) -> dict[str, int]:
        return {} if self.through_crash else {"handed": self.calls()}

    def _answer(self, attempt: dict[str, Any]) -> None:
        """The announce flow's answer for the attempt under way, tagged with the process that
        made it (the Node end never hands one process's answer to another's call)."""
        self.replay.runs[self.run_id].attempts.append({**attempt,
                                                       "incarnation": self.started_in})

    def calls(self) -> int:
        """How often OpenClaw's registry has called the announce flow for this run so far."""
        return self.earlier + self.number + self.reconciled

    def _redrive(self, record: Record) -> None:
        """An operator's redrive (``handoff``'s answer: ``delivery.redrive`` took it,
        ``delivery.operator_refused`` refused it): OpenClaw's operator retry of the run's task.
        An accepted one starts the next delivery generation, its attempts counted from 1."""
        accepted = record.kind == "delivery.redrive"
        self.replay.steps.append({"t": record.t_ms, "kind": "redrive", "run": self.run_id})
        self.replay.check(Expect(self.run_id, record.seq, record.t_ms, record.kind,
                                 {"redriven": accepted}))
        if accepted:
            # What follows is not compared: OpenClaw's redriven row (pending, its next
            # generation) gets no announce call in this harness, even across a restart
            # (docs/fidelity.md), so the new generation's attempts have nothing to meet.
            self.redriven = True

    def crashed(self) -> None:
        """The delivery process died during the attempt under way (if any): it never answers."""
        self.through_crash = True
        if self.started_at is not None:
            self._answer({"outcome": "crashed", "error": None, "durationMs": 0})
            self.started_at = None

    def _end(self, record: Record) -> None:
        data = record.data
        if record.kind in ("delivery.delivered", "delivery.announce_skip") \
                and self.started_at is None:
            self.reconciled += 1
            self.started_at = record.t_ms
            self.started_in = self.incarnation
        fields: dict[str, Any] = {**self._handed(), "handedResult": self.result}
        if record.kind in ("delivery.delivered", "delivery.announce_skip"):
            outcome = "delivered"
            fields["status"] = "delivered"
        elif record.kind == "delivery.retry":
            outcome = "transient"
            next_at = int(data["next_attempt_at_ms"])
            fields.update(status="pending", attempts=int(data["attempt"]), nextAttemptAt=next_at)
            self.replay.runs[self.run_id].random.append(
                jitter_for(int(data["attempt"]), next_at - record.t_ms))
        else:
            reason = plain(data.get("reason"))
            # Part of the send reached the platform before the error.
            outcome = {"permanent_failure": "permanent",
                       "sent_before_error": "sent"}.get(str(reason), "transient")
            status = plain(data.get("status"))
            fields["status"] = status
            self.given_up = str(status)
            if status == "suspended":
                fields["suspendedReason"] = plain(reason)
        if self.started_at is not None:
            self._answer({"outcome": outcome, "error": self.error,
                          "durationMs": record.t_ms - self.started_at})
            self.started_at = None
        self.replay.check(Expect(self.run_id, record.seq, record.t_ms, record.kind, fields))
