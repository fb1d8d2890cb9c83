"""Trace exports: JSONL (the canonical form) and a plain-text timeline."""

from __future__ import annotations

import json
from collections.abc import Iterable

from sim.trace import Record

FORMATS = ("jsonl", "text")


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
    """One line per record: virtual time, actor, kind, then the data as key=value pairs."""
    lines = []
    for r in records:
        fields = " ".join(f"{k}={_value(v)}" for k, v in r.data.items())
        lines.append(f"{_clock(r.t_ms)}  {r.actor:<28} {r.kind:<22} {fields}".rstrip())
    return "\n".join(lines) + "\n"


def render(records: Iterable[Record], fmt: str) -> str:
    if fmt == "jsonl":
        return to_jsonl(records)
    if fmt == "text":
        return to_text(records)
    raise ValueError(f"unknown trace format {fmt!r}; expected one of {FORMATS}")
