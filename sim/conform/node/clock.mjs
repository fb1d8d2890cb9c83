// A fake clock for the registry check: Date, timers and Math.random replaced on globalThis, so
// OpenClaw's registry runs on the simulator's time (it reads Date.now() and arms setTimeout
// when it backs off, waits for a deadline or sweeps). Installed after OpenClaw's modules are
// imported (their loading uses real timers); `advance(to)` fires every timer due by `to` in time
// order, letting the promises each callback starts settle before the next one fires.
const real = {
  Date: globalThis.Date,
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  random: Math.random,
};

let now = 0;
let nextId = 1;
const timers = new Map(); // id -> {at, callback, args, every, order}
let order = 0;
const randoms = []; // values Math.random hands out, in order (then 0)
let active = null; // the run whose backoff comes next: its own queue

class Timer {
  constructor(id) { this.id = id; }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return false; }
  refresh() { const t = timers.get(this.id); if (t) { t.at = now + t.delay; t.order = order++; } return this; }
  [Symbol.toPrimitive]() { return this.id; }
}

function arm(callback, delay, args, every) {
  const id = nextId++;
  const wait = Math.max(0, Number(delay) || 0);
  timers.set(id, { at: now + wait, delay: wait, callback, args, every, order: order++ });
  return new Timer(id);
}

function disarm(handle) {
  if (handle === undefined || handle === null) return;
  timers.delete(typeof handle === "object" ? handle.id : Number(handle));
}

class FakeDate extends real.Date {
  constructor(...args) {
    if (args.length === 0) super(now);
    else super(...args);
  }
  static now() { return now; }
}

// Lets every promise chain a callback started run to its next real wait (none: OpenClaw's
// SQLite calls are synchronous), a few hundred turns of the event loop.
export async function settle(turns = 200) {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => real.setImmediate(resolve));
}

function due(limit) {
  let best = null;
  for (const [id, timer] of timers) {
    if (timer.at > limit) continue;
    if (best === null || timer.at < best[1].at || (timer.at === best[1].at && timer.order < best[1].order)) {
      best = [id, timer];
    }
  }
  return best;
}

export async function advance(to) {
  await settle();
  for (;;) {
    const next = due(to);
    if (next === null) break;
    const [id, timer] = next;
    now = Math.max(now, timer.at);
    if (timer.every) {
      timer.at = now + Math.max(1, timer.delay);
      timer.order = order++;
    } else {
      timers.delete(id);
    }
    timer.callback(...(timer.args || []));
    await settle();
  }
  now = Math.max(now, to);
  await settle();
}

export function install(start) {
  now = start;
  globalThis.Date = FakeDate;
  globalThis.setTimeout = (callback, delay, ...args) => arm(callback, delay, args, false);
  globalThis.clearTimeout = disarm;
  globalThis.setInterval = (callback, delay, ...args) => arm(callback, delay, args, true);
  globalThis.clearInterval = disarm;
  // The registry's backoff jitter takes the simulator's values in order; any other caller
  // (ids, sweeps) gets a fixed 0.5, so nothing else eats the backoff's values.
  Math.random = () => {
    const queue = active && active.length ? active : randoms;
    if (queue.length && /resolveAnnounceRetryDelayMs|computeBackoff/.test(new Error().stack || "")) {
      return queue.shift();
    }
    return 0.5;
  };
}

export function reset(start) {
  timers.clear();
  active = null;
  randoms.length = 0;
  now = start;
}

// A process that dies takes its timers with it (the registry check's delivery-process crash).
export function dropTimers() {
  timers.clear();
}

// The backoff's jitter from now on comes from this run's own queue (see registry.mjs).
export function useRandoms(queue) {
  active = queue;
}

export function feedRandom(values) {
  randoms.push(...values);
}

export function clockNow() {
  return now;
}

export function pending() {
  return timers.size;
}

// The real setTimeout, for waits that must not depend on the fake clock.
export const realTimers = real;
