"""Trace exports: JSONL (the canonical form), a plain-text timeline, Chrome trace-event JSON (opens
in Perfetto: one track per actor, child runs as spans), a Mermaid sequence diagram and a
self-contained HTML timeline (sim/html/timeline.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from actors import addresses
from sim.textout import cut
from sim.trace import Record

FORMATS = ("jsonl", "text", "perfetto", "mermaid", "html")


def to_jsonl(records: Iterable[Record]) -> str:
    return "".join(r.jsonl() + "\n" for r in records)


def _clock(t_ms: int) -> str:
    seconds, ms = divmod(t_ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}.{ms:03d}"


def _value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if (not value or " " in value or "\n" in value
                                                         or '"' in value) else value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_text(records: Iterable[Record]) -> str:
    """One line per record: virtual time, actor, kind, then the data as key=value pairs, each
    value cut at ``FIELD_CHARS`` with its length shown (``jsonl`` keeps every value whole)."""
    lines = []
    for r in records:
        fields = " ".join(f"{k}={cut(_value(v))}" for k, v in r.data.items())
        lines.append(f"{_clock(r.t_ms)}  {r.actor:<28} {r.kind:<22} {fields}".rstrip())
    return "\n".join(lines) + "\n"


def _tracks(records: list[Record]) -> dict[str, int]:
    """Actors in order of first appearance (a dict, so the order is the trace's)."""
    tracks: dict[str, int] = {}
    for r in records:
        tracks.setdefault(r.actor, len(tracks) + 1)
    return tracks


def to_perfetto(records: Iterable[Record]) -> str:
    """Chrome trace-event JSON: instant events per record, a span per child run."""
    records = list(records)
    tracks = _tracks(records)
    events: list[dict[str, object]] = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "handoff"}}]
    for actor, tid in tracks.items():
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid,
                       "args": {"name": actor}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": tid,
                       "args": {"sort_index": tid}})
    for r in records:
        ts = r.t_ms * 1000  # microseconds
        tid = tracks[r.actor]
        if r.kind == "child.start":
            events.append({"ph": "B", "name": f"run {r.data['run_id']}", "cat": "child",
                           "pid": 1, "tid": tid, "ts": ts, "args": dict(r.data)})
        elif r.kind == "child.end":
            events.append({"ph": "E", "pid": 1, "tid": tid, "ts": ts, "args": dict(r.data)})
        events.append({"ph": "i", "s": "t", "name": r.kind, "cat": r.actor.split(":")[0],
                       "pid": 1, "tid": tid, "ts": ts, "args": {"seq": r.seq, **r.data}})
    return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"}, ensure_ascii=False) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid message text ends at a newline and treats ';' and '#' specially.
    return " ".join(text.replace(";", ",").replace("#", "").split())[:120]


def to_mermaid(records: Iterable[Record]) -> str:
    """A sequence diagram of the hand-offs: spawns, ends, sends, receipts, faults and crashes."""
    records = list(records)
    tracks = _tracks(records)
    lines = ["sequenceDiagram"]
    for actor, n in tracks.items():
        lines.append(f"    participant A{n} as {_mermaid_text(actor)}")
    run_actor: dict[str, str] = {}
    requester_of: dict[str, str] = {}
    for r in records:
        me = f"A{tracks[r.actor]}"
        d = r.data
        at = _clock(r.t_ms)
        if r.kind == "spawn":
            run_actor[d["run_id"]] = addresses.child(d["child"])
            requester_of[d["run_id"]] = r.actor
            child = tracks.get(addresses.child(d["child"]))
            target = f"A{child}" if child else me
            lines.append(f"    {me}->>{target}: {at} spawn {d['run_id']}")
        elif r.kind == "child.end" and addresses.DELIVERY in tracks:
            lines.append(f"    {me}->>A{tracks[addresses.DELIVERY]}: {at} ended {d['status']} "
                         f"({d['stop_reason']})")
        elif r.kind == "delivery.attempt" and d["run_id"] in requester_of:
            target = f"A{tracks[requester_of[d['run_id']]]}"
            lines.append(f"    {me}-){target}: {at} completion {d['run_id']} "
                         f"(attempt {d['attempt']}, try {d['try']})")
        elif r.kind in ("requester.accept", "requester.duplicate"):
            what = "received" if r.kind == "requester.accept" else "duplicate suppressed"
            lines.append(f"    Note over {me}: {at} {what} {d['run_id']}")
        elif r.kind in ("delivery.delivered", "delivery.give_up", "delivery.retry",
                        "delivery.send_failed"):
            detail = d.get("status") or d.get("error") or ""
            if isinstance(detail, dict):  # an error chain: its class and outermost message
                detail = f"{d.get('class', '')} {detail.get('message', '')}"
            lines.append(f"    Note over {me}: {at} {r.kind.split('.')[1]} {d['run_id']} "
                         f"{_mermaid_text(str(detail))}".rstrip())
        elif r.kind == "crash":
            lines.append(f"    Note over {me}: {at} CRASH at {d['point']}")
        elif r.kind == "fault":
            target = me
            if "run_id" in d and d["run_id"] in run_actor and run_actor[d["run_id"]] in tracks:
                target = f"A{tracks[run_actor[d['run_id']]]}"
            lines.append(f"    Note over {target}: {at} fault {d['kind']}")
        elif r.kind in ("child.abort", "world.heal", "world.end", "requester.history"):
            lines.append(f"    Note over {me}: {at} {r.kind}")
    return "\n".join(lines) + "\n"


def render(records: Iterable[Record], fmt: str) -> str:
    if fmt == "jsonl":
        return to_jsonl(records)
    if fmt == "text":
        return to_text(records)
    if fmt == "perfetto":
        return to_perfetto(records)
    if fmt == "mermaid":
        return to_mermaid(records)
    if fmt == "html":  # a bare trace; ``handoff replay`` adds the run's violations and repro
        from sim.html.timeline import to_html

        return to_html(records, title="handoff trace")
    raise ValueError(f"unknown trace format {fmt!r}; expected one of {FORMATS}")
