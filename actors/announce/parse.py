"""Parse either payload layout back into each shown child's task, status and unescaped text head,
plus the summary line: the proof that escaping is lossless and framing cannot be forged."""

from __future__ import annotations

import re
from typing import Literal

import attrs

from actors.announce.block import (
    CONTEXT_BEGIN,
    CONTEXT_END,
    CONTEXT_HEADER,
    CONTEXT_NOTICE,
    EVENT_HEADER,
    EVENT_SEPARATOR,
    INSTRUCTION_HEADER,
)
from actors.announce.layout import (
    BATCH_HEADER,
    BATCH_SEPARATOR,
    BLOCK_CLOSE,
    BLOCK_OPEN,
    NO_CHILD_RESULTS,
    NO_OUTPUT_LINE,
    unescape_data,
)


class PayloadParseError(ValueError):
    """The text is not a payload produced by this module."""


@attrs.frozen
class ParsedChild:
    session_key: str
    task: str
    status: str
    # The unescaped head (the whole text when not truncated); "" when no_output.
    text: str
    no_output: bool
    truncated: bool
    omitted_chars: int
    session_id: str | None = None
    source: str | None = None
    announce_type: str | None = None
    stats_line: str | None = None
    instruction: str | None = None


@attrs.frozen
class ParsedSummary:
    count: int
    # The key list exactly as printed. Splitting it on ", " gives the keys unless a key itself
    # contains ", " (real session keys never do; the line is a pointer, not a data channel).
    keys_text: str

    @property
    def session_keys(self) -> tuple[str, ...]:
        return tuple(self.keys_text.split(", "))


@attrs.frozen
class ParsedPayload:
    layout: Literal["announce", "results"]
    children: tuple[ParsedChild, ...]
    summary: ParsedSummary | None


_MARKER_RE = re.compile(
    r"\[truncated: (\d+) characters omitted; read the rest with sessions_history "
    r"sessionKey=(.*)\]"
)
_SUMMARY_RE = re.compile(
    r"\[(\d+) more child results omitted: (.*); inspect them with sessions_list and "
    r"sessions_history\]"
)
_INDEX_RE = re.compile(r"(\d+)\. (.*)")


class _Reader:
    """A cursor over the payload. Framing is read line by line; a data block is read up to the
    first ``\\n</prompt-data>``, which escaped text can never contain."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek_line(self) -> str:
        end = self.text.find("\n", self.pos)
        return self.text[self.pos :] if end < 0 else self.text[self.pos : end]

    def line(self) -> str:
        if self.at_end():
            raise PayloadParseError(f"unexpected end of payload at {self.pos}")
        value = self.peek_line()
        self.pos += len(value) + 1
        return value

    def expect(self, literal: str) -> None:
        if not self.text.startswith(literal, self.pos):
            got = self.text[self.pos : self.pos + len(literal)]
            raise PayloadParseError(f"expected {literal!r} at {self.pos}, got {got!r}")
        self.pos += len(literal)

    def field(self, name: str) -> str:
        value = self.line()
        prefix = f"{name}: "
        if not value.startswith(prefix):
            raise PayloadParseError(f"expected field {name!r}, got {value!r}")
        return value[len(prefix) :]

    def result_block(self) -> tuple[str, bool, bool, int]:
        """Returns (text head, no_output, truncated, omitted_chars)."""
        if self.text.startswith(NO_OUTPUT_LINE, self.pos):
            self.pos += len(NO_OUTPUT_LINE)
            return "", True, False, 0
        self.expect(BLOCK_OPEN)
        close = self.text.find(BLOCK_CLOSE, self.pos)
        if close < 0:
            raise PayloadParseError("unterminated prompt-data block")
        body = self.text[self.pos : close]
        self.pos = close + len(BLOCK_CLOSE)
        if self.text.startswith("\n[truncated: ", self.pos):
            self.pos += 1
            match = _MARKER_RE.fullmatch(self.line_without_consuming_newline())
            if match is None:
                raise PayloadParseError("malformed truncation marker")
            return unescape_data(body), False, True, int(match.group(1))
        return unescape_data(body), False, False, 0

    def line_without_consuming_newline(self) -> str:
        value = self.peek_line()
        self.pos += len(value)
        return value


def _parse_summary(line: str) -> ParsedSummary:
    match = _SUMMARY_RE.fullmatch(line)
    if match is None:
        raise PayloadParseError(f"malformed summary line {line!r}")
    return ParsedSummary(int(match.group(1)), match.group(2))


def _parse_results(reader: _Reader) -> ParsedPayload:
    reader.expect(BATCH_HEADER + "\n\n")
    children: list[ParsedChild] = []
    summary: ParsedSummary | None = None
    if reader.text[reader.pos :] == NO_CHILD_RESULTS:
        return ParsedPayload("results", (), None)
    while True:
        head = reader.peek_line()
        if head.startswith("[") and _SUMMARY_RE.fullmatch(head):
            summary = _parse_summary(reader.line_without_consuming_newline())
            break
        match = _INDEX_RE.fullmatch(reader.line())
        if match is None or int(match.group(1)) != len(children) + 1:
            raise PayloadParseError(f"expected section {len(children) + 1} at {reader.pos}")
        key = reader.field("session_key")
        status = reader.field("status")
        text, no_output, truncated, omitted = reader.result_block()
        children.append(
            ParsedChild(key, match.group(2), status, text, no_output, truncated, omitted)
        )
        if reader.at_end():
            break
        reader.expect(BATCH_SEPARATOR)
    if not reader.at_end():
        raise PayloadParseError(f"trailing text at {reader.pos}")
    return ParsedPayload("results", tuple(children), summary)


def _parse_announce(reader: _Reader) -> ParsedPayload:
    reader.expect(f"{CONTEXT_BEGIN}\n{CONTEXT_HEADER}\n{CONTEXT_NOTICE}\n\n")
    children: list[ParsedChild] = []
    summary: ParsedSummary | None = None
    footer = f"\n{CONTEXT_END}"
    if reader.text[reader.pos :] == NO_CHILD_RESULTS + footer:
        return ParsedPayload("announce", (), None)
    while True:
        head = reader.peek_line()
        if head.startswith("[") and _SUMMARY_RE.fullmatch(head):
            summary = _parse_summary(reader.line_without_consuming_newline())
            break
        if reader.line() != EVENT_HEADER:
            raise PayloadParseError(f"expected {EVENT_HEADER!r} at {reader.pos}")
        source = reader.field("source")
        key = reader.field("session_key")
        session_id = reader.field("session_id")
        announce_type = reader.field("type")
        task = reader.field("task")
        status = reader.field("status")
        reader.expect("\n")
        text, no_output, truncated, omitted = reader.result_block()
        stats: str | None = None
        reader.expect("\n\n")
        if reader.peek_line().startswith("Stats: "):
            stats = reader.line()
            reader.expect("\n")
        reader.expect(INSTRUCTION_HEADER + "\n")
        instruction = reader.line_without_consuming_newline()
        children.append(
            ParsedChild(
                key,
                task,
                status,
                text,
                no_output,
                truncated,
                omitted,
                session_id,
                source,
                announce_type,
                stats,
                instruction,
            )
        )
        if reader.text.startswith(EVENT_SEPARATOR, reader.pos):
            reader.pos += len(EVENT_SEPARATOR)
            continue
        break
    reader.expect(footer)
    if not reader.at_end():
        raise PayloadParseError(f"trailing text at {reader.pos}")
    return ParsedPayload("announce", tuple(children), summary)


def parse_payload(text: str) -> ParsedPayload:
    """Parse either layout back into each shown child's task, status and (unescaped) text head,
    plus the summary line. Raises :class:`PayloadParseError` on anything else."""
    reader = _Reader(text)
    if text.startswith(CONTEXT_BEGIN):
        return _parse_announce(reader)
    if text.startswith(BATCH_HEADER):
        return _parse_results(reader)
    raise PayloadParseError("not an announce or child-results payload")
