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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import attrs

from actors.child.output import JsonObject, SessionEvent
from actors.errors import InputError
from actors.inputs import Node, json_line
from actors.inputs.files import bounded_lines


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


# Integers in a log (times, indexes, counts) are JSON's safe integers.
MAX_LOG_INT = 2**53


def _check_block(block: Node) -> None:
    kind = block.text("type")
    if kind in ("text", "reasoning"):
        block.text("text")
    elif kind == "tool-call":
        block.text("id")
        block.text("name")
        block.text("arguments")


def _check_chunk(chunk: Node) -> None:
    kind = chunk.text("type")
    if kind in ("text-delta", "reasoning-delta"):
        chunk.text("text")
    elif kind == "tool-call-delta":
        chunk.text("id")
        chunk.text("argumentsDelta")
    elif kind == "block-end":
        _check_block(chunk.node("block"))
    elif kind == "finish":
        chunk.node("reason").text("kind")


def _check_run(run: Node, members: str) -> int:
    values = run.strings(members, non_empty=True)
    run.integer("index", maximum=MAX_LOG_INT)
    return len(values)


def _check_stream(data: Node) -> None:
    for record in data.nodes("stream", ...):
        kind = record.text("type")
        if kind == "chunk":
            record.integer("time", minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
            _check_chunk(record.node("chunk"))
        elif kind in _PACKED_ROWS:
            members = "args" if kind == "tool-call-chunks" else "texts"
            count = _check_run(record, members)
            record.integer("time0", minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
            gaps = record.integers("dt", minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
            if len(gaps) != count - 1:
                raise record.fail("dt", f"must hold {count - 1} entries, one fewer than {members}")
            if kind == "tool-call-chunks":
                record.text("id")
        else:
            raise record.fail("type", f"unknown stream record type {kind!r}")


def _check_event(event: Node, kind: str) -> None:
    """Validate the fields the rule and the stop-reason mappings read; others pass through."""
    if kind == "assistant/message":
        data = event.node("data")
        for block in data.node("message").nodes("content", ...):
            _check_block(block)
        if data.has("stream"):
            _check_stream(data)
        data.boolean("interrupted", None)
    elif kind == "assistant/attempt":
        _check_stream(event.node("data"))
    elif kind == "assistant/chunk":
        _check_chunk(event.node("data").node("chunk"))
    elif kind == "turn/end":
        event.node("data").node("reason").text("kind")
    else:
        event.node("data", None)


def _expand_packed(row: Node, kind: str) -> Iterator[SessionEvent]:
    """One packed V1 row back into the ``assistant/chunk`` events it stands for: the row is
    checked now, its events made one at a time as they are read (a 17 MiB row of one-letter
    texts stands for millions of events, gigabytes if made at once)."""
    data = row.node("data")
    members = "args" if kind == "tool-call-chunks" else "texts"
    _check_run(data, members)
    values: list[str] = data.data[members]
    seq0 = row.integer("seq0", None, minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
    time0 = row.integer("time0", None, minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
    gaps = data.integers("dt", [], minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT)
    chunk_type = _PACKED_ROWS[kind]
    call_id = name = None
    if kind == "tool-call-chunks":
        call_id = data.text("id")
        name = data.text("name", None)
    return _packed_events(data.data, kind, values, seq0, time0, gaps, chunk_type, call_id, name)


def _packed_events(data: JsonObject, kind: str, values: list[str], seq0: int | None,
                   time0: int | None, gaps: Sequence[int], chunk_type: str,
                   call_id: str | None, name: str | None) -> Iterator[SessionEvent]:
    time = time0
    index = data["index"]
    for i, value in enumerate(values):
        if i > 0 and time is not None and i - 1 < len(gaps):
            time += gaps[i - 1]
        chunk: JsonObject
        if kind == "tool-call-chunks":
            chunk = {"type": chunk_type, "index": index, "id": call_id}
            if name is not None:
                chunk["name"] = name
            chunk["argumentsDelta"] = value
        else:
            chunk = {"type": chunk_type, "index": index, "text": value}
        event: JsonObject = {"type": "assistant/chunk"}
        if seq0 is not None:
            event["seq"] = seq0 + i
        if time is not None:
            event["time"] = time
        event["data"] = {"turn": data.get("turn"), "step": data.get("step"), "chunk": chunk}
        yield event


def _parse_header(row: Node) -> SessionHeader:
    return SessionHeader(
        row.text("id"),
        row.integer("version", None, minimum=-MAX_LOG_INT, maximum=MAX_LOG_INT),
        row.text("parentSession", None),
        row.integer("seedLength", None, maximum=MAX_LOG_INT),
    )


def parse_line(
    text: str, *, path: str | None = None, line: int | None = None, first: bool = False
) -> SessionHeader | Iterable[SessionEvent]:
    """Parse one log line: the header (only where ``first``), or the events it holds.

    A blank line holds no events. Packed V1 rows expand to several events, made as they are
    read.
    """
    if text.strip() == "":
        return []
    row = json_line(path, line, text)
    kind = row.text("type")
    if kind == "session":
        if not first:
            raise row.fail("type", "a session header may only be the first line")
        return _parse_header(row)
    if kind in _PACKED_ROWS:
        return _expand_packed(row, kind)
    _check_event(row, kind)
    return [dict(row.data)]


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
    seen_first = False
    for number, raw in bounded_lines(name):
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
        raise InputError(name, None, "", "no session events (the file is empty)")


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
