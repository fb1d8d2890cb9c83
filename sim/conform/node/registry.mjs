// The registry check's Node end: OpenClaw's real subagent registry (its VITEST test handle),
// driven by a simulator run's events on the fake clock (clock.mjs). OpenClaw's own code decides
// everything the check compares (delivery status, attempt count, next attempt time, backoff,
// the 30-minute window, suspension, what the row freezes); the fakes stand only where the
// simulator's world answers: the gateway (`callGateway`), the child's end (a lifecycle event),
// and the announce flow, whose answer per attempt is the simulator's send outcomes for that
// attempt (acknowledged -> delivered; transient tries spent -> retryable; permanent ->
// permanent failure; part sent -> the send-evidence error the flow rethrows), taking as long
// as the simulator's attempt took.
import * as clock from "./clock.mjs";

const TEST_HANDLE = Symbol.for("openclaw.subagentRegistryTestApi");

let registry = null; // {register, init, activate, get, api}
let listener = null;
let script = null; // the replay being driven: runs by id, their attempts left, what was handed
let replays = 0;
let baseStateDir;
let incarnation = 1; // the delivery process now running (1 + the restarts so far)

function deps() {
  return {
    // Nothing reaches a gateway: agent.wait never answers (the child's end comes as a lifecycle
    // event), chat.history holds no delivery mirror, anything else is acknowledged empty.
    callGateway: async (request) => {
      if (request.method === "agent.wait") return new Promise(() => {});
      if (request.method === "chat.history") return { messages: [] };
      return {};
    },
    // The child's final reply as its transcript holds it (what the registry freezes).
    captureSubagentCompletionReply: async (sessionKey) => {
      const run = script && [...script.byChild.values()].find((r) => r.childSessionKey === sessionKey);
      return run ? run.reply : undefined;
    },
    cleanupBrowserSessionsForLifecycleEnd: async () => {},
    getRuntimeConfig: () => ({}),
    onAgentEvent: (callback) => {
      listener = callback;
      return () => { listener = null; };
    },
    maybeWakeRequesterAfterAllChildrenSettled: async () => false,
    runSubagentAnnounceFlow: announce,
  };
}

async function announce(params) {
  const run = script && script.byChild.get(params.childRunId);
  if (!run) return "retryable";
  if (params.signal?.aborted) {
    // The registry's own delivery deadline passed before the attempt began: OpenClaw's flow
    // sends nothing then; the row shows what the registry made of it.
    run.aborted += 1;
    return "retryable";
  }
  run.handed.push({
    at: clock.clockNow(),
    result: params.roundOneReply ?? null,
    outcome: params.outcome?.status ?? null,
    task: params.task ?? null,
  });
  // Each answer belongs to the delivery process that made the simulator's attempt: answers of
  // an earlier process that this replay's never asked for are dropped; a call of a process the
  // simulator's run shows dying before its next attempt gets no answer (it dies with it).
  while (run.attempts.length && (run.attempts[0].incarnation ?? incarnation) < incarnation) {
    run.attempts.shift();
  }
  if (run.attempts.length && (run.attempts[0].incarnation ?? incarnation) > incarnation) {
    return new Promise(() => {});
  }
  const attempt = run.attempts.shift();
  if (attempt && (attempt.outcome === "crashed" || attempt.outcome === "hung")) {
    // The delivery process died during this attempt (or the simulator's run states no answer
    // for it before a correction reopened the run): its answer never comes back.
    return new Promise(() => {});
  }
  if (!attempt) {
    // OpenClaw tried more often than the simulator did: the attempt is answered as a spent
    // transient one (its own outcome shows in the row).
    run.extra += 1;
    clock.useRandoms(run.random);
    params.onDeliveryResult?.({ delivered: false, path: "direct", error: "no such attempt in the simulator's run", disposition: "retryable" });
    return "retryable";
  }
  if (attempt.durationMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, attempt.durationMs));
  }
  // A retryable answer's backoff is computed as the registry takes this answer: its jitter is
  // this run's next one. Chosen here, when the answer comes back, not when the call began:
  // another run's call that starts while this one is out would otherwise take the queue, and
  // this run's backoff would draw that run's jitter (seed 301).
  clock.useRandoms(run.random);
  if (attempt.outcome === "delivered") {
    params.onDeliveryResult?.({ delivered: true, path: "direct", deliveredAt: clock.clockNow() });
    return "delivered";
  }
  if (attempt.outcome === "sent") {
    // Part of the send reached the platform: OpenClaw's flow rethrows an error carrying send
    // evidence (hasAnnounceSendEvidence) instead of reporting a delivery result.
    const error = new Error(attempt.error || "send failed after part of it was sent");
    error.sentBeforeError = true;
    throw error;
  }
  const disposition = attempt.outcome === "permanent" ? "permanent_failure" : "retryable";
  params.onDeliveryResult?.({ delivered: false, path: "direct", error: attempt.error || "send failed", disposition });
  return "retryable";
}

async function load(fn) {
  if (registry) return registry;
  process.env.VITEST = "1";
  registry = {
    register: await fn("registerSubagentRun"),
    init: await fn("initSubagentRegistry"),
    activate: await fn("activateSubagentRegistry"),
    get: await fn("getSubagentRunByRunId"),
    liveRun: await fn("registerAgentRunContext"),
    runGone: await fn("clearAgentRunContext"),
    terminalReply: await fn("buildAgentRunTerminalReplySnapshot"),
    redrive: await fn("retrySubagentCompletionDelivery"),
    claimKill: await fn("claimSubagentRunKill"),
    markKilled: await fn("markSubagentRunTerminated"),
    findTask: await fn("findTaskByRunId"),
  };
  registry.api = globalThis[TEST_HANDLE];
  if (!registry.api) throw new Error("openclaw: the subagent registry's test handle is absent (VITEST)");
  clock.install(0);
  return registry;
}

function snapshot(runId) {
  const run = script.runs[runId];
  const entry = registry.get(run.id);
  const handed = run.handed.map((h) => ({ ...h }));
  // An operator's latest redrive: accepted, or refused with OpenClaw's reason.
  const redriven = run.redrive ? run.redrive.ok === true : null;
  const redriveRefusal = run.redrive?.reason ?? null;
  if (!entry) {
    return { row: false, handed, extra: run.extra, aborted: run.aborted, redriven, redriveRefusal };
  }
  const delivery = entry.delivery || {};
  return {
    row: true,
    status: delivery.status ?? null,
    attempts: delivery.attemptCount ?? 0,
    nextAttemptAt: delivery.nextAttemptAt ?? null,
    suspendedReason: delivery.suspendedReason ?? null,
    outcome: entry.execution?.outcome?.status ?? null,
    ended: entry.execution?.status === "terminal",
    frozen: entry.completion?.resultText ?? null,
    handed,
    extra: run.extra,
    aborted: run.aborted,
    redriven,
    redriveRefusal,
  };
}

function endEvent(run, step) {
  const data = { endedAt: step.endedAt ?? step.t, startedAt: run.startedAt };
  // The terminal reply fact OpenClaw's runtime attaches to a run's end, built by its own
  // builder from the child's final visible text (silent, empty or visible, sanitized).
  if (typeof step.reply === "string") {
    data.terminalReply = registry.terminalReply({ visibleText: step.reply, rawText: step.reply });
  }
  let phase = "end";
  if (step.status === "error") {
    phase = "error";
    data.error = step.error || "error";
  } else if (step.status === "timeout") {
    data.status = "timeout";
    data.timeoutPhase = "run";
    if (step.error) data.error = step.error;
  } else if (step.status === "killed") {
    data.aborted = true;
    data.stopReason = "killed";
  }
  return { stream: "lifecycle", runId: run.id, sessionKey: run.childSessionKey, data: { phase, ...data } };
}

function deliverEnd(run, step) {
  if (!listener) throw new Error("the registry registered no lifecycle listener");
  run.reply = typeof step.reply === "string" ? step.reply : undefined;
  registry.runGone(run.id);
  listener(endEvent(run, step));
}

// One simulator run, replayed: {runs: {runId: {...}}, steps: [{t, kind, run, ...}]}.
// Answers the row's state at each `check` step, in order.
export async function replay(fn, request) {
  await load(fn);
  replays += 1;
  const prefix = `r${replays}-`;
  // Each replay has a state folder of its own: rows an earlier replay persisted are never
  // restored into this one.
  baseStateDir ??= process.env.OPENCLAW_STATE_DIR;
  process.env.OPENCLAW_STATE_DIR = `${baseStateDir}/replay-${replays}`;
  registry.api.resetSubagentRegistryForTests({ persist: false });
  clock.reset(0);
  listener = null;
  incarnation = 1;
  registry.api.testing.setDepsForTest(deps());
  registry.init();
  registry.activate(() => undefined);
  const runs = {};
  const byChild = new Map();
  for (const [runId, run] of Object.entries(request.runs)) {
    const id = prefix + runId;
    runs[runId] = {
      ...run,
      id,
      childSessionKey: run.childSessionKey.replace(/([^:]*)$/, `${prefix}$1`),
      attempts: run.attempts.map((a) => ({ ...a })),
      random: [...(run.random || [])],
      handed: [],
      extra: 0,
      aborted: 0,
    };
    byChild.set(id, runs[runId]);
  }
  script = { runs, byChild };
  clock.feedRandom(request.random || []);
  const checks = [];
  for (const step of request.steps) {
    await clock.advance(step.t);
    const run = runs[step.run];
    if (step.kind === "spawn") {
      run.startedAt = step.t;
      registry.register({
        runId: run.id,
        childSessionKey: run.childSessionKey,
        requesterSessionKey: run.requesterSessionKey,
        requesterDisplayKey: run.requesterSessionKey,
        task: run.task,
        cleanup: "keep",
        expectsCompletionMessage: run.required,
      });
      // The child's agent run is live in this process until it ends (OpenClaw's sweeper
      // finishes a run with no live context as orphaned after a minute).
      registry.liveRun(run.id, { sessionKey: run.childSessionKey });
    } else if (step.kind === "crash") {
      // The delivery process dies: its timers and in-flight calls die with it, and its
      // in-memory registry is dropped unpersisted (what it had saved stays in SQLite).
      clock.dropTimers();
      registry.api.resetSubagentRegistryForTests({ persist: false });
      listener = null;
    } else if (step.kind === "restart") {
      // A new process on the same state folder: OpenClaw restores the rows from SQLite and
      // resumes each one (initSubagentRegistry, then activateSubagentRegistry).
      incarnation += 1;
      registry.api.testing.setDepsForTest(deps());
      registry.init();
      // Restored rows are resumed only once a gateway context is bound (bindGatewayOwners):
      // a present, empty one (no recovery runtime: agent.wait goes to callGateway).
      registry.activate(() => ({ resolveGatewayContext: () => ({}) }));
    } else if (step.kind === "redrive") {
      // An operator's redrive: OpenClaw's operator retry on the run's task.
      const task = registry.findTask(run.id);
      run.redrive = task ? await registry.redrive(task.taskId) : { ok: false, reason: "the run has no task" };
    } else if (step.kind === "kill") {
      // The requester kills the running child: OpenClaw's kill path (subagent-control-kill):
      // the kill's durable intent, then its tombstone; the child's run then ends aborted.
      const entry = registry.get(run.id);
      if (entry) registry.claimKill({ runId: run.id, expected: entry });
      run.killed = registry.markKilled({ runId: run.id, reason: "killed" });
    } else if (step.kind === "end") {
      deliverEnd(run, step);
    } else if (step.kind === "check") {
      await clock.settle();
      checks.push(snapshot(step.run));
    } else {
      throw new Error(`registry replay: no such step kind ${step.kind}`);
    }
    await clock.settle();
  }
  script = null;
  return checks;
}
