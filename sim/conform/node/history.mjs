// The sessions_history check's Node end (sim/conform/history.py). What is OpenClaw's own code:
// the transcript store (appendTranscriptMessages: the SQLite store under OPENCLAW_STATE_DIR,
// its write-side redaction and image artifacts), the gateway's `chat.history`
// (createEmbeddedCallGateway: OpenClaw's in-process implementation of the method, over
// readChatHistoryPage, the display projection, capArrayByJsonBytes and
// resolveChatHistoryNextOffset) and the tool (createSessionsHistoryTool: argument reading,
// tool rows, field cut, redaction, the 80 KiB cap, paging metadata). What is fake: the rows
// written (the check's generated transcript), their event ids and times, and the one session
// lookup the tool makes before reading (`sessions.resolve` answers the key asked, under the
// agent asked: the child session exists and the requester may read it).
let transcripts = 0;
const written = new Map(); // a transcript's JSON -> {kept: its session as staged, number}
const RECENT = 50; // a session this many transcripts old is not read again (see historyStore)
let tickets = 0;
const answers = new Map(); // ticket -> the tool's answer
const ROW_TIME_MS = 1_700_000_000_000; // every row's write time (the store records it)

let tool = null;
let embedded = null;

async function setUp(fn) {
  if (tool) return;
  const createTool = await fn("createSessionsHistoryTool");
  embedded = (await fn("createEmbeddedCallGateway"))();
  const callGateway = async (request) => {
    if (request.method === "chat.history") return await embedded(request);
    if (request.method === "sessions.resolve") {
      return { key: request.params.key, agentId: request.params.agentId };
    }
    throw new Error(`the sessions_history check has no answer for ${request.method}`);
  };
  tool = createTool({ callGateway, agentSessionKey: "agent:main:main", config: {} });
}

// Write each transcript into a fresh child session; answer each row as the store holds it
// (the written message, after the store's own redaction) with the row metadata the gateway
// reads back for it (`__openclaw`: id, record time, display position, seq), or null for a row
// the gateway's projection does not show.
export async function historyStore(fn, { inputs }) {
  await setUp(fn);
  const storeOf = await fn("resolveSessionStorePathCore");
  const replace = await fn("replaceSessionEntry");
  const append = await fn("appendTranscriptMessages");
  const storePath = storeOf(undefined, { agentId: "main" });
  const out = [];
  for (const { rows, args } of inputs) {
    const kept = await session(storePath, replace, append, rows);
    // The tool is called now, while the session is new (with each entry updated at write time
    // no session has been seen pruned, but answers are taken as early as they can be).
    tickets += 1;
    answers.set(tickets, await call(kept.sessionKey, args));
    out.push({ ...kept, ticket: tickets, redactions: await redactions(fn, kept.shown) });
  }
  return out;
}

async function session(storePath, replace, append, rows) {
  // The same transcript again reads the same recent session (reads change nothing).
  const text = JSON.stringify(rows);
  const recent = written.get(text);
  if (recent && transcripts - recent.number < RECENT) return recent.kept;
  transcripts += 1;
  const sessionKey = `agent:main:subagent:history-${transcripts}`;
  const sessionId = `history-${transcripts}`;
  // Updated now: the store's maintenance prunes entries older than 30 days
  // (DEFAULT_SESSION_PRUNE_AFTER_MS); with updatedAt 1 some sessions read back empty.
  await replace({ storePath, sessionKey }, { sessionId, updatedAt: Date.now() });
  const stored = rows.length === 0 ? [] : await append(
    { agentId: "main", sessionId, sessionKey, storePath },
    { messages: rows.map((message, index) => ({
      message, eventId: `row-${index + 1}`, now: ROW_TIME_MS })) });
  // Every row the gateway shows, oldest first: its newest page, then older pages by its own
  // nextOffset (a page holds at most 1,000 rows).
  const shown = [];
  let offset = 0;
  for (;;) {
    const page = await embedded({ method: "chat.history",
      params: { sessionKey, agentId: "main", limit: 1000, offset } });
    shown.unshift(...page.messages);
    if (!page.hasMore || typeof page.nextOffset !== "number") break;
    offset = page.nextOffset;
  }
  const metaById = new Map();
  for (const message of shown) {
    const meta = message && message.__openclaw;
    if (meta && typeof meta.id === "string") metaById.set(meta.id, meta);
  }
  const kept = {
    sessionKey,
    shown,
    rows: stored.map((row, index) => ({
      message: row.message, meta: metaById.get(`row-${index + 1}`) ?? null })),
  };
  written.set(text, { kept, number: transcripts });
  return kept;
}

// What the tool's own read-time masking (redactToolPayloadText) makes of each text field of
// the shown rows that it changes: [text, masked] pairs.
async function redactions(fn, shown) {
  const redact = await fn("redactToolPayloadText");
  const texts = [];
  const fields = (record) => {
    for (const key of ["text", "thinking", "partialJson"]) {
      if (typeof record[key] === "string") texts.push(record[key]);
    }
  };
  for (const message of shown) {
    if (!message || typeof message !== "object") continue;
    if (typeof message.content === "string") texts.push(message.content);
    if (Array.isArray(message.content)) {
      for (const block of message.content) if (block && typeof block === "object") fields(block);
    }
    fields(message);
  }
  const out = [];
  for (const text of new Set(texts)) {
    const masked = redact(text);
    if (masked !== text) out.push([text, masked]);
  }
  return out;
}

// The tool's answer to one call: its `details` (the JSON it returns), or the message of the
// error it throws.
async function call(sessionKey, args) {
  try {
    return { ok: (await tool.execute("conform", { ...args, sessionKey })).details };
  } catch (error) {
    return { error: String(error && error.message) };
  }
}

// The answers historyStore took, by ticket (each handed out once).
export async function sessionsHistory(fn, { tickets: asked }) {
  return asked.map((ticket) => {
    const answer = answers.get(ticket);
    answers.delete(ticket);
    if (answer === undefined) throw new Error(`no sessions_history answer for ticket ${ticket}`);
    return answer;
  });
}
