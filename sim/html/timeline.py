"""The HTML timeline: one self-contained file that draws a run as swimlanes in any browser, offline.

A lane per actor (requester sessions, child runs, delivery, gateway, then the harness's own lanes),
each hand-off an arrow from sender to receiver at its virtual time, faults and crashes marked on
the lane they hit, child runs and delivery attempts as bars (``runs.py``), a failing run's
violations on top, each linked to the records its oracle cites (``Violation.records``), the
one-line repro, and per record the choices made before it (a branch from there: ``K``). The
page's script and style are package data (``timeline.js``, ``timeline.css``) inlined into the
file; nothing is fetched.

The records are embedded compactly so a big run's file grows linearly with its records and stays
smaller than its JSONL: every string (keys and values) is written once in a string table and
referred to by its index; numbers are written as their JSON text, so a string is a number in the
embedded form and a number a string (``decode`` undoes it). The page draws only what the visible
window shows and bins a lane's records into pixel columns when zoomed out (see timeline.js).
"""

from __future__ import annotations

import html
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

import attrs

from actors import addresses
from sim.html import runs
from sim.invariants.base import Violation
from sim.textout import printable
from sim.trace import Record

# Lane groups, top to bottom: who asks, who works, who delivers, then the harness's own actors.
GROUPS = ("requester", "child", "delivery", "gateway", "other")

# Arrow styles: a hand-off, an acknowledgement, a message the network lost.
SEND, ACK, LOST = 0, 1, 2
# Marks: a scripted fault where it hits, a crash.
FAULT, CRASH = 0, 1

# What the harness asks of a session, drawn as an arrow from the harness lane to it.
_HARNESS_ASKS = ("world.turn", "world.status_check", "world.action", "world.lifecycle")
_RECEIPTS = ("requester.accept", "requester.duplicate", "requester.mirror")
_DATA_ID = "timeline-data"


class _Strings:
    """The string table: each distinct string once, in order of first use."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.index)
        return found

    def table(self) -> list[str]:
        return list(self.index)


def _encode(value: Any, s: _Strings) -> Any:
    """A JSON value with each string as its table index and each number as its JSON text."""
    if isinstance(value, str):
        return s(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, dict):
        return {"o": _pairs(value, s)}
    if isinstance(value, list | tuple):
        return [_encode(item, s) for item in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _pairs(data: Any, s: _Strings) -> list[Any]:
    out: list[Any] = []
    for key, item in data.items():
        out += [s(key), _encode(item, s)]
    return out


def _decode(value: Any, table: Sequence[str]) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return table[value]
    if isinstance(value, str):
        return json.loads(value)
    if isinstance(value, list):
        return [_decode(item, table) for item in value]
    return _unpair(value["o"], table)


def _unpair(pairs: Sequence[Any], table: Sequence[str]) -> dict[str, Any]:
    return {table[pairs[i]]: _decode(pairs[i + 1], table) for i in range(0, len(pairs), 2)}


def decode(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The records a page embeds, as ``Record.to_json`` writes them (what the tests compare)."""
    table = payload["S"]
    lanes = payload["lanes"]
    return [{"seq": seq, "t_ms": t_ms, "actor": table[lanes[lane][0]], "kind": table[kind],
             "data": _unpair(data, table)} for seq, t_ms, lane, kind, data in payload["R"]]


def _group(actor: str) -> int:
    prefix = actor.split(":", 1)[0]
    if actor in (addresses.DELIVERY, addresses.GATEWAY):
        return GROUPS.index(actor)
    return GROUPS.index(prefix) if prefix in ("requester", "child") else GROUPS.index("other")


def _lanes(records: Sequence[Record]) -> dict[str, int]:
    """Actor -> lane number: grouped (``GROUPS``), in order of first appearance in each group,
    except that a child's own session (a nested requester: the spawn record names it) comes right
    after the child's lane, so a tree reads down the page."""
    first = dict.fromkeys(r.actor for r in records)
    nested: dict[str, str] = {}  # child actor -> the requester actor of its own session
    for r in records:
        if r.kind == "spawn" and isinstance(r.data.get("child_session_key"), str):
            session = addresses.requester(r.data["child_session_key"])
            if session in first:
                nested.setdefault(addresses.child(str(r.data.get("child"))), session)
    placed = set(nested.values())
    ordered: dict[str, int] = {}
    for actor in sorted(first, key=_group):  # stable: first appearance kept within a group
        if actor not in placed:
            ordered.setdefault(actor, len(ordered))
        if actor in nested:  # (a session two children share follows the first of them)
            ordered.setdefault(nested[actor], len(ordered))
    return ordered


def _arrows_and_marks(records: Sequence[Record], lane: dict[str, int]
                      ) -> tuple[list[list[int]], list[list[int]]]:
    """The hand-offs the trace shows, as [from lane, to lane, t0, t1, record seq, style, from
    seq, to seq] (the records at the arrow's two ends, so the page can spread one instant's
    hand-offs apart), and the faults and crashes, as [lane, t, record seq, mark]. Read from the
    records' own fields (who spawned whom, which run a send or a receipt is for), never from the
    model."""
    child_of: dict[str, str] = {}  # run id -> the child's actor
    last_gateway: dict[str, tuple[int, int]] = {}  # run id -> the gateway's latest (t, seq) for it
    pending_start: dict[str, list[Any]] = {}  # child actor -> its spawn arrow, until it records
    pending_end: dict[str, list[Any]] = {}  # run id -> its child.end arrow, until delivery sees it
    pending_send: dict[str, list[Any]] = {}  # delivery key -> its attempt arrow, until the send
    arrows: list[list[Any]] = []
    marks: list[list[int]] = []

    def add(src: str, dst: str, t0: int, t1: int, seq: int, style: int,
            start: int | None = None) -> list[Any]:
        arrow = [lane[src], lane[dst], t0, t1, seq, style, seq if start is None else start, seq]
        arrows.append(arrow)
        return arrow

    for r in records:
        d = r.data
        run_id = d.get("run_id") if isinstance(d.get("run_id"), str) else None
        if r.actor in pending_start and r.kind != "spawn":
            pending_start.pop(r.actor)[7] = r.seq
        if r.kind == "spawn" and isinstance(d.get("child"), str):
            child = addresses.child(d["child"])
            if run_id is not None:
                child_of[run_id] = child
            if child in lane:
                pending_start[child] = add(r.actor, child, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "child.end" and run_id is not None and addresses.DELIVERY in lane:
            pending_end[run_id] = add(r.actor, addresses.DELIVERY, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "delivery.attempt" and addresses.GATEWAY in lane:
            pending_send[str(d.get("key"))] = add(r.actor, addresses.GATEWAY, r.t_ms, r.t_ms,
                                                  r.seq, SEND)
        elif r.kind in _RECEIPTS and addresses.GATEWAY in lane and run_id is not None:
            t0, seq0 = last_gateway.get(run_id, (r.t_ms, r.seq))
            add(addresses.GATEWAY, r.actor, t0, r.t_ms, r.seq, SEND, seq0)
        elif r.kind == "delivery.delivered" and run_id in last_gateway:
            t0, seq0 = last_gateway[run_id]
            add(addresses.GATEWAY, r.actor, t0, r.t_ms, r.seq, ACK, seq0)
        elif r.kind == "drop" and d.get("src") in lane and d.get("dst") in lane:
            add(d["src"], d["dst"], r.t_ms, r.t_ms, r.seq, LOST)
        elif r.kind in _HARNESS_ASKS and isinstance(d.get("session"), str):
            session = addresses.requester(d["session"])
            if session in lane:
                add(r.actor, session, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "world.operator" and addresses.DELIVERY in lane:
            add(r.actor, addresses.DELIVERY, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "crash":
            marks.append([lane[r.actor], r.t_ms, r.seq, CRASH])
        elif r.kind == "fault":
            marks.append([lane[_fault_target(d, child_of, lane, r.actor)], r.t_ms, r.seq, FAULT])
        # An arrow ends where its receiver first shows it: a run's end where delivery first
        # records that run, an attempt where the gateway records its send.
        if r.actor == addresses.DELIVERY and run_id in pending_end:
            arrow = pending_end.pop(run_id)
            arrow[3], arrow[7] = r.t_ms, r.seq
        if r.kind == "gateway.send" and str(d.get("key")) in pending_send:
            arrow = pending_send.pop(str(d.get("key")))
            arrow[3], arrow[7] = r.t_ms, r.seq
        if r.actor == addresses.GATEWAY and run_id is not None:
            last_gateway[run_id] = (r.t_ms, r.seq)
    arrows.sort(key=lambda a: (a[2], a[4]))
    return arrows, marks


def _fault_target(data: Any, child_of: dict[str, str], lane: dict[str, int], own: str) -> str:
    """The lane a fault hits: the addressee of a delayed message, the gateway for a send or chunk
    failure, the run's child otherwise; its own lane when the trace names none of these."""
    kind = str(data.get("kind", ""))
    for target in (data.get("dst"),
                   addresses.GATEWAY if kind.startswith(("send-", "chunk")) else None,
                   child_of.get(str(data.get("run_id")))):
        if isinstance(target, str) and target in lane:
            return target
    return own


@attrs.frozen
class Side:
    """One run on a page (a compare page has two): its records, its violations, and where a
    branch from one of its records starts: per record the choices made before it (``steps``,
    sim/world/branch_points.py), the schedule file that holds them, and the command that writes
    that file when the page's user does not have it yet."""

    records: Sequence[Record]
    violations: Sequence[Violation] = ()
    steps: Sequence[int] | None = None
    schedule: str | None = None
    save: str | None = None
    label: str = ""


def with_schedule_out(repro: str, schedule: str) -> str:
    """A run's repro command made to write the run's schedule (and nothing else) instead: what
    a page shows before the commands that branch from the schedule."""
    parts = shlex.split(repro)
    if parts[-2:] == ["--format", "text"]:
        parts = parts[:-2]
    return shlex.join([*parts, "--schedule-out", schedule, "--format", "jsonl"]) + " > /dev/null"


def payload(records: Iterable[Record], *, title: str, repro: str | None = None,
            violations: Sequence[Violation] = (), summary: str = "",
            steps: Sequence[int] | None = None, schedule: str | None = None,
            save: str | None = None) -> dict[str, Any]:
    """Everything the page of one run draws, as one JSON-ready document."""
    return assemble([Side(list(records), violations, steps, schedule, save)], title=title,
                    repro=repro, summary=summary)


def assemble(sides: Sequence[Side], *, title: str, repro: str | None = None,
             summary: str = "") -> dict[str, Any]:
    """The document for one run, or two aligned (a compare page): each actor's lane of the
    second run right under the first's, the second's records numbered on after the first's."""
    s = _Strings()
    lane: dict[tuple[int, str], int] = {}  # (side, actor) -> lane
    names: list[tuple[str, str]] = []  # per lane: (label, actor)
    per_side = [_lanes(side.records) for side in sides]
    for actor in dict.fromkeys(a for lanes in per_side for a in lanes):
        for i, lanes in enumerate(per_side):
            if actor in lanes:
                lane[(i, actor)] = len(names)
                names.append((sides[i].label, actor))
    doc: dict[str, Any] = {"title": title, "summary": summary, "repro": repro,
                           "lanes": [[s(f"{label} {actor}".strip()), _group(actor)]
                                     for label, actor in names],
                           "R": [], "arrows": [], "marks": [], "bars": [], "V": [],
                           "branch": [], "K": []}
    offset = 0
    for i, side in enumerate(sides):
        own = {actor: lane[(i, actor)] for actor in per_side[i]}
        arrows, marks = _arrows_and_marks(side.records, own)

        def shift(seq: int, offset: int = offset) -> int:
            return seq + offset if seq >= 0 else seq  # -1: no record
        doc["R"] += [[r.seq + offset, r.t_ms, own[r.actor], s(r.kind), _pairs(r.data, s)]
                     for r in side.records]
        doc["arrows"] += [[*a[:4], shift(a[4]), a[5], shift(a[6]), shift(a[7])] for a in arrows]
        doc["marks"] += [[m[0], m[1], shift(m[2]), m[3]] for m in marks]
        doc["bars"] += [[*b[:3], shift(b[3]), shift(b[4]), *b[5:]]
                        for b in runs.bars(side.records, own)]
        doc["V"] += [{**v.to_json(), "records": [shift(q) for q in v.records],
                      **({"side": side.label} if side.label else {})} for v in side.violations]
        doc["branch"].append({"from": offset, "schedule": side.schedule, "save": side.save,
                              "label": side.label})
        if doc["K"] is not None and side.steps is not None:
            doc["K"] += list(side.steps)
        else:
            doc["K"] = None
        offset += len(side.records)
    doc["arrows"].sort(key=lambda a: (a[2], a[4]))
    doc["S"] = s.table()
    return doc


def _asset(name: str) -> str:
    return resources.files("sim.html").joinpath(name).read_text(encoding="utf-8")


def script_json(doc: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` (so no ``</script>``) and no ``/`` (so
    no text reads as a URL), both written as escapes JSON already allows."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return printable(text.replace("<", "\\u003c").replace("/", "\\/"))


# What each mark means (swatches drawn with the page's own classes).
def _swatch(body: str, width: int = 22) -> str:
    return f'<svg width="{width}" height="16" aria-hidden="true">{body}</svg>'


_DOT = '<circle class="rec {}" cx="8" cy="8" r="4.5"/>'
LEGEND = "".join(f"<span>{swatch} {text}</span>" for swatch, text in (
    (_swatch(_DOT.format("k-requester")), "requester, spawn"),
    (_swatch(_DOT.format("k-child")), "child"),
    (_swatch(_DOT.format("k-delivery")), "delivery, recovery"),
    (_swatch(_DOT.format("k-gateway")), "gateway"),
    (_swatch(_DOT.format("k-fault")), "fault record"),
    (_swatch(_DOT.format("k-crash")), "crash, drop"),
    (_swatch(_DOT.format("k-world")), "harness"),
    (_swatch('<circle class="rec" cx="9" cy="8" r="7"/>'
             '<text class="count" x="9" y="11.5">3</text>'),
     "records a dot apart (click to list)"),
    (_swatch('<rect class="bin" x="4" y="2" width="3" height="12"/>'
             '<rect class="bin" x="8" y="2" width="3" height="12" fill-opacity=".4"/>'),
     "many records (zoom in)"),
    (_swatch('<line class="arrow" x1="2" y1="8" x2="20" y2="8"/>', 24), "hand-off"),
    (_swatch('<line class="arrow s1" x1="2" y1="8" x2="20" y2="8"/>', 24), "acknowledgement"),
    (_swatch('<line class="arrow s2" x1="2" y1="8" x2="20" y2="8"/>', 24), "lost message"),
    (_swatch('<path class="mark fault" d="M9,2l6,9h-12z"/>'), "fault where it hits"),
    (_swatch('<path class="mark crash" d="M3,2l12,12m0,-12l-12,12"/>'), "crash"),
    (_swatch('<rect class="bar run ok" x="1" y="1" width="20" height="14" rx="3"/>'),
     "child run, start to end (red: failed; grey: open)"),
    (_swatch('<rect class="bar attempt ok" x="1" y="5" width="20" height="6" rx="2"/>'),
     "delivery attempt, send to ack (red: failed; grey: no answer)"),
    (_swatch('<circle class="rec cited" cx="8" cy="8" r="5"/>'), "cited by a violation"),
    (_swatch('<circle class="rec diff" cx="8" cy="8" r="5"/>'), "first difference (compare)"),
    (_swatch('<circle class="rec k-delivery" cx="5" cy="8" r="4"/>'
             '<circle class="rec k-gateway" cx="12" cy="8" r="4"/>'
             '<circle class="rec k-requester" cx="19" cy="8" r="4"/>', 24),
     "one instant's records, spread apart in order"),
))


def page(doc: dict[str, Any]) -> str:
    """The self-contained page for one payload."""
    title = html.escape(doc["title"])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n<style>\n{_asset('timeline.css')}</style></head>\n"
            f'<body>\n<header><h1>{title}</h1><p id="summary"></p></header>\n'
            f'<section id="violations" hidden></section>\n'
            f'<section id="compare" hidden></section>\n'
            f'<p id="repro-line" hidden>repro: <code id="repro"></code></p>\n'
            f'<nav id="controls"><label>filter (run id or session) '
            f'<input id="filter" type="search" placeholder="run-3, agent:main:main"></label> '
            f'<button id="zoom-in" title="zoom in (+)">+</button>'
            f'<button id="zoom-out" title="zoom out (-)">&minus;</button>'
            f'<button id="fit" title="whole run (0)">fit</button> '
            f'<span id="window"></span></nav>\n'
            f'<details id="legend" open><summary>legend</summary>{LEGEND}</details>\n'
            f'<main><div id="view"><svg id="chart"></svg><div id="spacer"></div></div>\n'
            f'<section id="events"><div id="ev-head"><select id="ev-kind" '
            f'title="records of one kind"></select> <input id="ev-run" type="search" '
            f'placeholder="run id, session" title="records of one run"> '
            f'<span id="ev-count"></span></div>'
            f'<div id="ev-list"><div id="ev-rows"></div></div></section>\n'
            f'<aside id="side"><div id="registry" hidden></div>'
            f'<div id="details"><p>Click a record for its fields, its run\'s summary and a '
            f'command that branches from it; hover a child\'s lane for its registry row at '
            f'that time. Drag or shift+wheel to pan, ctrl+wheel (or wheel over the time axis) '
            f'to zoom, wheel to scroll the lanes; keys + - 0 and the arrows too.</p></div>'
            f'</aside></main>\n'
            f'<div id="tip" hidden></div>\n'
            f'<script type="application/json" id="{_DATA_ID}">{script_json(doc)}</script>\n'
            f"<script>\n{_asset('timeline.js')}</script>\n</body></html>\n")


def to_html(records: Iterable[Record], *, title: str, repro: str | None = None,
            violations: Sequence[Violation] = (), summary: str = "",
            steps: Sequence[int] | None = None, schedule: str | None = None,
            save: str | None = None) -> str:
    return page(payload(records, title=title, repro=repro, violations=violations,
                        summary=summary, steps=steps, schedule=schedule, save=save))


_DATA = re.compile(rf'<script type="application/json" id="{_DATA_ID}">(.*?)</script>', re.S)


def embedded(text: str) -> dict[str, Any]:
    """The payload a page embeds (for tests and tools reading a saved page back)."""
    found = _DATA.search(text)
    if found is None:
        raise ValueError("not a handoff timeline page: no embedded data")
    doc: dict[str, Any] = json.loads(found.group(1))
    return doc
