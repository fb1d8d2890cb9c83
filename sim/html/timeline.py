"""The HTML timeline: one self-contained file that draws a run as swimlanes in any browser, offline.

A lane per actor (requester sessions, child runs, delivery, gateway, then the harness's own lanes),
each hand-off an arrow from sender to receiver at its virtual time, faults and crashes marked on
the lane they hit, a failing run's violations on top, each linked to the records its oracle cites
(``Violation.records``), and the one-line repro. The page's script and style are package data
(``timeline.js``, ``timeline.css``) inlined into the file; nothing is fetched.

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
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from actors import addresses
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
    """The hand-offs the trace shows, as [from lane, to lane, t0, t1, record seq, style], and the
    faults and crashes, as [lane, t, record seq, mark]. Read from the records' own fields (who
    spawned whom, which run a send or a receipt is for), never from the model."""
    child_of: dict[str, str] = {}  # run id -> the child's actor
    last_gateway: dict[str, int] = {}  # run id -> time of the gateway's latest record for it
    pending_end: dict[str, list[Any]] = {}  # run id -> its child.end arrow, until delivery sees it
    pending_send: dict[str, list[Any]] = {}  # delivery key -> its attempt arrow, until the send
    arrows: list[list[Any]] = []
    marks: list[list[int]] = []

    def add(src: str, dst: str, t0: int, t1: int, seq: int, style: int) -> list[Any]:
        arrow = [lane[src], lane[dst], t0, t1, seq, style]
        arrows.append(arrow)
        return arrow

    for r in records:
        d = r.data
        run_id = d.get("run_id") if isinstance(d.get("run_id"), str) else None
        if r.kind == "spawn" and isinstance(d.get("child"), str):
            child = addresses.child(d["child"])
            if run_id is not None:
                child_of[run_id] = child
            if child in lane:
                add(r.actor, child, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "child.end" and run_id is not None and addresses.DELIVERY in lane:
            pending_end[run_id] = add(r.actor, addresses.DELIVERY, r.t_ms, r.t_ms, r.seq, SEND)
        elif r.kind == "delivery.attempt" and addresses.GATEWAY in lane:
            pending_send[str(d.get("key"))] = add(r.actor, addresses.GATEWAY, r.t_ms, r.t_ms,
                                                  r.seq, SEND)
        elif r.kind in _RECEIPTS and addresses.GATEWAY in lane and run_id is not None:
            add(addresses.GATEWAY, r.actor, last_gateway.get(run_id, r.t_ms), r.t_ms, r.seq, SEND)
        elif r.kind == "delivery.delivered" and run_id in last_gateway:
            add(addresses.GATEWAY, r.actor, last_gateway[run_id], r.t_ms, r.seq, ACK)
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
            pending_end.pop(run_id)[3] = r.t_ms
        if r.kind == "gateway.send" and str(d.get("key")) in pending_send:
            pending_send.pop(str(d.get("key")))[3] = r.t_ms
        if r.actor == addresses.GATEWAY and run_id is not None:
            last_gateway[run_id] = r.t_ms
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


def payload(records: Iterable[Record], *, title: str, repro: str | None = None,
            violations: Sequence[Violation] = (), summary: str = "") -> dict[str, Any]:
    """Everything the page draws, as one JSON-ready document."""
    records = list(records)
    s = _Strings()
    lane = _lanes(records)
    arrows, marks = _arrows_and_marks(records, lane)
    return {
        "title": title, "summary": summary, "repro": repro,
        "lanes": [[s(actor), _group(actor)] for actor in lane],
        "R": [[r.seq, r.t_ms, lane[r.actor], s(r.kind), _pairs(r.data, s)] for r in records],
        "arrows": arrows, "marks": marks,
        "V": [v.to_json() for v in violations],
        "S": s.table(),
    }


def _asset(name: str) -> str:
    return resources.files("sim.html").joinpath(name).read_text(encoding="utf-8")


def script_json(doc: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<`` (so no ``</script>``) and no ``/`` (so
    no text reads as a URL), both written as escapes JSON already allows."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return printable(text.replace("<", "\\u003c").replace("/", "\\/"))


def page(doc: dict[str, Any]) -> str:
    """The self-contained page for one payload."""
    title = html.escape(doc["title"])
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n<style>\n{_asset('timeline.css')}</style></head>\n"
            f'<body>\n<header><h1>{title}</h1><p id="summary"></p></header>\n'
            f'<section id="violations" hidden></section>\n'
            f'<p id="repro-line" hidden>repro: <code id="repro"></code></p>\n'
            f'<nav id="controls"><label>filter (run id or session) '
            f'<input id="filter" type="search" placeholder="run-3, agent:main:main"></label> '
            f'<button id="zoom-in" title="zoom in (+)">+</button>'
            f'<button id="zoom-out" title="zoom out (-)">&minus;</button>'
            f'<button id="fit" title="whole run (0)">fit</button> '
            f'<span id="window"></span></nav>\n'
            f'<main><div id="view"><svg id="chart"></svg><div id="spacer"></div></div>\n'
            f'<aside id="details"><p>Click a record for its fields. Drag or shift+wheel to pan, '
            f'ctrl+wheel (or wheel over the time axis) to zoom, wheel to scroll the lanes; '
            f'keys + - 0 and the arrows too.</p></aside></main>\n'
            f'<div id="tip" hidden></div>\n'
            f'<script type="application/json" id="{_DATA_ID}">{script_json(doc)}</script>\n'
            f"<script>\n{_asset('timeline.js')}</script>\n</body></html>\n")


def to_html(records: Iterable[Record], *, title: str, repro: str | None = None,
            violations: Sequence[Violation] = (), summary: str = "") -> str:
    return page(payload(records, title=title, repro=repro, violations=violations,
                        summary=summary))


_DATA = re.compile(rf'<script type="application/json" id="{_DATA_ID}">(.*?)</script>', re.S)


def embedded(text: str) -> dict[str, Any]:
    """The payload a page embeds (for tests and tools reading a saved page back)."""
    found = _DATA.search(text)
    if found is None:
        raise ValueError("not a handoff timeline page: no embedded data")
    doc: dict[str, Any] = json.loads(found.group(1))
    return doc
