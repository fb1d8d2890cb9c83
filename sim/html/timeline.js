// The handoff timeline page (sim/html/timeline.py embeds its data; nothing is fetched).
// Lanes are drawn lazily: only the rows and the time window in view, a lane's records binned
// into pixel columns when more of them fall in the window than the plot has room for. The
// event list beside the lanes draws only the rows it shows, too.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("timeline-data").textContent);
  const S = D.S, R = D.R, LANES = D.lanes, ARROWS = D.arrows, MARKS = D.marks, V = D.V;
  const BARS = D.bars || [], K = D.K || null, BRANCH = D.branch || [], CMP = D.compare || null;
  const ROW = 22, AXIS = 26, MARGIN = 10, BIN = 4, DOT = 6, MAX_ARROWS = 800, EV_ROW = 18;
  const INSTANT = 7;  // pixels between records of one instant, when the zoom leaves room
  const $ = (id) => document.getElementById(id);
  const view = $("view"), chart = $("chart"), spacer = $("spacer"), tip = $("tip");
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);

  // Decoding (the inverse of timeline._encode): strings are table indices, numbers JSON text.
  function dec(v) {
    if (v === null || typeof v === "boolean") return v;
    if (typeof v === "number") return S[v];
    if (typeof v === "string") return JSON.parse(v);
    if (Array.isArray(v)) return v.map(dec);
    return pairs(v.o);
  }
  function pairs(p) { const o = {}; for (let i = 0; i < p.length; i += 2) o[S[p[i]]] = dec(p[i + 1]); return o; }
  const laneName = (l) => S[LANES[l][0]];
  // The label column fits the longest lane name (11px monospace), within reason.
  const LABEL = Math.min(330, 16 + 6.7 * LANES.reduce((n, _, l) => Math.max(n, laneName(l).length), 8));
  const kindOf = (r) => S[r[3]];
  const family = (kind) => kind.split(".")[0];

  const idx = new Map(); R.forEach((r, i) => idx.set(r[0], i));
  const perLane = LANES.map(() => []), marksOf = LANES.map(() => []), barsOf = LANES.map(() => []);
  R.forEach((r, i) => perLane[r[2]].push(i));
  MARKS.forEach((m) => marksOf[m[0]].push(m));
  BARS.forEach((b) => barsOf[b[0]].push(b));
  const cited = new Set(); V.forEach((v) => v.records.forEach((s) => cited.add(s)));
  const differs = new Set(CMP && CMP.first !== null ? CMP.records : []);
  // A trace is in time order; each lane's list is sorted by time all the same (lowerBound needs it).
  perLane.forEach((list) => list.sort((a, b) => R[a][1] - R[b][1] || a - b));
  let tMin = Infinity, tMax = -Infinity;
  for (const r of R) { tMin = Math.min(tMin, r[1]); tMax = Math.max(tMax, r[1]); }
  if (!R.length) tMin = tMax = 0;
  if (tMax <= tMin) tMax = tMin + 1000;
  let t0 = tMin, t1 = tMax, selected = null;
  let shown = null, rows = LANES.map((_, l) => l);  // the filter: which records, which lanes

  // One instant's records (same run, same millisecond) are spread apart in record order, as far
  // as the gap to the next instant allows, so hand-offs within it do not draw over each other.
  const sideStarts = BRANCH.map((b) => b.from);
  const sideOf = (seq) => { let k = 0; for (let j = 0; j < sideStarts.length; j++) if (seq >= sideStarts[j]) k = j; return k; };
  const rank = new Uint16Array(R.length), count = new Uint16Array(R.length), gap = new Float64Array(R.length);
  {
    let start = 0;
    for (let i = 1; i <= R.length; i++) {
      const sideEnds = i < R.length && sideOf(R[i][0]) !== sideOf(R[start][0]);
      if (i === R.length || sideEnds || R[i][1] !== R[start][1]) {
        const next = i < R.length && !sideEnds ? R[i][1] - R[start][1] : Infinity;
        for (let j = start; j < i; j++) { rank[j] = Math.min(j - start, 65535); count[j] = Math.min(i - start, 65535); gap[j] = next; }
        start = i;
      }
    }
  }
  const label = (seq) => {  // a compare page numbers each run's records from 0, after its letter
    if (!CMP) return `#${seq}`;
    const k = sideOf(seq); return `${BRANCH[k].label}#${seq - BRANCH[k].from}`;
  };

  const plotWidth = () => Math.max(50, view.clientWidth - LABEL - 2 * MARGIN);
  let X = (t) => t;  // time -> x in the current window (set by draw)
  function xr(i) {  // a record's x: its time's, moved right by its place in its instant
    const base = X(R[i][1]);
    if (count[i] < 2) return base;
    const room = Math.min(INSTANT * count[i], gap[i] * plotWidth() / (t1 - t0) * 0.8);
    return base + rank[i] * room / count[i];
  }
  function xAt(seq, t) { const i = idx.get(seq); return i !== undefined && R[i][1] === t ? xr(i) : X(t); }
  function lowerBound(list, t) {  // first index in a lane's records at or after t
    let lo = 0, hi = list.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (R[list[mid]][1] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function clock(ms) {
    const neg = ms < 0 ? "-" : ""; ms = Math.abs(Math.round(ms));
    const h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, s = Math.floor(ms / 1000) % 60;
    const p = (n, w) => String(n).padStart(w, "0");
    return `${neg}${p(h, 2)}:${p(m, 2)}:${p(s, 2)}.${p(ms % 1000, 3)}`;
  }
  const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 216e5, 432e5, 864e5];
  function step(span, px) {  // a round tick step: about one label per 110 pixels
    const raw = span / Math.max(1, px / 110);
    for (const k of STEPS) if (k >= raw) return k;
    return Math.ceil(raw / 864e5) * 864e5;
  }
  const BAR_CLASS = ["ok", "failed", "open"];
  function draw() {
    const W = view.clientWidth, H = view.clientHeight, plot = plotWidth();
    X = (t) => LABEL + MARGIN + (t - t0) / (t1 - t0) * plot;
    const x = X;
    const top = view.scrollTop, first = Math.max(0, Math.floor(top / ROW) - 1);
    const last = Math.min(rows.length, Math.ceil((top + H) / ROW) + 1);
    const yOf = new Map();  // lane -> y of its centre, for every filtered lane (arrows need off-screen ones)
    rows.forEach((l, i) => yOf.set(l, AXIS + i * ROW + ROW / 2 - top));
    const out = [`<defs><marker id="head" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z"/></marker></defs>`];
    for (let i = first; i < last; i++) {
      const l = rows[i], y = yOf.get(l), g = LANES[l][1];
      out.push(`<g class="lane g${g}" data-lane="${l}"><rect class="band${i % 2 ? " odd" : ""}" x="0" y="${y - ROW / 2}" width="${W}" height="${ROW}"/>`);
      for (const b of barsOf[l]) {  // a run from start to end; an attempt from send to its answer
        if (b[1] > t1 || b[2] < t0 || (shown && !shown[idx.get(b[3])])) continue;
        const bx = Math.max(LABEL, xAt(b[3], b[1])), bw = Math.max(2, Math.min(W, xAt(b[4], b[2])) - bx);
        out.push(b[5] === 0
          ? `<rect class="bar run ${BAR_CLASS[b[6]]}" data-seq="${b[3]}" data-bar="run" x="${bx.toFixed(1)}" y="${y - 7}" width="${bw.toFixed(1)}" height="14" rx="3"/>`
          : `<rect class="bar attempt ${BAR_CLASS[b[6]]}" data-seq="${b[3]}" data-bar="attempt" x="${bx.toFixed(1)}" y="${y + 3}" width="${bw.toFixed(1)}" height="6" rx="2"/>`);
      }
      const list = perLane[l];
      let a = lowerBound(list, t0), b = lowerBound(list, t1 + 1e-9);
      let visible = 0;
      for (let k = a; k < b; k++) if (!shown || shown[list[k]]) visible++;
      if (visible <= plot) {  // dots, those closer than a dot stacked; past that, bins
        let group = [];  // records within a dot's width of the first: one dot, or a numbered stack
        const flushDots = () => {
          if (!group.length) return;
          const r = R[group[0]], seqs = group.map((i) => R[i][0]), cx = xr(group[0]).toFixed(1);
          const c = seqs.some((q) => cited.has(q)) ? " cited" : "", sel = seqs.includes(selected) ? " sel" : "";
          const dif = seqs.some((q) => differs.has(q)) ? " diff" : "";
          const k = `rec k-${esc(family(kindOf(r)))}${c}${dif}${sel}`;
          out.push(group.length === 1 ? `<circle class="${k}" data-seq="${r[0]}" cx="${cx}" cy="${y}" r="4.5"/>`
            : `<g class="stack" data-seq="${r[0]}" data-stack="${seqs.join(",")}"><circle class="${k}" cx="${cx}" cy="${y}" r="7"/><text class="count" x="${cx}" y="${y + 3.5}">${group.length}</text></g>`);
          group = [];
        };
        for (let k = a; k < b; k++) {
          const i2 = list[k]; if (shown && !shown[i2]) continue;
          if (group.length && xr(i2) - xr(group[0]) >= DOT) flushDots();
          group.push(i2);
        }
        flushDots();
      } else {  // zoomed out: one bar per pixel column, its opacity by how many records it holds
        let col = -1, n = 0, seq = 0, any = false;
        const flush = () => { if (n) out.push(`<rect class="bin${any ? " cited" : ""}" data-seq="${seq}" data-n="${n}" x="${LABEL + MARGIN + col * BIN}" y="${y - 6}" width="${BIN - 1}" height="12" fill-opacity="${Math.min(1, 0.25 + n / 20).toFixed(2)}"/>`); };
        for (let k = a; k < b; k++) {
          const i2 = list[k]; if (shown && !shown[i2]) continue;
          const c2 = Math.floor((x(R[i2][1]) - LABEL - MARGIN) / BIN);
          if (c2 !== col) { flush(); col = c2; n = 0; seq = R[i2][0]; any = false; }
          n++; any = any || cited.has(R[i2][0]);
        }
        flush();
      }
      for (const m of marksOf[l]) {
        if (m[1] < t0 || m[1] > t1 || (shown && !shown[idx.get(m[2])])) continue;
        const mx = +xAt(m[2], m[1]).toFixed(1);
        out.push(m[3] === 1
          ? `<path class="mark crash" data-seq="${m[2]}" d="M${mx - 6},${y - 6}l12,12m0,-12l-12,12"/>`
          : `<path class="mark fault" data-seq="${m[2]}" d="M${mx},${y - 10}l6,9h-12z"/>`);
      }
      out.push(`<text class="label" x="6" y="${y + 4}" data-lane-label="${l}">${esc(laneName(l))}</text></g>`);
    }
    let drawn = 0;
    const arrows = [];
    for (const a of ARROWS) {
      if (a[2] > t1) break;
      if (a[3] < t0 || (shown && !shown[idx.get(a[4])])) continue;
      const ya = yOf.get(a[0]), yb = yOf.get(a[1]);
      if (ya === undefined || yb === undefined) continue;
      const on = (y) => y >= AXIS && y <= H;
      if (!on(ya) && !on(yb)) continue;  // an arrow is drawn when one of its ends is in view
      if (++drawn > MAX_ARROWS) break;
      arrows.push(`<line class="arrow s${a[5]}" data-seq="${a[4]}" x1="${xAt(a[6], a[2]).toFixed(1)}" y1="${ya}" x2="${xAt(a[7], a[3]).toFixed(1)}" y2="${yb}" marker-end="url(#head)"/>`);
    }
    if (drawn <= MAX_ARROWS) out.push(...arrows);
    for (const q of differs) {  // the first difference of a compare page: a line down the lanes
      const i = idx.get(q); if (i === undefined || R[i][1] < t0 || R[i][1] > t1) continue;
      const dx = xr(i).toFixed(1);
      out.push(`<line class="diff-line" data-seq="${q}" x1="${dx}" y1="${AXIS}" x2="${dx}" y2="${H}"/>`);
    }
    out.push(`<rect class="axis-band" x="0" y="0" width="${W}" height="${AXIS}"/>`);
    const st = step(t1 - t0, plot);
    for (let t = Math.ceil(t0 / st) * st; t <= t1; t += st) {
      const tx = x(t).toFixed(1);
      out.push(`<line class="tick" x1="${tx}" y1="${AXIS - 6}" x2="${tx}" y2="${H}"/><text class="tick-label" x="${tx}" y="14">${st >= 1000 ? clock(t).slice(0, 8) : clock(t)}</text>`);
    }
    chart.setAttribute("width", W); chart.setAttribute("height", H);
    chart.innerHTML = out.join("");
    const win = $("window");
    win.dataset.t0 = t0; win.dataset.t1 = t1;
    win.textContent = `${clock(t0)} to ${clock(t1)} of ${clock(tMax)}; ${rows.length} of ${LANES.length} lanes` +
      (drawn > MAX_ARROWS ? `; over ${MAX_ARROWS} arrows in view: zoom in to draw them` : "");
  }
  let pending = false;
  function redraw() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; draw(); }); } }
  function layout() {  // the chart is sticky at the top of the view; the spacer makes the scroll room
    spacer.style.height = `${Math.max(0, AXIS + (rows.length + 1) * ROW - view.clientHeight)}px`; redraw();
  }

  function setWindow(a, b) {
    const span = Math.min(Math.max(b - a, 5), tMax - tMin);
    a = Math.min(Math.max(a, tMin), tMax - span);
    t0 = a; t1 = a + span; redraw();
  }
  function zoom(f, at) { const c = at === undefined ? (t0 + t1) / 2 : at; setWindow(c - (c - t0) * f, c + (t1 - c) * f); }
  const tAt = (px) => t0 + (px - LABEL - MARGIN) / plotWidth() * (t1 - t0);
  // The window that shows these records: their span, and a quarter of it either side (at least
  // a quarter second), never the whole run's proportions.
  // One record alone (or several in one instant) is shown with the run's three records either
  // side of it, so it opens in its context.
  function around(seqs) {
    const found = seqs.map((s) => idx.get(s)).filter((i) => i !== undefined);
    if (!found.length) return;
    const ts = found.map((i) => R[i][1]);
    let lo = Math.min(...ts), hi = Math.max(...ts);
    if (lo === hi) {
      const i = found[0], side = sideOf(R[i][0]);
      for (let j = Math.max(0, i - 3); j <= Math.min(R.length - 1, i + 3); j++) {
        if (sideOf(R[j][0]) === side) { lo = Math.min(lo, R[j][1]); hi = Math.max(hi, R[j][1]); }
      }
    }
    const m = Math.max((hi - lo) * 0.25, 250);
    setWindow(lo - m, hi + m);
  }
  // Where a run's activity is: the shortest stretch holding 95 % of its records (a long quiet
  // tail of timers is left out), with a twentieth of it either side.
  function activity() {
    const ts = R.map((r) => r[1]).sort((a, b) => a - b), n = ts.length;
    if (n < 2) return [tMin, tMax];
    const k = Math.max(1, Math.ceil(n * 0.95));
    let best = 0;
    for (let i = 0; i + k - 1 < n; i++) if (ts[i + k - 1] - ts[i] < ts[best + k - 1] - ts[best]) best = i;
    const lo = ts[best], hi = ts[best + k - 1], m = Math.max((hi - lo) * 0.05, 250);
    return [lo - m, hi + m];
  }

  function fields(v) {
    if (typeof v === "string" && (v.length > 60 || v.includes("\n"))) return `<pre>${esc(v)}</pre>`;
    const text = JSON.stringify(v, null, v && typeof v === "object" && JSON.stringify(v).length > 60 ? 1 : 0);
    return text.includes("\n") ? `<pre>${esc(text)}</pre>` : `<code>${esc(text)}</code>`;
  }
  const link = (q) => `<a href="#r-${q}" data-seq="${q}">${label(q)}</a>`;
  function show(seq) {
    const i = idx.get(seq); if (i === undefined) return;
    const r = R[i], data = pairs(r[4]); selected = seq;
    const same = perLane[r[2]].filter((k) => R[k][1] === r[1] && R[k][0] !== seq).map((k) => R[k][0]);
    const why = V.filter((v) => v.records.includes(seq)).map((v) => `<p class="why">cited by <b>${esc(v.invariant)}</b> (${esc(v.requirement)})</p>`);
    const run = runOf(i);
    $("details").innerHTML = `<h2>${label(seq)} ${esc(kindOf(r))}</h2><p>${esc(laneName(r[2]))} at ${clock(r[1])} (${r[1]} ms)</p>${why.join("")}` +
      (differs.has(seq) ? `<p class="why">the first record where the two runs differ</p>` : "") +
      `<table>${Object.entries(data).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${fields(v)}</td></tr>`).join("")}</table>` +
      (same.length ? `<p>same lane, same time: ${same.slice(0, 40).map(link).join(" ")}</p>` : "") +
      (run ? runSummary(run) : "") + branchHere(i);
    if (run) showRegistry(run, r[1], seq);  // the run's row at this record's time, until the cursor moves
    markEvent(seq);
    redraw();
  }
  // The commands that branch from this record: keep the choices made before it, draw the rest.
  function branchHere(i) {
    if (!K || !BRANCH.length) return "";
    const side = BRANCH[sideOf(R[i][0])];
    if (!side.schedule) return "";
    const q = (s) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\"'\"'")}'`;
    const lines = [side.save, `handoff explore --from ${q(side.schedule)} --at ${K[i]} --seeds 200`,
      `handoff replay --from ${q(side.schedule)} --at ${K[i]} --seed 1 --format html --trace-out branch.html`].filter(Boolean);
    return `<h3>Branch from here</h3><p>Keep the ${K[i]} choices made before this record, draw the rest${side.save ? " (the first line writes the schedule)" : ""}:</p>` +
      `<pre class="cmd" id="branch-cmd">${esc(lines.join("\n"))}</pre><button id="copy-cmd" type="button">copy</button>`;
  }
  function showList(seqs) {  // a stack of records drawn as one: each a link to its fields
    const r = R[idx.get(seqs[0])];
    $("details").innerHTML = `<h2>${seqs.length} records</h2><p>${esc(laneName(r[2]))} from ${clock(r[1])}</p><ul>` +
      seqs.map((q) => { const x2 = R[idx.get(q)]; return `<li>${link(q)} ${esc(kindOf(x2))} ${clock(x2[1])}${cited.has(q) ? ' <b class="why">cited</b>' : ""}</li>`; }).join("") + "</ul>";
  }
  function focus(seq, zoomIn) {  // bring a record into view: its time in the window, its lane on screen
    const i = idx.get(seq); if (i === undefined) return;
    const r = R[i], span = t1 - t0;
    if (zoomIn) around([seq]);
    else if (r[1] < t0 || r[1] > t1) setWindow(r[1] - span / 2, r[1] + span / 2);
    let row = rows.indexOf(r[2]);
    if (row < 0) { $("filter").value = ""; applyFilter(false); row = rows.indexOf(r[2]); }
    const y = row * ROW;
    if (y < view.scrollTop || y > view.scrollTop + view.clientHeight - AXIS - 2 * ROW) view.scrollTop = Math.max(0, y - view.clientHeight / 3);
    show(seq);
  }
  const TAGS = ["run_id", "session", "child", "key", "requester", "child_session_key", "turn_run_id", "dst", "src"];
  let tags = null;
  function tagsOf(i) {
    if (!tags) tags = R.map((r) => {
      const p = r[4], parts = [laneName(r[2])];
      for (let k = 0; k < p.length; k += 2) if (TAGS.includes(S[p[k]]) && typeof p[k + 1] === "number") parts.push(S[p[k + 1]]);
      return parts.join(" ").toLowerCase();
    });
    return tags[i];
  }
  function applyFilter(zoomTo) {  // the lanes and records that mention the filter, zoomed to
    const f = $("filter").value.trim().toLowerCase();
    if (evRun.value.trim().toLowerCase() !== f) { evRun.value = $("filter").value.trim(); filterEvents(); }  // the list follows
    if (!f) { shown = null; rows = LANES.map((_, l) => l); layout(); return; }
    shown = new Uint8Array(R.length);
    const lanesHit = new Set();
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < R.length; i++) if (tagsOf(i).includes(f)) {
      shown[i] = 1; lanesHit.add(R[i][2]); lo = Math.min(lo, R[i][1]); hi = Math.max(hi, R[i][1]);
    }
    rows = LANES.map((_, l) => l).filter((l) => lanesHit.has(l));
    if (zoomTo !== false && lo <= hi) { const m = Math.max((hi - lo) * 0.05, 250); setWindow(lo - m, hi + m); view.scrollTop = 0; }
    layout();
  }

  // -- runs: the summary of a run on click, and its registry row at the time under the cursor --
  // Both are read from the run's records (what the trace shows), never from the model.
  const RUN_ID = S.indexOf("run_id");
  let runs = null;  // run key (a compare page's letter, then the run id) -> its records
  function runKeyOf(i) {
    const p = R[i][4];
    for (let k = 0; k < p.length; k += 2) if (p[k] === RUN_ID && typeof p[k + 1] === "number") {
      const id = S[p[k + 1]]; return CMP ? `${BRANCH[sideOf(R[i][0])].label} ${id}` : id;
    }
    return null;
  }
  function runIndex() {
    if (runs) return runs;
    runs = new Map();
    R.forEach((_, i) => { const key = runKeyOf(i); if (key !== null && !key.startsWith("wave:")) { if (!runs.has(key)) runs.set(key, []); runs.get(key).push(i); } });
    return runs;
  }
  const runOf = (i) => { const key = runKeyOf(i); return key !== null && runIndex().has(key) ? key : null; };
  function rowAt(key, t, upTo) {  // the run's row as its records up to time t (and record upTo) show it
    const row = {run: key.split(" ").pop(), child: "", child_status: "not started", delivery: "waiting for the child",
      attempts: 0, generations: [], went: "", recovery: "", error: "", cleaned_up: false, last: ""};
    const gen = (g) => { if (typeof g === "number" && !row.generations.includes(g)) row.generations.push(g); };
    for (const i of runIndex().get(key) || []) {
      const r = R[i]; if (r[1] > t || (r[1] === t && upTo !== undefined && r[0] > upTo)) break;
      const d = pairs(r[4]), k = kindOf(r);
      row.last = `${label(r[0])} ${k} at ${clock(r[1])}`;
      if (k === "spawn") { row.child = d.child; row.child_status = "spawned"; row.requester = d.requester; row.required = d.required; }
      else if (k === "child.start") row.child_status = "running";
      else if (k === "child.end") { row.child_status = `${d.status} (${d.stop_reason})`; row.delivery = "pending"; if (d.archive) gen(d.archive.generation); }
      else if (k === "child.correction") row.child_status += ", corrected";
      else if (k === "delivery.attempt") { row.attempts = d.attempt; row.delivery = `sending (attempt ${d.attempt}, try ${d.try})`; }
      else if (k === "delivery.send_failed") { row.delivery = `send failed (${d.class})`; row.error = (d.error && d.error.message) || ""; }
      else if (k === "delivery.retry") row.delivery = `retry at ${clock(d.next_attempt_at_ms)}`;
      else if (k === "delivery.defer") row.delivery = `deferred: ${d.pending} pending, recheck at ${clock(d.recheck_at_ms)}`;
      else if (k === "delivery.delivered") row.delivery = d.duplicate ? "delivered (a duplicate)" : "delivered";
      else if (k === "delivery.give_up") { row.delivery = `given up: ${d.reason} (${d.status})`; if (d.error) row.error = d.error; }
      else if (k === "delivery.reopen") { row.delivery = "reopened"; gen(d.generation); }
      else if (k === "delivery.redrive") { row.delivery = `redriven (was ${d.was})`; gen(d.generation); }
      else if (k === "delivery.dismiss") row.delivery = `dismissed (was ${d.was})`;
      else if (k === "delivery.skip") row.delivery = `skipped (${d.reason})`;
      else if (k === "delivery.announce_skip") row.delivery = "announce skipped";
      else if (k === "delivery.stale") row.delivery += `; a stale ${d.what} ignored`;
      else if (k === "delivery.warning") row.error = d.error;
      else if (k === "gateway.chunk") row.went = `${d.channel} to ${d.to}${d.thread ? ` (thread ${d.thread})` : ""}`;
      else if (k === "gateway.inject" && !row.went) row.went = `session ${d.session}`;
      else if (k === "requester.accept") { row.delivery = "accepted by the requester"; gen(d.generation); row.went = row.went || laneName(r[2]); }
      else if (k === "requester.duplicate") row.delivery += "; a duplicate receipt";
      else if (k === "recovery.attempt") row.recovery = `attempt ${d.attempt}${d.found ? ", found" : ""}`;
      else if (k === "recovery.end") row.recovery = `${d.outcome} after ${d.attempts}`;
      else if (k === "run.cleanup") { row.cleaned_up = true; row.delivery = d.delivery; }
    }
    return row;
  }
  function finalRow(key) {  // the registry's own row when the world stopped (world.rows)
    const id = key.split(" ").pop(), side = CMP ? key.split(" ")[0] : null;
    for (let i = R.length - 1; i >= 0; i--) {
      if (kindOf(R[i]) !== "world.rows" || (side && BRANCH[sideOf(R[i][0])].label !== side)) continue;
      return (pairs(R[i][4]).rows || []).find((row) => row.run_id === id) || null;
    }
    return null;
  }
  function runSummary(key) {
    const row = rowAt(key, Infinity), recs = runIndex().get(key), end = finalRow(key);
    const attempts = recs.filter((i) => kindOf(R[i]) === "delivery.attempt").map((i) => link(R[i][0]));
    const cell = (k, v) => `<tr><th>${esc(k)}</th><td>${v}</td></tr>`;
    return `<h3>Run ${esc(row.run)}${row.child ? ` (child ${esc(row.child)})` : ""}</h3><table class="run">` +
      cell("status", esc(row.child_status)) + cell("attempts", `${row.attempts}${attempts.length ? ": " + attempts.join(" ") : ""}`) +
      cell("generations", esc(row.generations.join(", ") || "1")) + cell("outcome", esc(row.delivery)) +
      cell("went to", esc(row.went || "nowhere yet")) + (row.recovery ? cell("recovery", esc(row.recovery)) : "") +
      (row.error ? cell("last error", esc(row.error)) : "") +
      cell("records", `${recs.length}: ${link(R[recs[0]][0])} to ${link(R[recs[recs.length - 1]][0])} <a href="#filter=${encodeURIComponent(row.run)}" data-filter="${esc(row.run)}">(show only this run)</a>`) +
      (end ? cell("registry at the end", `<code>${esc(JSON.stringify(end))}</code>`) : "") + "</table>";
  }
  // The run under the cursor: the child run whose bar the lane holds (the latest started by
  // then), else the selected record's.
  function runUnder(lane, t) {
    let best = null;
    for (const b of barsOf[lane]) if (b[5] === 0 && b[1] <= t) best = b;
    if (best) return runOf(idx.get(best[3]));
    return selected !== null ? runOf(idx.get(selected)) : null;
  }
  function showRegistry(key, t, upTo) {
    const box = $("registry");
    if (!key) { box.hidden = true; return; }
    const row = rowAt(key, t, upTo);
    box.hidden = false;
    box.innerHTML = `<b>${esc(row.run)} at ${clock(t)}${upTo !== undefined ? `, ${label(upTo)}` : ""}</b> (its registry row as the trace shows it): child ${esc(row.child_status)}; ` +
      `delivery ${esc(row.delivery)}; attempts ${row.attempts}; generation ${esc(row.generations.join(", ") || "1")}` +
      (row.went ? `; went to ${esc(row.went)}` : "") + (row.recovery ? `; recovery ${esc(row.recovery)}` : "") +
      (row.cleaned_up ? "; cleaned up" : "") + (row.last ? `<br><small>last: ${esc(row.last)}</small>` : "");
  }

  // -- the event list: every record in order, by kind and by run, each a link into the lanes --
  const evList = $("ev-list"), evRows = $("ev-rows"), evKind = $("ev-kind"), evRun = $("ev-run");
  let evItems = R.map((_, i) => i);
  {
    const kinds = new Map();
    R.forEach((r) => kinds.set(kindOf(r), (kinds.get(kindOf(r)) || 0) + 1));
    evKind.innerHTML = `<option value="">every kind (${R.length})</option>` +
      [...kinds.keys()].sort().map((k) => `<option value="${esc(k)}">${esc(k)} (${kinds.get(k)})</option>`).join("");
  }
  function filterEvents() {
    const k = evKind.value, f = evRun.value.trim().toLowerCase();
    evItems = [];
    for (let i = 0; i < R.length; i++) if ((!k || kindOf(R[i]) === k) && (!f || tagsOf(i).includes(f))) evItems.push(i);
    $("ev-count").textContent = `${evItems.length} of ${R.length}`;
    drawEvents();
  }
  function drawEvents() {
    evRows.style.height = `${evItems.length * EV_ROW}px`;
    const a = Math.max(0, Math.floor(evList.scrollTop / EV_ROW) - 2);
    const b = Math.min(evItems.length, Math.ceil((evList.scrollTop + evList.clientHeight) / EV_ROW) + 2);
    const out = [];
    for (let n = a; n < b; n++) {
      const i = evItems[n], r = R[i], q = r[0];
      out.push(`<a class="ev f-${esc(family(kindOf(r)))}${q === selected ? " sel" : ""}${cited.has(q) ? " cited" : ""}${differs.has(q) ? " diff" : ""}" href="#r-${q}" data-seq="${q}" data-zoom="1" style="top:${n * EV_ROW}px">` +
        `<span class="ev-seq">${label(q)}</span> <span class="ev-t">${clock(r[1])}</span> ${esc(kindOf(r))} <span class="ev-lane">${esc(laneName(r[2]))}</span></a>`);
    }
    evRows.innerHTML = out.join("");
  }
  function markEvent(seq) {  // the selected record's row in view in the list
    const n = evItems.indexOf(idx.get(seq));
    if (n >= 0 && (n * EV_ROW < evList.scrollTop || n * EV_ROW > evList.scrollTop + evList.clientHeight - EV_ROW)) evList.scrollTop = Math.max(0, n * EV_ROW - evList.clientHeight / 3);
    drawEvents();
  }
  evKind.addEventListener("change", filterEvents);
  evRun.addEventListener("input", filterEvents);
  evList.addEventListener("scroll", drawEvents);

  // Header: summary, repro, violations (each cited record a link that zooms to it), comparison.
  $("summary").textContent = D.summary || "";
  if (D.repro) { $("repro").textContent = D.repro; $("repro-line").hidden = false; }
  if (V.length) {
    const box = $("violations"); box.hidden = false;
    box.innerHTML = `<h2>${V.length} violation${V.length > 1 ? "s" : ""}</h2><ul>` + V.map((v) =>
      `<li class="violation">${v.side ? `<b>${esc(v.side)}</b>: ` : ""}<b>${esc(v.invariant)}</b> (${esc(v.requirement)}): ${esc(v.message)}<br>records: ` +
      (v.records.length ? v.records.map((s) => `<a class="cite" href="#r-${s}" data-seq="${s}" data-zoom="1">${label(s)} ${esc(idx.has(s) ? kindOf(R[idx.get(s)]) : "?")}</a>`).join(" ") +
        ` <a href="#" class="span" data-records="${v.records.join(",")}">(zoom to them)</a>` : "none cited") +
      `</li>`).join("") + "</ul>";
  }
  if (CMP) {
    const box = $("compare"); box.hidden = false;
    const side = (s) => `<b>${esc(s.label)}</b>: ${esc(s.title)} (${s.records} records${s.violations ? `, ${s.violations} violation(s)` : ""})`;
    box.innerHTML = `<h2>Two runs, aligned</h2><p>${CMP.sides.map(side).join("<br>")}</p>` +
      (CMP.first === null ? "<p>The two traces are identical.</p>"
        : `<p class="diff-text">First difference at record ${CMP.first}: ${CMP.records.map((q) => `<a class="diff-link" href="#r-${q}" data-seq="${q}" data-zoom="1">${label(q)} ${esc(kindOf(R[idx.get(q)]))} at ${clock(R[idx.get(q)][1])}</a>`).join(" against ")}` +
          `${CMP.records.length < 2 ? ` (the other run ended after ${CMP.first} records)` : ""} <a href="#" data-records="${CMP.records.join(",")}">(zoom to it)</a></p>`);
  }
  document.body.addEventListener("click", (e) => {
    if (e.target.id === "copy-cmd") {  // the clipboard where the page may use it, else select the text
      const text = $("branch-cmd").textContent, sel = window.getSelection(), range = document.createRange();
      range.selectNodeContents($("branch-cmd")); sel.removeAllRanges(); sel.addRange(range);
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => { e.target.textContent = "copied"; }, () => {});
      return;
    }
    const z = e.target.closest("a[data-records]");
    if (z) {  // the window around a violation's records, their lanes on screen
      e.preventDefault();
      const seqs = z.dataset.records.split(",").map(Number);
      around(seqs); focus(seqs[0]); return;
    }
    const f = e.target.closest("a[data-filter]");
    if (f) { e.preventDefault(); $("filter").value = f.dataset.filter; applyFilter(); return; }
    const a = e.target.closest("a[data-seq]"); if (!a) return;
    e.preventDefault(); focus(Number(a.dataset.seq), true);
  });

  // Pointer: drag pans, ctrl+wheel (or wheel over the axis) zooms, shift+wheel pans, wheel scrolls.
  let drag = null;
  chart.addEventListener("mousedown", (e) => { drag = {x: e.clientX, t0, t1, moved: false}; });
  window.addEventListener("mousemove", (e) => {
    if (drag) {
      const dx = e.clientX - drag.x; if (Math.abs(dx) > 3) drag.moved = true;
      const dt = dx / plotWidth() * (drag.t1 - drag.t0);
      if (drag.moved) setWindow(drag.t0 - dt, drag.t1 - dt);
    }
    if (chart.contains(e.target)) {  // the registry row of the run under the cursor, at its time
      const rect = chart.getBoundingClientRect(), px = e.clientX - rect.left, py = e.clientY - rect.top;
      const row = Math.floor((py - AXIS + view.scrollTop) / ROW);
      if (px > LABEL && py > AXIS && row >= 0 && row < rows.length) showRegistry(runUnder(rows[row], tAt(px)), tAt(px));
    }
    const el = e.target.closest && e.target.closest("[data-seq]");
    if (!el || !chart.contains(el)) { tip.hidden = true; return; }
    const r = R[idx.get(Number(el.dataset.seq))], d = pairs(r[4]);
    const brief = Object.entries(d).slice(0, 4).map(([k, v]) => `${k}=${JSON.stringify(v)}`.slice(0, 80)).join("\n");
    if (el.dataset.stack) {
      const seqs = el.dataset.stack.split(",").map(Number);
      tip.textContent = `${seqs.length} records at ${clock(r[1])} on ${laneName(r[2])} (click to list):\n` +
        seqs.slice(0, 12).map((q) => `${label(q)} ${kindOf(R[idx.get(q)])}`).join("\n") + (seqs.length > 12 ? "\n..." : "");
    } else if (el.dataset.bar) tip.textContent = `${el.dataset.bar === "run" ? "child run" : "delivery attempt"} from ${label(r[0])} ${kindOf(r)} at ${clock(r[1])} (click for the run)`;
    else tip.textContent = el.dataset.n ? `${el.dataset.n} records from ${label(r[0])} (zoom in)` : `${label(r[0])} ${kindOf(r)} @ ${clock(r[1])}\n${laneName(r[2])}\n${brief}`;
    tip.style.left = `${e.clientX + 14}px`; tip.style.top = `${e.clientY + 14}px`; tip.hidden = false;
  });
  window.addEventListener("mouseup", (e) => {
    const was = drag; drag = null;
    if (!was || was.moved) return;
    const lab = e.target.closest && e.target.closest("[data-lane-label]");
    if (lab) { const l = Number(lab.dataset.laneLabel), b = barsOf[l].find((x) => x[5] === 0); if (b) show(b[3]); return; }
    const el = e.target.closest && e.target.closest("[data-seq]");
    if (!el || !chart.contains(el)) return;
    if (el.dataset.n) { const t = R[idx.get(Number(el.dataset.seq))][1]; zoom(0.1, t); }
    else if (el.dataset.stack) showList(el.dataset.stack.split(",").map(Number));
    else show(Number(el.dataset.seq));
  });
  view.addEventListener("wheel", (e) => {
    const rect = chart.getBoundingClientRect(), px = e.clientX - rect.left;
    if (e.ctrlKey || e.metaKey || e.clientY - rect.top < AXIS) { e.preventDefault(); zoom(Math.pow(1.2, e.deltaY / 100), px > LABEL ? tAt(px) : undefined); }
    else if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) { e.preventDefault(); const dt = (e.deltaX || e.deltaY) / 500 * (t1 - t0); setWindow(t0 + dt, t1 + dt); }
  }, {passive: false});
  view.addEventListener("scroll", redraw);
  window.addEventListener("resize", () => { layout(); drawEvents(); });
  window.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    const span = t1 - t0;
    if (e.key === "+" || e.key === "=") zoom(0.5); else if (e.key === "-") zoom(2);
    else if (e.key === "0") setWindow(tMin, tMax);
    else if (e.key === "ArrowLeft") setWindow(t0 - span / 5, t1 - span / 5);
    else if (e.key === "ArrowRight") setWindow(t0 + span / 5, t1 + span / 5);
  });
  $("zoom-in").onclick = () => zoom(0.5); $("zoom-out").onclick = () => zoom(2);
  $("fit").onclick = () => setWindow(tMin, tMax);
  $("filter").addEventListener("input", () => applyFilter());

  // Where the page opens: a record a link names (#r-12), a filter (#filter=run-3), else a
  // compare page's first difference, else a failure's first violation's records, else the span
  // that holds the run's activity.
  function opening() {
    const start = /^#r-(\d+)$/.exec(location.hash), filtered = /^#filter=(.+)$/.exec(location.hash);
    if (filtered) { $("filter").value = decodeURIComponent(filtered[1]); applyFilter(); }
    else if (start) focus(Number(start[1]), true);
    else if (differs.size) { around([...differs]); focus([...differs][0]); }
    else if (V.length && V[0].records.length) { around(V[0].records); focus(V[0].records[0]); }
    else { const [a, b] = activity(); setWindow(a, b); }
  }
  window.addEventListener("hashchange", opening);
  layout(); filterEvents(); opening(); draw();  // the first frame now, not on the next animation frame
})();
