"""OUT-10, OUT-3: read real session logs (V1 and V2 encodings) and select the child-owned suffix.

A log is JSONL: a ``{"type": "session", ...}`` header line, then one event per line. V2 embeds
each model attempt's compact stream in ``assistant/message`` / ``assistant/attempt``; V1 writes
top-level ``assistant/chunk`` events, and its packed rows (``text-chunks``, ``reasoning-chunks``,
``tool-call-chunks`` at top level) stand for runs of chunk events and are expanded here, the way
the upstream reader does, so ``seedLength`` counts match.

Parsing one line is pure (:func:`parse_line`); only :func:`iter_log` touches the file, one line
at a time, so a 100 MB log is read in one pass with memory bounded by its longest line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from actors.errors import InputError
from actors.output import JsonObject, SessionEvent


@attrs.frozen
class SessionHeader:
    """The first line of a session log (``id`` is ``None`` for a header-less event stream)."""

    id: str | None
    version: int | None = None
    parent_session: str | None = None
    # How many (expanded) events at the start were inherited from a forked parent; these are
    # not the child's own (OUT-3). ``None`` when the header has no ``seedLength``.
    seed_length: int | None = None


NO_HEADER = SessionHeader(id=None)

_PACKED_ROWS = {
    "text-chunks": "text-delta",
    "reasoning-chunks": "reasoning-delta",
    "tool-call-chunks": "tool-call-delta",
}


class _Where:
    """Where in the input a value sits, so a complaint names ``file:line: field``."""

    __slots__ = ("line", "path")

    def __init__(self, path: str | None, line: int | None) -> None:
        self.path = path
        self.line = line

    def fail(self, field: str, message: str) -> InputError:
        return InputError(self.path, self.line, field, message)

    def obj(self, value: Any, field: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, "must be a JSON object")
        return value

    def get_obj(self, parent: Mapping[str, Any], key: str, field: str) -> Mapping[str, Any]:
        if key not in parent:
            raise self.fail(field, "is missing")
        return self.obj(parent[key], field)

    def get_str(self, parent: Mapping[str, Any], key: str, field: str) -> str:
        if key not in parent:
            raise self.fail(field, "is missing")
        value = parent[key]
        if not isinstance(value, str):
            raise self.fail(field, "must be a string")
        return value

    def get_int(
        self, parent: Mapping[str, Any], key: str, field: str, *, optional: bool = False
    ) -> int | None:
        if key not in parent:
            if optional:
                return None
            raise self.fail(field, "is missing")
        value = parent[key]
        # bool is an int in Python but never a count or index in a log.
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, "must be an integer")
        return value

    def get_list(self, parent: Mapping[str, Any], key: str, field: str) -> list[Any]:
        if key not in parent:
            raise self.fail(field, "is missing")
        value = parent[key]
        if not isinstance(value, list):
            raise self.fail(field, "must be a JSON array")
        return value

    def get_strs(self, parent: Mapping[str, Any], key: str, field: str) -> list[str]:
        values = self.get_list(parent, key, field)
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise self.fail(f"{field}[{i}]", "must be a string")
        return values


def _check_block(where: _Where, value: Any, field: str) -> None:
    block = where.obj(value, field)
    kind = where.get_str(block, "type", f"{field}.type")
    if kind in ("text", "reasoning"):
        where.get_str(block, "text", f"{field}.text")
    elif kind == "tool-call":
        where.get_str(block, "id", f"{field}.id")
        where.get_str(block, "name", f"{field}.name")
        where.get_str(block, "arguments", f"{field}.arguments")


def _check_chunk(where: _Where, value: Any, field: str) -> None:
    chunk = where.obj(value, field)
    kind = where.get_str(chunk, "type", f"{field}.type")
    if kind in ("text-delta", "reasoning-delta"):
        where.get_str(chunk, "text", f"{field}.text")
    elif kind == "tool-call-delta":
        where.get_str(chunk, "id", f"{field}.id")
        where.get_str(chunk, "argumentsDelta", f"{field}.argumentsDelta")
    elif kind == "block-end":
        _check_block(where, chunk.get("block"), f"{field}.block")
    elif kind == "finish":
        reason = where.get_obj(chunk, "reason", f"{field}.reason")
        where.get_str(reason, "kind", f"{field}.reason.kind")


def _check_run(where: _Where, run: Mapping[str, Any], members: str, field: str) -> int:
    values = where.get_strs(run, members, f"{field}.{members}")
    if len(values) == 0:
        raise where.fail(f"{field}.{members}", "must not be empty")
    index = where.get_int(run, "index", f"{field}.index")
    assert index is not None
    if index < 0:
        raise where.fail(f"{field}.index", "must not be negative")
    return len(values)


def _check_stream(where: _Where, value: Any, field: str) -> None:
    if not isinstance(value, list):
        raise where.fail(field, "must be a JSON array")
    for i, raw in enumerate(value):
        at = f"{field}[{i}]"
        record = where.obj(raw, at)
        kind = where.get_str(record, "type", f"{at}.type")
        if kind == "chunk":
            where.get_int(record, "time", f"{at}.time")
            _check_chunk(where, record.get("chunk"), f"{at}.chunk")
        elif kind in _PACKED_ROWS:
            members = "args" if kind == "tool-call-chunks" else "texts"
            count = _check_run(where, record, members, at)
            where.get_int(record, "time0", f"{at}.time0")
            gaps = where.get_list(record, "dt", f"{at}.dt")
            if len(gaps) != count - 1:
                raise where.fail(
                    f"{at}.dt", f"must hold {count - 1} entries, one fewer than {members}"
                )
            for j, gap in enumerate(gaps):
                if isinstance(gap, bool) or not isinstance(gap, int):
                    raise where.fail(f"{at}.dt[{j}]", "must be an integer")
            if kind == "tool-call-chunks":
                where.get_str(record, "id", f"{at}.id")
        else:
            raise where.fail(f"{at}.type", f"unknown stream record type {kind!r}")


def _check_event(where: _Where, event: Mapping[str, Any], kind: str) -> None:
    """Validate the fields the rule and the stop-reason mappings read; others pass through."""
    if kind == "assistant/message":
        data = where.get_obj(event, "data", "data")
        message = where.get_obj(data, "message", "data.message")
        for i, block in enumerate(where.get_list(message, "content", "data.message.content")):
            _check_block(where, block, f"data.message.content[{i}]")
        if "stream" in data:
            _check_stream(where, data["stream"], "data.stream")
        if "interrupted" in data and not isinstance(data["interrupted"], bool):
            raise where.fail("data.interrupted", "must be true or false")
    elif kind == "assistant/attempt":
        data = where.get_obj(event, "data", "data")
        if "stream" not in data:
            raise where.fail("data.stream", "is missing")
        _check_stream(where, data["stream"], "data.stream")
    elif kind == "assistant/chunk":
        data = where.get_obj(event, "data", "data")
        if "chunk" not in data:
            raise where.fail("data.chunk", "is missing")
        _check_chunk(where, data["chunk"], "data.chunk")
    elif kind == "turn/end":
        data = where.get_obj(event, "data", "data")
        reason = where.get_obj(data, "reason", "data.reason")
        where.get_str(reason, "kind", "data.reason.kind")
    elif "data" in event:
        where.obj(event["data"], "data")


def _expand_packed(where: _Where, row: Mapping[str, Any], kind: str) -> list[SessionEvent]:
    """One packed V1 row back into the ``assistant/chunk`` events it stands for."""
    data = where.get_obj(row, "data", "data")
    members = "args" if kind == "tool-call-chunks" else "texts"
    _check_run(where, data, members, "data")
    values: list[str] = data[members]
    seq0 = where.get_int(row, "seq0", "seq0", optional=True)
    time0 = where.get_int(row, "time0", "time0", optional=True)
    gaps = data.get("dt", [])
    if not isinstance(gaps, list) or any(
        isinstance(g, bool) or not isinstance(g, int) for g in gaps
    ):
        raise where.fail("data.dt", "must be an array of integers")
    chunk_type = _PACKED_ROWS[kind]
    if kind == "tool-call-chunks":
        call_id = where.get_str(data, "id", "data.id")
        name = data.get("name")
        if name is not None and not isinstance(name, str):
            raise where.fail("data.name", "must be a string")
    events: list[SessionEvent] = []
    time = time0
    for i, value in enumerate(values):
        if i > 0 and time is not None and i - 1 < len(gaps):
            time += gaps[i - 1]
        chunk: JsonObject
        if kind == "tool-call-chunks":
            chunk = {"type": chunk_type, "index": data["index"], "id": call_id}
            if name is not None:
                chunk["name"] = name
            chunk["argumentsDelta"] = value
        else:
            chunk = {"type": chunk_type, "index": data["index"], "text": value}
        event: JsonObject = {"type": "assistant/chunk"}
        if seq0 is not None:
            event["seq"] = seq0 + i
        if time is not None:
            event["time"] = time
        event["data"] = {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk}
        events.append(event)
    return events


def _parse_header(where: _Where, row: Mapping[str, Any]) -> SessionHeader:
    session_id = where.get_str(row, "id", "id")
    version = where.get_int(row, "version", "version", optional=True)
    parent = row.get("parentSession")
    if parent is not None and not isinstance(parent, str):
        raise where.fail("parentSession", "must be a string")
    seed_length = where.get_int(row, "seedLength", "seedLength", optional=True)
    if seed_length is not None and seed_length < 0:
        raise where.fail("seedLength", "must not be negative")
    return SessionHeader(session_id, version, parent, seed_length)


def parse_line(
    text: str, *, path: str | None = None, line: int | None = None, first: bool = False
) -> SessionHeader | list[SessionEvent]:
    """Parse one log line: the header (only where ``first``), or the events it holds.

    A blank line holds no events. Packed V1 rows expand to several events.
    """
    where = _Where(path, line)
    if text.strip() == "":
        return []
    try:
        row = json.loads(text)
    except json.JSONDecodeError as err:
        raise where.fail("", f"invalid JSON: {err.msg} (column {err.colno})") from None
    if not isinstance(row, dict):
        raise where.fail("", "a log line must be a JSON object")
    kind = where.get_str(row, "type", "type")
    if kind == "session":
        if not first:
            raise where.fail("type", "a session header may only be the first line")
        return _parse_header(where, row)
    if kind in _PACKED_ROWS:
        return _expand_packed(where, row, kind)
    _check_event(where, row, kind)
    return [row]


@attrs.frozen
class LogEvent:
    """One event with the physical line it came from (several events may share one line)."""

    line: int
    event: SessionEvent


def iter_log(path: str | Path) -> Iterator[SessionHeader | LogEvent]:
    """Stream a log: the header first (``NO_HEADER`` if the file has none), then its events.

    Missing or unreadable files and bad lines raise ``InputError``.
    """
    name = str(path)
    try:
        handle = open(path, "rb")
    except OSError as err:
        raise InputError(name, None, "", f"cannot read the log: {err.strerror}") from None
    with handle:
        seen_first = False
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(name, number, "", "not UTF-8 text") from None
            if text.strip() == "":
                continue
            parsed = parse_line(text, path=name, line=number, first=not seen_first)
            if not seen_first:
                seen_first = True
                if isinstance(parsed, SessionHeader):
                    yield parsed
                    continue
                yield NO_HEADER
            assert not isinstance(parsed, SessionHeader)
            for event in parsed:
                yield LogEvent(number, event)
        if not seen_first:
            yield NO_HEADER


def read_log(path: str | Path) -> tuple[SessionHeader, list[SessionEvent]]:
    """The whole log in memory; for small logs and tests. Use :func:`iter_log` for big ones."""
    header = NO_HEADER
    events: list[SessionEvent] = []
    for item in iter_log(path):
        if isinstance(item, SessionHeader):
            header = item
        else:
            events.append(item.event)
    return header, events


# ---------------------------------------------------------------------------------------------
# OUT-3: the child-owned suffix.


def child_owned(events: Iterable[SessionEvent], header: SessionHeader) -> Iterator[SessionEvent]:
    """Drop a fork's inherited seed: the first ``seedLength`` (expanded) events.

    The cut comes from the header, not from ``session/end-seed``: that marker is a lifecycle
    record that every constructor restore appends, seeded or not.
    """
    skip = header.seed_length or 0
    for position, event in enumerate(events):
        if position >= skip:
            yield event


def last_epoch(events: Iterable[SessionEvent]) -> list[SessionEvent]:
    """The events of the latest activation epoch (see :class:`EpochTracker`)."""
    tracker = EpochTracker()
    epoch: list[SessionEvent] = []
    for event in events:
        if tracker.observe(event):
            epoch = []
        epoch.append(event)
    return epoch


class EpochTracker:
    """Find where a continuable child's activation epochs begin in its own log.

    The log does not record activations, so they are read from idleness: a new epoch begins
    when, after a turn of the current epoch has ended and no turn is open, the child either
    receives new input (an ``agent/inbox/spliced`` that inserts messages) or is restored
    (``session/end-seed``, appended at every restore). Input queued while a turn runs keeps
    the epoch going, because the loop runs it without going idle. The simulator knows its
    epoch boundaries directly and need not use this.
    """

    __slots__ = ("_in_turn", "_turn_ended")

    def __init__(self) -> None:
        self._in_turn = False
        self._turn_ended = False

    def observe(self, event: SessionEvent) -> bool:
        """Feed the next event; ``True`` when it opens a new epoch (before it is folded)."""
        kind = event.get("type")
        starts = False
        if not self._in_turn and self._turn_ended:
            if kind == "session/end-seed":
                starts = True
            elif kind == "agent/inbox/spliced":
                data = event.get("data")
                inserted = data.get("inserted") if isinstance(data, Mapping) else None
                starts = isinstance(inserted, list) and len(inserted) > 0
        if starts:
            self._turn_ended = False
        if kind == "turn/start":
            self._in_turn = True
        elif kind == "turn/end":
            self._in_turn = False
            self._turn_ended = True
        return starts
