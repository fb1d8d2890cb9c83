// handoff's Node driver: one long-lived process per conformance run. It reads JSON lines on
// stdin ({id, op, ...}) and answers one JSON line each ({id, ok} or {id, error}).
//
// OpenClaw's functions are found by their original names: the manifest names each function's
// chunk prefix (dist/<prefix>-<hash>.mjs); the chunk's closing `export { name as x, ... }` gives
// the alias, and a function the chunk defines without exporting gets an export appended by the
// load hook (hooks.mjs). No OpenClaw code is copied: this file only calls the installed package.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { register } from "node:module";
import { pathToFileURL } from "node:url";

const [distDir, manifestPath] = process.argv.slice(2);

// stdout carries the answers only: anything OpenClaw logs (its runtime writes warnings to
// stdout) goes to stderr.
const answer = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
const files = fs.readdirSync(distDir).filter((f) => f.endsWith(".mjs")).sort();

function escapeRe(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function exportsOf(source) {
  const match = source.match(/export\s*\{([^}]*)\}\s*;?\s*$/);
  const out = {};
  if (!match) return out;
  for (const part of match[1].split(",")) {
    const [original, alias] = part.trim().split(/\s+as\s+/);
    if (original) out[original] = alias || original;
  }
  return out;
}

// name -> {url, alias} or {missing: reason}
const located = {};
const appendByUrl = {};
for (const [name, entry] of Object.entries(manifest.functions)) {
  const pattern = new RegExp(`^${escapeRe(entry.chunk)}-[A-Za-z0-9_-]+\\.mjs$`);
  const definition = new RegExp(
    `(?:^|\\n)(?:(?:async )?function ${escapeRe(name)}\\(|(?:var|const|let|class) ${escapeRe(name)}\\b)`);
  let found = null;
  for (const file of files) {
    if (!pattern.test(file)) continue;
    const source = fs.readFileSync(path.join(distDir, file), "utf8");
    if (!definition.test(source)) continue;
    const url = pathToFileURL(path.join(distDir, file)).href;
    const alias = exportsOf(source)[name];
    if (alias) {
      found = { url, alias };
    } else {
      (appendByUrl[url] ||= []).push(name);
      found = { url, alias: `__handoff_${name}` };
    }
    break;
  }
  located[name] = found || {
    missing: `openclaw ${manifest.openclaw}: function ${name} not found (chunk ${entry.chunk}-*.mjs)`,
  };
}
register(new URL("./hooks.mjs", import.meta.url), { data: { appendByUrl } });

const loaded = {};
async function fn(name) {
  if (loaded[name]) return loaded[name];
  const where = located[name];
  if (!where) throw new Error(`${name} is not in the manifest`);
  if (where.missing) throw new Error(where.missing);
  const module = await import(where.url);
  const value = module[where.alias];
  if (typeof value !== "function" && value === undefined) {
    throw new Error(`openclaw ${manifest.openclaw}: ${name} has no export ${where.alias}`);
  }
  loaded[name] = value;
  return value;
}

// Math.random, replaced so the backoff jitter is the value the check chose.
const realRandom = Math.random;
function withRandom(value, body) {
  Math.random = () => value;
  try {
    return body();
  } finally {
    Math.random = realRandom;
  }
}

// An error chain as OpenClaw's senders build it: Error objects linked by `cause`, with the
// send-evidence flags, and the platform's typed rejection where the chain has one.
async function errorChain(link) {
  if (link === null || link === undefined) return undefined;
  const cause = await errorChain(link.cause);
  let error;
  if (link.platformError === "message-not-dispatched") {
    const Rejected = await fn("PlatformMessageNotDispatchedError");
    error = new Rejected(link.message, { retryable: false, cause });
  } else {
    error = new Error(link.message, cause === undefined ? undefined : { cause });
  }
  if (link.sentBeforeError) error.sentBeforeError = true;
  if (link.visibleReplySent) error.visibleReplySent = true;
  return error;
}

const ops = {
  ping: async () => "pong",
  version: async () => ({ openclaw: manifest.openclaw, node: process.version }),
  missing: async () => Object.values(located).filter((l) => l.missing).map((l) => l.missing),
  call: async ({ name, args }) => (await fn(name))(...args),
  // Many calls of one function in one round trip: [{ok} | {error}] per argument list.
  batch: async ({ name, calls }) => {
    const f = await fn(name);
    const out = [];
    for (const args of calls) {
      try {
        out.push({ ok: (await f(...args)) ?? null });
      } catch (error) {
        out.push({ error: String(error && error.message) });
      }
    }
    return out;
  },
  backoff: async ({ calls }) => {
    const f = await fn("resolveAnnounceRetryDelayMs");
    return calls.map(([retryCount, random]) => withRandom(random, () => f(retryCount)));
  },
  classify: async ({ chains }) => {
    const transient = await fn("isTransientAnnounceDeliveryError");
    const permanent = await fn("isPermanentAnnounceDeliveryError");
    const evidence = await fn("hasAnnounceSendEvidence");
    const out = [];
    for (const chain of chains) {
      const error = await errorChain(chain);
      out.push({ sent: evidence(error), transient: transient(error), permanent: permanent(error) });
    }
    return out;
  },
};

// runSubagentAnnounceFlow builds the status label and the task label inline (no function holds
// them): these two expressions are its own (subagent-announce chunk), restated; everything after
// them (delimiter escaping, line folding, trimming, the 500-character cap) is OpenClaw's code.
function announceLabels(status, error, task) {
  const statusLabel = status === "ok" ? "completed; ready for parent review"
    : status === "timeout" ? (error ? `timed out: ${error}` : "timed out")
    : status === "error" ? `failed: ${error || "unknown error"}` : "finished with unknown status";
  return { statusLabel, taskLabel: task || "task" };  // params.label || params.task || "task"
}

ops.idempotency = async ({ calls }) => {
  const key = await fn("buildAnnounceIdempotencyKey");
  const id = await fn("buildAnnounceIdFromChildRun");
  return calls.map(([childSessionKey, childRunId]) => key(id({ childSessionKey, childRunId })));
};

ops.statusTask = async ({ calls }) => {
  const format = await fn("formatAgentInternalEventsForPrompt");
  return calls.map(([status, error, task]) => {
    const { statusLabel, taskLabel } = announceLabels(status, error, task);
    const text = format([{
      type: "task_completion", source: "subagent", childSessionKey: "k", childSessionId: "i",
      announceType: "subagent task", taskLabel, status, statusLabel, result: "r",
      replyInstruction: "x",
    }]);
    const lines = text.split("\n");
    const at = lines.indexOf("[Internal task completion event]") + 5;
    return [lines[at], lines[at + 1]];
  });
};

// The stats line reads the child's session entry from the session store (SQLite under
// OPENCLAW_STATE_DIR, which the Python side points at a temporary folder): each call writes a
// fresh entry under its own key, then asks for the line.
let statsCalls = 0;
ops.statsLine = async ({ calls }) => {
  const storeOf = await fn("resolveSessionStorePathCore");
  const replace = await fn("replaceSessionEntry");
  const stats = await fn("buildCompactAnnounceStatsLine");
  const storePath = storeOf(undefined, { agentId: "main" });
  const out = [];
  for (const [startedAt, endedAt, usage] of calls) {
    statsCalls += 1;
    const sessionKey = `agent:main:subagent:conform-${statsCalls}`;
    const entry = { sessionId: `s${statsCalls}`, updatedAt: 1 };
    if (usage) {
      if (usage.input !== null) entry.inputTokens = usage.input;
      if (usage.output !== null) entry.outputTokens = usage.output;
      if (usage.total !== null) {
        Object.assign(entry, { totalTokens: usage.total, totalTokensFresh: true, totalTokensVersion: 1 });
      }
    }
    await replace({ storePath, sessionKey }, entry);
    // With no token fields yet, the line re-reads the entry twice, 150 ms apart, waiting for
    // usage to land; nothing else writes here, so the waits are made zero-length (the re-reads
    // still happen).
    const realSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = (callback, _ms, ...rest) => realSetTimeout(callback, 0, ...rest);
    try {
      out.push(await stats({ sessionKey, startedAt, endedAt }));
    } finally {
      globalThis.setTimeout = realSetTimeout;
    }
  }
  return out;
};

// The sessions_history check (history.mjs): OpenClaw's tool over its own chat.history.
ops.historyStore = async (request) => (await import("./history.mjs")).historyStore(fn, request);
ops.sessionsHistory = async (request) => (await import("./history.mjs")).sessionsHistory(fn, request);

// The registry check (registry.mjs): one simulator run replayed on OpenClaw's registry per call.
ops.registryReplay = async (request) => (await import("./registry.mjs")).replay(fn, request);

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (!line.trim()) continue;
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    answer(JSON.stringify({ id: null, error: `bad request: ${error.message}` }) + "\n");
    continue;
  }
  let reply;
  try {
    const op = ops[request.op];
    if (!op) throw new Error(`no such op: ${request.op}`);
    reply = { id: request.id, ok: (await op(request)) ?? null };
  } catch (error) {
    reply = { id: request.id, error: String((error && error.stack) || error) };
  }
  answer(JSON.stringify(reply) + "\n");
}
