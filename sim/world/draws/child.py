"""One drawn child of a seeded workload: its steps and answer from the workload stream, bent
by the seeded child faults, and its use of an archived session (FMT-6)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors.child.agent_loop import Encoding
from actors.messages import ChildSpec, CleanupSession, RunHistoryRead, StepSpec
from actors.states import StepFinish
from sim import replies
from sim.choices import Chooser
from sim.faults.plan import FaultPlan
from sim.scenario import WorkloadDef
from sim.world.control import Control
from sim.world.draws import reach as world_reach
from sim.world.draws.features import Features
from sim.world.draws.trees import TreeBook

# What the no-reply fault makes a child answer: silence, nothing, or the skip token (§c1).
SILENT_REPLIES = ("NO_REPLY", "", " ANNOUNCE_SKIP\n")
CHILD_ERRORS = ("model provider error: 500 internal error", "tool sandbox exited with status 137",
                "stream reset: <eof> & no retry", "Error: request timed out\n  at fetch (net.js:1)",
                "failed: NO_REPLY")
# Of reused session keys (FMT-6), the share spawned while the earlier run should still run: the
# session queue's corner (actors/nesting/session_queue.py), aimed so a bug there shows.
EARLY_REUSE_SHARE = 0.25
# Of reuses while some session was already given a run while busy, the share that go to the
# latest such session, while its latest run should still run (an orchestrator feeding one
# worker session task after task). Why: a session's queue shows its order only with two runs
# waiting behind a running one (actors/nesting/session_queue.py); uniform picks with
# independent timings stacked two on one busy session in 2 of default seeds 1..200
# (benchmarks/README.md has the rates).
WORKER_SHARE = 0.5
# Sends a control message about a child at a virtual time (the world's session-control desk).
SendAt = Callable[[int, ChildSpec, Control], None]


def draw_child(chooser: Chooser, plan: FaultPlan, features: Features, workload: WorkloadDef,
               child_id: str, i: int) -> ChildSpec:
    """One child's behaviour from the workload stream, bent by the seeded child faults."""
    spawn_at_ms = 1000 * chooser.choose("workload", workload.spawn_within_ms // 1000 + 1)
    run_ms = 1000 * (1 + chooser.choose("workload", max(1, workload.run_max_ms // 1000)))
    n_steps = 1 + chooser.choose("workload", 3)
    step_ms = max(1, run_ms // n_steps)
    steps = []
    for n in range(n_steps):
        final = n == n_steps - 1
        # Intermediate steps call tools; half of them say something first, half only call.
        text = ""
        if final:
            text = replies.draw_answer(chooser, child_id, 1 + i * 3)
        elif chooser.chance("workload", 0.5):
            text = f"Checking part {n + 1} of {child_id}'s task."
        reasoning = "Plan the next call." if chooser.chance("workload", 0.3) else ""
        tool_calls = 0 if final else 1 + chooser.choose("workload", 2)
        steps.append(StepSpec(step_ms, text=text, reasoning=reasoning, tool_calls=tool_calls))
    if plan.strikes("no-reply"):
        steps[-1] = attrs.evolve(steps[-1], text=SILENT_REPLIES[
            chooser.choose("fault:no-reply", len(SILENT_REPLIES))])
    retried = None
    if plan.strikes("attempt-retry"):
        retried = k = chooser.choose("fault:attempt-retry", len(steps))
        steps[k] = attrs.evolve(steps[k], finish=StepFinish.ERROR)
    if plan.strikes("token-limit"):
        # The cut-off step becomes the last; a tool-call-only step cut off this way leaves
        # the empty, usage-only terminal message of seed 000.
        k = chooser.choose("fault:token-limit", len(steps))
        steps = [*steps[:k], attrs.evolve(steps[k], finish=StepFinish.MAX_TOKENS)]
    error = None
    if plan.strikes("child-error"):
        error = CHILD_ERRORS[chooser.choose("fault:child-error", len(CHILD_ERRORS))]
        steps[-1] = attrs.evolve(steps[-1], finish=StepFinish.STREAM_ERROR)
        steps, retried = world_reach.retry_before_error(chooser, plan, steps, retried)
    timeout_ms = None
    if plan.strikes("child-timeout"):
        timeout_ms = 1000 * (1 + chooser.choose("fault:child-timeout", run_ms // 1000))
        if retried is not None and chooser.chance("fault:child-timeout", 0.5):
            # Aimed: the attempt fails, then the timeout comes before its retry streams.
            timeout_ms = (retried + 1) * step_ms + 1
    timeout_ms = world_reach.timeout_before_retry(chooser, plan, steps, retried, timeout_ms)
    answer_lost = plan.strikes("answer-lost")  # DEL-2: lost-answer recovery finds it
    encoding = (Encoding.V1 if chooser.chance("workload", 0.25) else Encoding.V2).value
    expects_completion = not chooser.chance("workload", 0.1)
    usage_recorded = not chooser.chance("workload", 0.1)
    # OUT-3: some children are forks seeded with their parent's answer, some continue a
    # session whose earlier epoch answered; on their own stream so other draws keep still.
    forks = "forks" in features
    fork_seed = (f"Parent answer seeded into {child_id}'s fork."
                 if forks and chooser.chance("workload:fork", 0.15) else None)
    earlier_epoch = (f"Earlier epoch answer of {child_id}."
                     if forks and chooser.chance("workload:fork", 0.15) else None)
    return ChildSpec(child_id, workload.requester, f"task {i + 1} of the batch", spawn_at_ms,
                     tuple(steps), encoding, timeout_ms, error, expects_completion,
                     usage_recorded, fork_seed, earlier_epoch, answer_lost=answer_lost)


def draw_archive_use(chooser: Chooser, send_at: SendAt, child: ChildSpec,
                     earlier: list[ChildSpec], trees: TreeBook) -> ChildSpec:
    """FMT-6: some children reuse an earlier child's session key once it should be done
    (some while it should still run: they queue behind it); some runs' archives are read
    some time after the run should have ended, often after cleanup deleted the live
    session. On their own stream so other draws keep still."""
    sub = "workload:archive"
    # A nested child is spawned while its parent runs; it never moves to reuse a key.
    reused = bool(earlier) and child.parent is None and chooser.chance(sub, 0.15)
    if reused:
        prior = earlier[chooser.choose(sub, len(earlier))]
        early_share = EARLY_REUSE_SHARE
        worker = _worker_session(earlier, trees)
        # (On a stream of its own, so seeds without a worker session draw as before.)
        if worker is not None and chooser.chance(f"{sub}-worker", WORKER_SHARE):
            prior, early_share = trees.on_session(worker)[-1], 1.0
        key = prior.session or prior.id
        # After every earlier run of that session, not only the one picked: a session runs
        # one run at a time (two reuses of one key in a big world overlapped).
        at = trees.session_free_ms(key) + 1000 * (1 + chooser.choose(sub, 60))
        if chooser.chance(sub, early_share):  # the run waits in the session's queue
            at = prior.spawn_at_ms + 1000 * chooser.choose(sub, max(1, prior.run_ms // 1000))
        child = attrs.evolve(child, session=key, spawn_at_ms=at)
    # Reads cost a decode and a sessions_history each: mostly where a key was reused.
    if chooser.chance(sub, 0.5 if reused else 0.1):
        end_ms = child.spawn_at_ms + child.run_ms
        at = end_ms + 1000 * (121 + chooser.choose(sub, 240))
        send_at(at, child, _paged_read(chooser, child))
        if chooser.chance(sub, 0.6):
            send_at(end_ms + 1000 * (1 + chooser.choose(sub, 120)), child,
                          CleanupSession(child.id))
    return child


def _paged_read(chooser: Chooser, child: ChildSpec) -> RunHistoryRead:
    """The archive read, half the time with an offset (0 to 3) and then often a small limit
    (1 to 3): a read with more rows below its page, and a one-row page at the top of its
    window, where nextOffset's floor ``offset + 1`` binds (FMT-5, reference §c19; probes
    ``requester.history-paged-more``, ``requester.history-paged-floor``). Without an offset
    the answer has no paging fields. On a stream of its own (index 0: no offset, as before),
    so other draws, and saved runs' choices, keep still."""
    sub = "workload:paging"
    if not chooser.chance(sub, 0.5):
        return RunHistoryRead(child.id, include_tools=True)
    offset = chooser.choose(sub, 4)
    limit = 1 + chooser.choose(sub, 3) if chooser.chance(sub, 0.6) else None
    return RunHistoryRead(child.id, limit, offset, include_tools=True)


def _worker_session(earlier: list[ChildSpec], trees: TreeBook) -> str | None:
    """The session most recently drawn a run while an earlier run of it should still run (a
    session fed work while busy), if any."""
    for spec in reversed(earlier):
        key = spec.session or spec.id
        runs = trees.on_session(key)
        if any(run is not spec and run.spawn_at_ms <= spec.spawn_at_ms
               < run.spawn_at_ms + run.run_ms for run in runs):
            return key
    return None
