// The handoff timeline page (sim/export_html.py embeds its data; nothing is fetched).
// Lanes are drawn lazily: only the rows and the time window in view, a lane's records binned
// into pixel columns when more of them fall in the window than the plot has room for.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("timeline-data").textContent);
  const S = D.S, R = D.R, LANES = D.lanes, ARROWS = D.arrows, MARKS = D.marks, V = D.V;
  const ROW = 22, AXIS = 26, MARGIN = 10, BIN = 4, DOT = 6, MAX_ARROWS = 800;
  const $ = (id) => document.getElementById(id);
  const view = $("view"), chart = $("chart"), spacer = $("spacer"), tip = $("tip");
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})[c]);

  // Decoding (the inverse of export_html._encode): strings are table indices, numbers JSON text.
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

  const idx = new Map(); R.forEach((r, i) => idx.set(r[0], i));
  const perLane = LANES.map(() => []), marksOf = LANES.map(() => []);
  R.forEach((r, i) => perLane[r[2]].push(i));
  MARKS.forEach((m) => marksOf[m[0]].push(m));
  const cited = new Set(); V.forEach((v) => v.records.forEach((s) => cited.add(s)));
  // A trace is in time order; each lane's list is sorted by time all the same (lowerBound needs it).
  perLane.forEach((list) => list.sort((a, b) => R[a][1] - R[b][1] || a - b));
  let tMin = Infinity, tMax = -Infinity;
  for (const r of R) { tMin = Math.min(tMin, r[1]); tMax = Math.max(tMax, r[1]); }
  if (!R.length) tMin = tMax = 0;
  if (tMax <= tMin) tMax = tMin + 1000;
  let t0 = tMin, t1 = tMax, selected = null;
  let shown = null, rows = LANES.map((_, l) => l);  // the filter: which records, which lanes

  const plotWidth = () => Math.max(50, view.clientWidth - LABEL - 2 * MARGIN);
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
  function draw() {
    const W = view.clientWidth, H = view.clientHeight, plot = plotWidth();
    const x = (t) => LABEL + MARGIN + (t - t0) / (t1 - t0) * plot;
    const top = view.scrollTop, first = Math.max(0, Math.floor(top / ROW) - 1);
    const last = Math.min(rows.length, Math.ceil((top + H) / ROW) + 1);
    const yOf = new Map();  // lane -> y of its centre, for every filtered lane (arrows need off-screen ones)
    rows.forEach((l, i) => yOf.set(l, AXIS + i * ROW + ROW / 2 - top));
    const out = [`<defs><marker id="head" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L8,4L0,8z"/></marker></defs>`];
    for (let i = first; i < last; i++) {
      const l = rows[i], y = yOf.get(l), g = LANES[l][1];
      out.push(`<g class="lane g${g}" data-lane="${l}"><rect class="band${i % 2 ? " odd" : ""}" x="0" y="${y - ROW / 2}" width="${W}" height="${ROW}"/>`);
      const list = perLane[l];
      let a = lowerBound(list, t0), b = lowerBound(list, t1 + 1e-9);
      let visible = 0;
      for (let k = a; k < b; k++) if (!shown || shown[list[k]]) visible++;
      if (visible <= plot) {  // dots, those closer than a dot stacked; past that, bins
        let group = [];  // records within a dot's width of the first: one dot, or a numbered stack
        const flushDots = () => {
          if (!group.length) return;
          const r = R[group[0]], seqs = group.map((i) => R[i][0]), cx = x(r[1]).toFixed(1);
          const c = seqs.some((q) => cited.has(q)) ? " cited" : "", sel = seqs.includes(selected) ? " sel" : "";
          const k = `rec k-${esc(kindOf(r).split(".")[0])}${c}${sel}`;
          out.push(group.length === 1 ? `<circle class="${k}" data-seq="${r[0]}" cx="${cx}" cy="${y}" r="4.5"/>`
            : `<g class="stack" data-seq="${r[0]}" data-stack="${seqs.join(",")}"><circle class="${k}" cx="${cx}" cy="${y}" r="7"/><text class="count" x="${cx}" y="${y + 3.5}">${group.length}</text></g>`);
          group = [];
        };
        for (let k = a; k < b; k++) {
          const i2 = list[k]; if (shown && !shown[i2]) continue;
          if (group.length && x(R[i2][1]) - x(R[group[0]][1]) >= DOT) flushDots();
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
        const mx = x(m[1]).toFixed(1);
        out.push(m[3] === 1
          ? `<path class="mark crash" data-seq="${m[2]}" d="M${mx - 6},${y - 6}l12,12m0,-12l-12,12"/>`
          : `<path class="mark fault" data-seq="${m[2]}" d="M${mx},${y - 10}l6,9h-12z"/>`);
      }
      out.push(`<text class="label" x="6" y="${y + 4}">${esc(laneName(l))}</text></g>`);
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
      arrows.push(`<line class="arrow s${a[5]}" data-seq="${a[4]}" x1="${x(a[2]).toFixed(1)}" y1="${ya}" x2="${x(a[3]).toFixed(1)}" y2="${yb}" marker-end="url(#head)"/>`);
    }
    if (drawn <= MAX_ARROWS) out.push(...arrows);
    out.push(`<rect class="axis-band" x="0" y="0" width="${W}" height="${AXIS}"/>`);
    const st = step(t1 - t0, plot);
    for (let t = Math.ceil(t0 / st) * st; t <= t1; t += st) {
      const tx = x(t).toFixed(1);
      out.push(`<line class="tick" x1="${tx}" y1="${AXIS - 6}" x2="${tx}" y2="${H}"/><text class="tick-label" x="${tx}" y="14">${st >= 1000 ? clock(t).slice(0, 8) : clock(t)}</text>`);
    }
    chart.setAttribute("width", W); chart.setAttribute("height", H);
    chart.innerHTML = out.join("");
    $("window").textContent = `${clock(t0)} to ${clock(t1)}; ${rows.length} of ${LANES.length} lanes` +
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

  function fields(v) {
    if (typeof v === "string" && (v.length > 60 || v.includes("\n"))) return `<pre>${esc(v)}</pre>`;
    const text = JSON.stringify(v, null, v && typeof v === "object" && JSON.stringify(v).length > 60 ? 1 : 0);
    return text.includes("\n") ? `<pre>${esc(text)}</pre>` : `<code>${esc(text)}</code>`;
  }
  function show(seq) {
    const i = idx.get(seq); if (i === undefined) return;
    const r = R[i], data = pairs(r[4]); selected = seq;
    const same = perLane[r[2]].filter((k) => R[k][1] === r[1] && R[k][0] !== seq).map((k) => R[k][0]);
    const why = V.filter((v) => v.records.includes(seq)).map((v) => `<p class="why">cited by <b>${esc(v.invariant)}</b> (${esc(v.requirement)})</p>`);
    $("details").innerHTML = `<h2>#${seq} ${esc(kindOf(r))}</h2><p>${esc(laneName(r[2]))} at ${clock(r[1])} (${r[1]} ms)</p>${why.join("")}` +
      `<table>${Object.entries(data).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${fields(v)}</td></tr>`).join("")}</table>` +
      (same.length ? `<p>same lane, same time: ${same.slice(0, 40).map((s) => `<a href="#r-${s}" data-seq="${s}">#${s}</a>`).join(" ")}</p>` : "");
    redraw();
  }
  function showList(seqs) {  // a stack of records drawn as one: each a link to its fields
    const r = R[idx.get(seqs[0])];
    $("details").innerHTML = `<h2>${seqs.length} records</h2><p>${esc(laneName(r[2]))} from ${clock(r[1])}</p><ul>` +
      seqs.map((q) => { const x2 = R[idx.get(q)]; return `<li><a href="#r-${q}" data-seq="${q}">#${q} ${esc(kindOf(x2))}</a> ${clock(x2[1])}${cited.has(q) ? ' <b class="why">cited</b>' : ""}</li>`; }).join("") + "</ul>";
  }
  function around(seqs) {  // the window that shows these records with some time either side
    const ts = seqs.map((s) => idx.get(s)).filter((i) => i !== undefined).map((i) => R[i][1]);
    if (!ts.length) return;
    const lo = Math.min(...ts), hi = Math.max(...ts), m = Math.max((hi - lo) * 0.25, (tMax - tMin) * 0.02, 1000);
    setWindow(lo - m, hi + m);
  }
  function focus(seq) {  // bring a record into view: its time in the window, its lane on screen
    const i = idx.get(seq); if (i === undefined) return;
    const r = R[i], span = t1 - t0;
    if (r[1] < t0 || r[1] > t1) setWindow(r[1] - span / 2, r[1] + span / 2);
    let row = rows.indexOf(r[2]);
    if (row < 0) { $("filter").value = ""; applyFilter(); row = rows.indexOf(r[2]); }
    const y = row * ROW;
    if (y < view.scrollTop || y > view.scrollTop + view.clientHeight - AXIS - 2 * ROW) view.scrollTop = Math.max(0, y - view.clientHeight / 3);
    show(seq);
  }
  const TAGS = ["run_id", "session", "child", "key", "requester", "child_session_key", "turn_run_id", "dst", "src"];
  let tags = null;
  function applyFilter() {
    const f = $("filter").value.trim().toLowerCase();
    if (!f) { shown = null; rows = LANES.map((_, l) => l); layout(); return; }
    if (!tags) tags = R.map((r) => {
      const p = r[4], parts = [laneName(r[2])];
      for (let k = 0; k < p.length; k += 2) if (TAGS.includes(S[p[k]]) && typeof p[k + 1] === "number") parts.push(S[p[k + 1]]);
      return parts.join(" ").toLowerCase();
    });
    shown = new Uint8Array(R.length);
    const lanesHit = new Set();
    tags.forEach((t, i) => { if (t.includes(f)) { shown[i] = 1; lanesHit.add(R[i][2]); } });
    rows = LANES.map((_, l) => l).filter((l) => lanesHit.has(l));
    layout();
  }

  // Header: summary, repro, violations (each cited record a link that brings it into view).
  $("summary").textContent = D.summary || "";
  if (D.repro) { $("repro").textContent = D.repro; $("repro-line").hidden = false; }
  if (V.length) {
    const box = $("violations"); box.hidden = false;
    box.innerHTML = `<h2>${V.length} violation${V.length > 1 ? "s" : ""}</h2><ul>` + V.map((v) =>
      `<li class="violation"><b>${esc(v.invariant)}</b> (${esc(v.requirement)}): ${esc(v.message)}<br>records: ` +
      (v.records.length ? v.records.map((s) => `<a class="cite" href="#r-${s}" data-seq="${s}">#${s} ${esc(idx.has(s) ? kindOf(R[idx.get(s)]) : "?")}</a>`).join(" ") +
        ` <a href="#" class="span" data-records="${v.records.join(",")}">(zoom to them)</a>` : "none cited") +
      `</li>`).join("") + "</ul>";
  }
  document.body.addEventListener("click", (e) => {
    const z = e.target.closest("a[data-records]");
    if (z) {  // the window around a violation's records, their lanes on screen
      e.preventDefault();
      const seqs = z.dataset.records.split(",").map(Number);
      around(seqs); focus(seqs[0]); return;
    }
    const a = e.target.closest("a[data-seq]"); if (!a) return;
    e.preventDefault(); focus(Number(a.dataset.seq));
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
    const el = e.target.closest && e.target.closest("[data-seq]");
    if (!el || !chart.contains(el)) { tip.hidden = true; return; }
    const r = R[idx.get(Number(el.dataset.seq))], d = pairs(r[4]);
    const brief = Object.entries(d).slice(0, 4).map(([k, v]) => `${k}=${JSON.stringify(v)}`.slice(0, 80)).join("\n");
    if (el.dataset.stack) {
      const seqs = el.dataset.stack.split(",").map(Number);
      tip.textContent = `${seqs.length} records at ${clock(r[1])} on ${laneName(r[2])} (click to list):\n` +
        seqs.slice(0, 12).map((q) => `#${q} ${kindOf(R[idx.get(q)])}`).join("\n") + (seqs.length > 12 ? "\n..." : "");
    } else tip.textContent = el.dataset.n ? `${el.dataset.n} records from #${r[0]} (zoom in)` : `#${r[0]} ${kindOf(r)} @ ${clock(r[1])}\n${laneName(r[2])}\n${brief}`;
    tip.style.left = `${e.clientX + 14}px`; tip.style.top = `${e.clientY + 14}px`; tip.hidden = false;
  });
  window.addEventListener("mouseup", (e) => {
    const was = drag; drag = null;
    if (!was || was.moved) return;
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
  window.addEventListener("resize", layout);
  window.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT") return;
    const span = t1 - t0;
    if (e.key === "+" || e.key === "=") zoom(0.5); else if (e.key === "-") zoom(2);
    else if (e.key === "0") setWindow(tMin, tMax);
    else if (e.key === "ArrowLeft") setWindow(t0 - span / 5, t1 - span / 5);
    else if (e.key === "ArrowRight") setWindow(t0 + span / 5, t1 + span / 5);
  });
  $("zoom-in").onclick = () => zoom(0.5); $("zoom-out").onclick = () => zoom(2);
  $("fit").onclick = () => setWindow(tMin, tMax);
  $("filter").addEventListener("input", applyFilter);
  layout(); draw();  // the first frame now, not on the next animation frame
  // A link may name a record (#r-12) or a filter (#filter=run-3).
  const start = /^#r-(\d+)$/.exec(location.hash), filtered = /^#filter=(.+)$/.exec(location.hash);
  if (filtered) { $("filter").value = decodeURIComponent(filtered[1]); applyFilter(); draw(); }
  // A failing run opens on its violations' records, the first one selected.
  if (start) focus(Number(start[1]));
  else if (V.length && V[0].records.length) { around(V.flatMap((v) => v.records)); draw(); focus(V[0].records[0]); }
})();
