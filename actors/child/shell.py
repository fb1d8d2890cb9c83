"""A child run's Trio shell: an agent loop that streams steps under virtual time.

The child runs one turn of steps. Each step streams reasoning, text and tool-call deltas spread
evenly over the step's duration, and ends the way a real model attempt ends (stop, tool calls, a
token-limit cut-off, a failed attempt that is retried, or a stream error). The session events are
the ones the real loop appends (``actors.child.agent_loop``), so the situation of the
specification's case 000 (a tool-call-only step cut off at its token limit leaves an empty,
usage-only message) happens on its own.

Cancelling the run's scope (owned by the requester's nursery) aborts the child; the chunks that
were streamed before that instant are fed to the loop first, so the interrupted message or attempt
holds exactly what a real stream would have delivered. A run that outlives its timeout is disposed
of the same way and ends as ``timeout``.

The producer writes its outcome to the store: status from the runtime (ok / error / timeout), the
result text by the output rule through the in-process result reader, and the real stop reason.
"""

from __future__ import annotations

import attrs
import trio

from actors import addresses, events
from actors.child.agent_loop import AgentLoop, Encoding, StepOutcome
from actors.child.consumers import consumer_views
from actors.child.consumers.turn import SubagentResult
from actors.child.deadline import budget_ms, run_timeout_budget_ms
from actors.child.frozen import FROZEN_RESULT_MAX_BYTES, cap_frozen_result, utf8_size
from actors.child.logs import SessionHeader, child_owned, last_epoch
from actors.child.output import (
    ContentBlock,
    JsonObject,
    final_output,
    last_assistant_message,
    text_of,
)
from actors.child.receipts import later_receipts
from actors.child.restart import LOST_CONTEXT_ERROR, RestartGate
from actors.child.session_log import Attempt, SessionLog
from actors.child.sizing import ReplySizer, sized
from actors.child.steps import KILLED_ERROR as KILLED_ERROR
from actors.child.steps import step_chunks, token_usage, tool_events, transcript_messages
from actors.child.store import ChildStore
from actors.messages import ChildEnded, ChildSpec, StepSpec
from actors.mutants import (
    MUTANT_FAILED_RESULT_REPLAYED,
    MUTANT_LAST_ASSISTANT_MESSAGE,
    MUTANT_QUEUE_START_EARLY,
    MUTANT_STOP_REASON_COMPLETED,
)
from actors.nesting.lane import Lane, LaneGrant
from actors.nesting.session_queue import SessionGrant, SessionQueue
from actors.records.run_record import RunStarted
from actors.runtime import Port
from actors.states import OutcomeStatus, StepFinish

# A result within a byte of the frozen cap (reference §c14): the probe each size fires.
_FROZEN_EDGES = {FROZEN_RESULT_MAX_BYTES - 1: "child.result-one-under-frozen-cap",
                 FROZEN_RESULT_MAX_BYTES: "child.result-at-frozen-cap",
                 FROZEN_RESULT_MAX_BYTES + 1: "child.result-one-over-frozen-cap"}


async def run_child(
    port: Port, spec: ChildSpec, run_id: str, child_key: str, store: ChildStore,
    scope: trio.CancelScope, mutants: frozenset[str] = frozenset(), lane: Lane | None = None,
    queued: bool = False, sessions: SessionQueue | None = None, session_queued: bool = False,
    restarts: RestartGate | None = None, sizer: ReplySizer | None = None,
) -> None:
    port.emit(events.ChildStarted(run_id, spec.id, spec.encoding))
    session, loop, seed_length = _open_session(port, spec, run_id)
    started = port.now_ms
    # Its own budget and its spawn's runTimeoutSeconds deadline, whichever comes first (§c18).
    budget = budget_ms(spec.timeout_ms, spec.run_timeout_ms, mutants)
    if spec.run_timeout_ms == 0:
        port.probe("child.run-timeout-zero")  # asked with 0: no deadline
    # Gateway restarts interrupt its streaming (§c18).
    gate = restarts or RestartGate()
    run = _Run(port, spec, run_id, session, loop, budget, started, session_queued, gate, sizer)

    with scope, gate.guard() as lost:
        await _wait_for_slot(run, store, lane, queued, MUTANT_QUEUE_START_EARLY in mutants)
        await _run_steps(run)
    aborted = scope.cancelled_caught
    if lost.caught:  # recovery found its execution context gone (reference §c18)
        run.context_lost = True
        session.append(loop.cancel("disposed"))
    if aborted:
        _abort(run)

    result, output = _read_result(run, seed_length, aborted, mutants)
    status, error, text, stop_reason = _outcome(run, result, output, aborted, mutants)
    if run.timed_out:
        port.probe("child.timeout")
        _probe_run_timeout(port, store, run_id, spec, budget)
    _probe_result(port, session.events, output, status, text, stop_reason)
    ended_ms = _record_end(run, store, child_key, status, error, text, stop_reason, mutants)
    port.send(addresses.DELIVERY, ChildEnded(run_id))
    if lane is not None:  # the run ended: its lane slot frees (a later correction holds none)
        successor = lane.leave(run_id)
        if successor is not None:
            port.send(successor, LaneGrant())
    if sessions is not None:  # and its session: the next run queued in it starts
        successor = sessions.leave(child_key, run_id)
        if successor is not None:
            port.send(successor, SessionGrant())
    if status is OutcomeStatus.OK:
        await later_receipts(port, store, run_id, spec, text, ended_ms, mutants)


@attrs.define(eq=False)
class _Run:
    """One child run as it streams: what the steps of :func:`run_child` share."""

    port: Port
    spec: ChildSpec
    run_id: str
    session: SessionLog
    loop: AgentLoop
    budget: int | None
    started: int
    session_queued: bool  # still waiting for its session's earlier run to end
    gate: RestartGate  # the world's Gateway restarts (actors/child/restart.py)
    sizer: ReplySizer | None  # the world's final-answer sizing (actors/child/sizing.py)
    state: Attempt = attrs.field(factory=Attempt)
    timed_out: bool = False
    retried: bool = False
    context_lost: bool = False  # a restart's recovery found its execution context gone

    def feed_until(self, now: int) -> None:
        """Feed the chunks of the current attempt whose streaming instant has come."""
        # Counted in locals (nothing the loop calls reads the attempt), stored on the way out.
        state, loop, session = self.state, self.loop, self.session
        chunks, fed, t0_ms, duration = state.chunks, state.fed, state.t0_ms, state.duration_ms
        total, duration = len(chunks), max(1, duration)
        try:
            while fed < total:
                at = t0_ms + duration * (fed + 1) // total
                if at > now:
                    break
                logged = loop.chunk(chunks[fed], at)
                if logged:  # V2 logs a chunk with its attempt, not on its own
                    session.append(logged)
                fed += 1
        finally:
            state.fed = fed

    async def stream(self, step: StepSpec, n: int, attempt: int, fraction: float = 1.0) -> None:
        """Stream the attempt's chunks over its duration (only ``fraction`` of it, when the
        stream is going to break); return early when the run's timeout comes first."""
        state, port, budget = self.state, self.port, self.budget
        state.chunks = step_chunks(step, f"{self.run_id}-s{n}a{attempt}")
        state.fed, state.t0_ms, state.duration_ms = 0, port.now_ms, step.duration_ms
        remaining = round(step.duration_ms * fraction)
        if budget is not None:
            remaining = min(remaining, self.started + budget - port.now_ms)
        await self.gate.sleep(port, self.run_id, self.spec.requester,
                              self.spec.expects_completion, max(0, remaining), self.feed_until,
                              self.paused)
        self.feed_until(port.now_ms)

    def paused(self, down_ms: int) -> None:
        """The Gateway was down this long: no run time passed (its clock and deadline move)."""
        self.started += down_ms
        self.state.t0_ms += down_ms


def _open_session(port: Port, spec: ChildSpec, run_id: str
                  ) -> tuple[SessionLog, AgentLoop, int | None]:
    """The run's session log and agent loop, with what it inherits (a fork's seed, an earlier
    epoch, OUT-3); and the seed's length (None: no fork)."""
    session = SessionLog(port, run_id)
    encoding = Encoding(spec.encoding)
    loop = AgentLoop(encoding=encoding, id_prefix=f"{run_id}-msg")
    seed_length = None
    if spec.fork_seed is not None:
        parent = AgentLoop(encoding=encoding, id_prefix=f"{run_id}-parent-msg")
        session.inherit("fork", spec.fork_seed, _answered_turn(parent, spec.fork_seed))
        seed_length = len(session.events)
        session.append([{"type": "session/end-seed", "data": {}}])
    if spec.earlier_epoch is not None:
        session.inherit("earlier-epoch", spec.earlier_epoch,
                        _answered_turn(loop, spec.earlier_epoch))
        # The new input that wakes the idle child opens this epoch.
        session.append([{"type": "agent/inbox/spliced", "data": {"inserted": [
            {"role": "user", "content": [{"type": "text", "text": spec.task}]}]}}])
    return session, loop, seed_length


async def _wait_for_slot(run: _Run, store: ChildStore, lane: Lane | None, queued: bool,
                         start_early: bool = False) -> None:
    """Wait for its session's earlier run to end, then for a slot of the lane; once either
    waited, the run starts now (``start_early``: the mutant that records it as it begins to
    wait)."""
    port, run_id = run.port, run.run_id
    waiting = queued or run.session_queued
    if waiting and start_early:
        store.apply(run_id, RunStarted(port.now_ms))
        port.emit(events.LaneStarted(run_id))
    if run.session_queued:
        # Waiting for the session's earlier run to end (actors/nesting/session_queue.py); then
        # for a slot of the lane, which it did not hold while it waited.
        await port.receive()
        run.session_queued = False
        queued = lane is not None and not lane.enter(run_id, port.name)
        if queued:
            assert lane is not None
            port.probe("child.lane-queued-after-session")
            port.emit(events.LaneQueued(run_id, len(lane.running)))
    if queued:
        # Waiting for a slot of the maxConcurrent lane (its timeout starts with the run).
        await port.receive()
    if waiting:
        run.started = port.now_ms
        if not start_early:
            store.apply(run_id, RunStarted(run.started))
            port.emit(events.LaneStarted(run_id))


async def _run_steps(run: _Run) -> None:
    """The run's one turn of steps, streamed; a stream error, a failed retry or the timeout
    ends it early."""
    port, spec, session, loop, state = run.port, run.spec, run.session, run.loop, run.state
    session.append(loop.begin_turn())
    for n, step in enumerate(spec.steps, start=1):
        session.append(loop.begin_step())
        if n == len(spec.steps):
            step = sized(run.sizer, run.run_id, spec, step, port.now_ms, session.events)
        if step.finish is StepFinish.STREAM_ERROR:
            await run.stream(attrs.evolve(step, finish=StepFinish.AUTO), n, 1, fraction=0.5)
            if run.budget is not None and port.now_ms >= run.started + run.budget:
                run.timed_out = True
                break
            port.probe("child.stream-error")
            if run.retried:
                port.probe("child.stream-error-after-retry")
            session.append(loop.stream_error({"message": spec.error or "stream reset",
                                              "code": "STREAM_ERROR"}))
            break
        await run.stream(step, n, 1)
        if state.fed < len(state.chunks):
            run.timed_out = True  # the timeout cut the stream short
            _probe_cut(port, state, "child.timeout-mid-stream")
            break
        appended, outcome = loop.end_stream()
        session.append(appended)
        if outcome is StepOutcome.FAILED:
            # One retry of the same step, as a provider-overload retry would.
            port.probe("child.attempt-retried")
            run.retried = True
            session.append(loop.retry())
            await run.stream(attrs.evolve(step, finish=StepFinish.AUTO), n, 2)
            if state.fed < len(state.chunks):
                run.timed_out = True
                if state.fed == 0:
                    port.probe("child.timeout-before-retry")
                _probe_cut(port, state, "child.timeout-mid-stream")
                break
            appended, outcome = loop.end_stream()
            session.append(appended)
            if outcome is StepOutcome.FAILED:
                session.append(loop.fail_step())
                break
        session.append(loop.end_step())
        if outcome is StepOutcome.TOOL_CALLS:
            session.append(tool_events(state.chunks))
            continue
        break
    if run.timed_out:
        session.append(loop.cancel("disposed"))
    elif loop.in_turn:
        session.append(loop.end_turn())


def _abort(run: _Run) -> None:
    """The requester cancelled the run's scope: what streamed before this instant is fed first,
    then the turn is cancelled."""
    port, session, loop, state, run_id = run.port, run.session, run.loop, run.state, run.run_id
    port.probe("child.aborted")
    run.feed_until(port.now_ms)
    _probe_cut(port, state, "child.cancelled-mid-stream")
    if run.session_queued:
        port.probe("child.aborted-in-session-queue")  # it leaves the line below
    if not loop.in_turn:
        session.append(loop.begin_turn())  # aborted while it waited for the lane
    session.append(loop.cancel("parent"))
    port.emit(events.ChildAborted(run_id))


def _read_result(run: _Run, seed_length: int | None, aborted: bool, mutants: frozenset[str]
                 ) -> tuple[SubagentResult, list[ContentBlock]]:
    """The in-process reader's result and output; and what every consumer reads of the log
    (traced for the oracles)."""
    port, spec, session, run_id = run.port, run.spec, run.session, run.run_id
    result = session.reader.result(owner_cancelled=aborted)
    output = result.output
    # The consumers read the log as written: the child-owned suffix by its header (a fork's
    # seed is cut), and of a continued session this epoch only (OUT-3). A one-shot reader does
    # not look for epochs, so a fork's seed must go by the header alone.
    header = SessionHeader(f"{run_id}-session", seed_length=seed_length)
    owned = session.events if seed_length is None else child_owned(session.events, header)
    epoch = last_epoch(owned) if spec.earlier_epoch is not None else list(owned)
    if MUTANT_LAST_ASSISTANT_MESSAGE in mutants:
        output = last_assistant_message(epoch)
    tool = result.tool_result()
    views = consumer_views(header.id or "", epoch)
    port.emit(events.ChildConsumers(
        run_id,
        # OUT-2: the fold fed as the child ran, and the whole-suffix function over the log.
        fold={"incremental": session.reader.output(), "whole": final_output(epoch)},
        # OUT-7: the foreground tool result of this run's own result.
        foreground={"stopReason": result.stop_reason, "isError": tool.is_error,
                    "text": tool.text},
        in_process={"output": views.in_process.output,
                    "stopReason": views.in_process.stop_reason},
        activation=views.activation,
        sdk={"output": views.sdk.output, "stopReason": views.sdk.stop_reason,
             "toolResult": views.sdk.tool_result().to_json()},
        acp={"output": views.acp.output, "stopReason": views.acp.stop_reason},
    ))
    return result, output


def _outcome(run: _Run, result: SubagentResult, output: list[ContentBlock], aborted: bool,
             mutants: frozenset[str]) -> tuple[OutcomeStatus, str | None, str | None, str]:
    """The run's status, error, result text and stop reason."""
    port, spec, timed_out = run.port, run.spec, run.timed_out
    stop_reason = result.stop_reason
    if MUTANT_STOP_REASON_COMPLETED in mutants:
        stop_reason = "completed"
    text: str | None = text_of(output)
    status: OutcomeStatus
    if aborted:
        status, error, text = OutcomeStatus.ERROR, KILLED_ERROR, None
    elif run.context_lost:
        status, error, text = OutcomeStatus.ERROR, LOST_CONTEXT_ERROR, None
    elif timed_out:
        # A plain timeout has no error of its own; its label reads "timed out" (reference §c6).
        status, error = OutcomeStatus.TIMEOUT, None
    elif stop_reason == "error":
        # A failed terminal run reports its failure without replaying captured text (DEL-14).
        # An empty error is the runtime's own (it reads "failed: unknown error", §c16); only a
        # child with no scripted error fails with the stream's message.
        status, error, text = OutcomeStatus.ERROR, \
            "model call failed" if spec.error is None else spec.error, None
        if MUTANT_FAILED_RESULT_REPLAYED in mutants:
            text = text_of(output)
    else:
        status, error = OutcomeStatus.OK, None  # completed, max-tokens (stop reason kept), refusal
    if spec.answer_lost and status == OutcomeStatus.OK and text and text.strip() != "NO_REPLY":
        port.probe("child.answer-lost")
        text = None  # the capture missed it; the transcript below still holds it (DEL-2)
    return status, error, text, stop_reason


def _record_end(run: _Run, store: ChildStore, child_key: str, status: OutcomeStatus,
                error: str | None, text: str | None, stop_reason: str,
                mutants: frozenset[str]) -> int:
    """The outcome written to the store (the result frozen capped), the transcript archived,
    and the end traced; the end time."""
    port, session, run_id, spec = run.port, run.session, run.run_id, run.spec
    usage = token_usage(session.events) if spec.usage_recorded else None
    if usage is None:
        port.probe("child.usage-missing")
    # The registry freezes the result capped (reference §c14, §c17); the end record keeps what
    # the child answered, so the oracles restate the cap from it.
    frozen = cap_frozen_result(text, mutants)
    if text is not None and 4 * len(text) >= FROZEN_RESULT_MAX_BYTES - 1:
        edge = _FROZEN_EDGES.get(utf8_size(text))  # within a byte of the cap (edges.py)
        if edge is not None:
            port.probe(edge)
    if frozen is not None and frozen is not text:
        port.probe("child.result-frozen-capped")
        if utf8_size(frozen) < FROZEN_RESULT_MAX_BYTES:  # the prefix stopped short of a split
            port.probe("child.result-frozen-mid-character")
    store.record_end(run_id, port.now_ms, status, error, frozen, stop_reason, usage)
    ended_ms = port.now_ms
    messages = transcript_messages(spec.task, session.events)
    archive = store.save_transcript(child_key, run_id, messages)
    port.emit(events.ChildEnd(run_id, status, error, stop_reason, text,
                              list(usage) if usage is not None else None,
                              # The retained archive's store row (FMT-6).
                              {"session_key": child_key, "generation": archive.generation,
                               "bytes": len(archive.payload)}))
    return ended_ms


def _answered_turn(loop: AgentLoop, text: str) -> list[JsonObject]:
    """One whole turn whose single step streams ``text`` and stops: what a fork's parent, or
    an earlier epoch of this child, left in the log."""
    logged = [*loop.begin_turn(), *loop.begin_step()]
    for chunk in ({"type": "text-delta", "index": 0, "text": text},
                  {"type": "block-end", "index": 0, "block": {"type": "text", "text": text}},
                  {"type": "finish", "reason": {"kind": "stop"}}):
        logged += loop.chunk(chunk)
    logged += loop.end_stream()[0]
    return [*logged, *loop.end_step(), *loop.end_turn()]


def _probe_run_timeout(port: Port, store: ChildStore, run_id: str, spec: ChildSpec,
                       budget: int | None) -> None:
    """A run stopped by its spawn's runTimeoutSeconds deadline (reference §c18)."""
    if budget is None or budget != run_timeout_budget_ms(spec.run_timeout_ms) or \
            (spec.timeout_ms is not None and spec.timeout_ms <= budget):
        return
    port.probe("child.run-timeout")
    if spec.run_timeout_ms is not None and spec.run_timeout_ms % 1000:
        port.probe("child.run-timeout-floored")  # the fraction of a second did not count
    if any(c.ended_at_ms is None for c in store.direct_children(run_id)):
        port.probe("child.run-timeout-children-outlive")  # its timeout does not cancel them


def _probe_cut(port: Port, state: Attempt, probe: str) -> None:
    """An attempt was cut after some of its chunks streamed and before the rest."""
    if 0 < state.fed < len(state.chunks):
        port.probe(probe)


def _probe_result(port: Port, log: list[JsonObject], output: list[ContentBlock], status: str,
                  text: str | None, stop_reason: str) -> None:
    messages = [e["data"]["message"]["content"] for e in log
                if e["type"] == "assistant/message"]
    if stop_reason == "max-tokens":
        port.probe("child.token-limit")
        if messages and not messages[-1]:
            port.probe("child.token-limit-empty-message")
    if output and not any(messages):
        port.probe("child.attempt-fallback")
    if status == "error" and text_of(output):
        port.probe("child.error-text-dropped")
    if status == "ok":
        if not text:
            port.probe("child.no-output")
        elif text.strip() == "NO_REPLY":
            port.probe("child.no-reply")
        elif len(text) < 64 and "no_reply" in text.lower():
            port.probe("child.no-reply-near-miss")
