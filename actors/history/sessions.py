"""``sessions_history`` over transcript messages (FMT-5, reference §c13, §c16).

Pure functions over JSON-shaped dicts: no IO, no clock. Messages are never mutated; every
returned message is a new dict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from actors.mutants import (
    MUTANT_HISTORY_BYTES_UNCLEANED,
    MUTANT_HISTORY_FIELD_CUT_AT_LIMIT,
    MUTANT_HISTORY_PAGING_ALWAYS,
)

TEXT_FIELD_LIMIT = 4_000  # UTF-16 code units, as JavaScript's String.length counts them
TRUNCATION_SUFFIX = "\n…(truncated)…"
BYTE_CAP = 80 * 1024
OMITTED_MESSAGE = "[sessions_history omitted: message too large]"
REDACTED = "[redacted]"

# Message-level fields left out; dropping any of them marks the page contentTruncated, usage
# and cost too (OpenClaw 2026.9.6's tool does: ``handoff conform --check sessions-history``).
DROPPED_FIELDS = ("details", "usage", "cost", "openclawReasoningReplay")
_DROPPED_CONTENT = DROPPED_FIELDS
# Block-level fields left out: thinking signatures and reasoning replay payloads. Block `details`
# and `textSignature` are kept (reference §c16).
SIGNATURE_FIELDS = ("thinkingSignature", "signature")
BLOCK_DROPPED_FIELDS: tuple[str, ...] = (*SIGNATURE_FIELDS, "openclawReasoningReplay")
TEXT_FIELDS = ("text", "thinking", "partialJson")
TOOL_ROLES = ("toolResult", "tool")
# The gateway's page when no limit is asked for (chat.history: ``limit ?? 200``, §c19), and
# its largest (CHAT_HISTORY_MAX_ENTRIES: a larger limit reads 1,000 rows; OpenClaw 2026.9.6,
# found by ``handoff conform --check sessions-history``).
DEFAULT_PAGE = 200
MAX_PAGE = 1_000

# Credential-like text: provider key prefixes, bearer tokens, PEM private keys and
# `name = value` assignments whose name says secret. The value is replaced, the name kept, so
# the reader still sees that a credential was there.
#
# Each pattern comes with the literals a text must hold (one of them) for it to match at all,
# so a text holding none skips the pattern's scan: a pattern that starts at a word boundary
# is tried at every position, and nine scans of a 200,000-character reply were ~1.3 % of a
# default-world seed's instructions. The case-insensitive ``bearer`` is looked for in the
# lowered text: only B, E, A and R match those letters under IGNORECASE, and they lower to
# them (tests/history/test_history_redaction.py checks every code point); the assignments
# need their ``:`` or ``=``.
_CREDENTIAL_PATTERNS: tuple[tuple[re.Pattern[str], str, tuple[str, ...], bool], ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL
        ),
        REDACTED, ("-----BEGIN ",), False,
    ),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}"), REDACTED, ("sk-", "pk-", "rk-"), False),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED, ("gh",), False),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), REDACTED, ("github_pat_",), False),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), REDACTED, ("xox",), False),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED, ("AKIA",), False),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), REDACTED, ("AIza",), False),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/\-]{12,}=*"), r"\1 " + REDACTED,
     ("bearer",), True),
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|token)"
            r"\"?\s*[:=]\s*\"?)[^\s\"',;]{6,}"
        ),
        r"\1" + REDACTED, (":", "="), False,
    ),
)


def redact_credentials(text: str) -> tuple[str, bool]:
    """Replace credential-like text; returns the text and whether anything was replaced."""
    changed = False
    lowered = None  # ``text`` lowered, made when a pattern's literals need it
    for pattern, replacement, needles, in_lowered in _CREDENTIAL_PATTERNS:
        haystack = text
        if in_lowered:
            if lowered is None:
                lowered = text.lower()
            haystack = lowered
        for needle in needles:
            if needle in haystack:
                break
        else:
            continue  # the pattern cannot match: its scan is skipped
        text, count = pattern.subn(replacement, text)
        if count:
            changed, lowered = True, None
    return text, changed


def utf16_length(text: str) -> int:
    """JavaScript's ``String.length``: UTF-16 code units. A lone surrogate (JSON may carry
    ``"\\ud800"``) is data, one unit, never an error."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _splits_a_pair(text: str, cut: int) -> bool:
    """Would cutting before ``text[cut]`` separate a high surrogate from its low surrogate?
    (Python keeps such a pair as two code points when it came from lone escapes.)"""
    return (0 < cut < len(text) and "\ud800" <= text[cut - 1] <= "\udbff"
            and "\udc00" <= text[cut] <= "\udfff")


def truncate_text_field(text: str, cut_at_limit: bool = False) -> tuple[str, bool]:
    """Cut a field longer than 4,000 UTF-16 units to at most 4,000 plus ``\\n…(truncated)…``,
    never splitting a surrogate pair: a character outside the BMP (or a high and low surrogate
    pair) that would straddle the cut is left out whole."""
    if len(text) <= TEXT_FIELD_LIMIT // 2 or utf16_length(text) < TEXT_FIELD_LIMIT + (
            0 if cut_at_limit else 1):  # (the mutant cuts at the limit too)
        return text, False
    lo, hi = TEXT_FIELD_LIMIT // 2, min(len(text), TEXT_FIELD_LIMIT)
    while lo < hi:  # longest prefix within the limit; prefixes only grow in units
        mid = (lo + hi + 1) // 2
        if utf16_length(text[:mid]) <= TEXT_FIELD_LIMIT:
            lo = mid
        else:
            hi = mid - 1
    if _splits_a_pair(text, lo):
        lo -= 1
    return text[:lo] + TRUNCATION_SUFFIX, True


# The boundaries a page met, named as the code probes the requester fires for them: a text
# field within one unit of the 4,000-unit cut, rows dropped for the byte cap with more than one
# left (sim/world/draws/edges.py draws transcripts that reach them).
FIELD_EDGES = {TEXT_FIELD_LIMIT - 1: "requester.history-field-one-under-limit",
               TEXT_FIELD_LIMIT: "requester.history-field-at-limit",
               TEXT_FIELD_LIMIT + 1: "requester.history-field-one-over-limit"}
ROWS_DROPPED_SEVERAL_LEFT = "requester.history-rows-dropped-several-left"
# Paging's rare paths (a read with an offset): more rows below the page; the floor
# ``offset + 1`` binding (the page's oldest row is the newest of its window, a one-row page at
# the window's top: with rows numbered by their place it never strictly wins, see _paging).
PAGED_MORE = "requester.history-paged-more"
PAGED_FLOOR = "requester.history-paged-floor"


@attrs.define
class _Flags:
    truncated: bool = False
    redacted: bool = False
    edges: list[str] = attrs.field(factory=list)
    cut_at_limit: bool = False  # MUTANT_HISTORY_FIELD_CUT_AT_LIMIT


def _clean_text(text: str, flags: _Flags) -> str:
    if 2 * len(text) >= TEXT_FIELD_LIMIT - 1:  # (shorter ones are under 3,999 units)
        edge = FIELD_EDGES.get(utf16_length(text))
        if edge is not None:
            flags.edges.append(edge)
    text, redacted = redact_credentials(text)
    text, truncated = truncate_text_field(text, flags.cut_at_limit)
    flags.redacted = flags.redacted or redacted
    flags.truncated = flags.truncated or truncated
    return text


def _decoded_size(data: str) -> int:
    """Decoded size of base64 ``data`` without decoding it, as OpenClaw's code counts it
    (issue 24): characters up to U+0020 are not data, and at most two trailing ``=`` are
    padding."""
    compact = "".join(c for c in data if c > " ")
    padding = min(len(compact) - len(compact.rstrip("=")), 2)
    return max(len(compact) * 3 // 4 - padding, 0)


def _clean_block(block: Any, flags: _Flags) -> Any:
    """A content block cleaned. Dropping a block's signature, reasoning replay or image data
    does not mark the page contentTruncated: OpenClaw 2026.9.6's gateway drops them before its
    tool counts what it cut (``handoff conform --check sessions-history``)."""
    if isinstance(block, str):
        return _clean_text(block, flags)
    if not isinstance(block, Mapping):
        return block
    image = block.get("type") == "image"
    cleaned: dict[str, Any] = {}
    for key, value in block.items():
        if key in BLOCK_DROPPED_FIELDS or (image and key == "data"):
            continue
        if key in TEXT_FIELDS and isinstance(value, str):
            cleaned[key] = _clean_text(value, flags)
        else:
            cleaned[key] = value
    if image and "data" in block:
        # Inline data is never returned: the block says so, and how large the data was when
        # it was text (a block without data is left as it is, as the gateway leaves it).
        data = block["data"]
        cleaned["omitted"] = True
        if isinstance(data, str):
            cleaned["bytes"] = _decoded_size(data)
    return cleaned


def sanitize_message(message: Mapping[str, Any], flags: _Flags) -> dict[str, Any]:
    """A new message with dropped fields removed and every content text field redacted and cut.
    A message-level ``thinking`` field is redacted but not cut (reference §c16)."""
    cleaned: dict[str, Any] = {}
    for key, value in message.items():
        if key in DROPPED_FIELDS:
            if key in _DROPPED_CONTENT:
                flags.truncated = True
            continue
        if key == "content":
            if isinstance(value, str):
                cleaned[key] = _clean_text(value, flags)
            elif isinstance(value, list):
                cleaned[key] = [_clean_block(block, flags) for block in value]
            else:
                cleaned[key] = value
        elif key == "thinking" and isinstance(value, str):
            redacted, changed = redact_credentials(value)
            flags.redacted = flags.redacted or changed
            cleaned[key] = redacted
        elif key in TEXT_FIELDS and isinstance(value, str):
            cleaned[key] = _clean_text(value, flags)
        else:
            cleaned[key] = value
    return cleaned


_LONE_OR_PAIRED = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def json_bytes(value: Any) -> int:
    """UTF-8 size of compact JSON, as ``Buffer.byteLength(JSON.stringify(value))``.

    Never raises on surrogates: JavaScript writes a lone surrogate as a six-byte ``\\udXXX``
    escape and a high-low pair as one four-byte character; Python's ``surrogatepass`` counts
    three bytes per surrogate, so the difference is added back."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if text.isascii():  # (a flag CPython keeps) a byte per character, and no surrogate
        return len(text)
    size = len(text.encode("utf-8", "surrogatepass"))
    for match in _LONE_OR_PAIRED.finditer(text):
        size += -2 if len(match.group()) == 2 else 3
    return size


def message_seq(message: Mapping[str, Any], position: int) -> int:
    """``__openclaw.seq`` when recorded, else the 1-based position in the transcript."""
    meta = message.get("__openclaw")
    if isinstance(meta, Mapping):
        seq = meta.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            return seq
    return position


@attrs.frozen
class HistoryResult:
    messages: tuple[dict[str, Any], ...]
    # The offset as asked: None when the caller passed none (then no paging fields at all).
    offset: int | None
    total_messages: int
    next_offset: int | None
    truncated: bool
    dropped_messages: bool
    content_truncated: bool
    content_redacted: bool
    bytes: int
    session_key: str | None = None
    # The boundaries this page met (probe names; not part of the tool's answer).
    edges: tuple[str, ...] = ()
    # MUTANT_HISTORY_PAGING_ALWAYS: the paging fields also without an offset.
    paging_always: bool = False

    @property
    def has_more(self) -> bool:
        return self.next_offset is not None

    def to_json(self) -> dict[str, Any]:
        """The tool's JSON shape (camelCase). The paging fields come only when the caller
        passed an offset, as resolveSessionsHistoryPaginationMetadata gives them in OpenClaw
        2026.9.6 (§c19): ``offset``, ``nextOffset`` only when there is more, ``hasMore`` and
        ``totalMessages``, in that order."""
        out: dict[str, Any] = {}
        if self.session_key is not None:
            out["sessionKey"] = self.session_key
        out.update(
            {
                "messages": list(self.messages),
                "truncated": self.truncated,
                "droppedMessages": self.dropped_messages,
                "contentTruncated": self.content_truncated,
                "contentRedacted": self.content_redacted,
                "bytes": self.bytes,
            }
        )
        if self.offset is not None or self.paging_always:
            out["offset"] = self.offset or 0
            if self.next_offset is not None:
                out["nextOffset"] = self.next_offset
            out["hasMore"] = self.has_more
            out["totalMessages"] = self.total_messages
        return out


def sessions_history(
    messages: Sequence[Mapping[str, Any]],
    *,
    limit: int | None = None,
    offset: int | None = None,
    include_tools: bool = False,
    session_key: str | None = None,
    mutants: frozenset[str] = frozenset(),
) -> HistoryResult:
    """One page of a transcript, newest last.

    ``offset`` counts the newest messages to skip (the window ends at ``total - offset``); None
    (not passed) reads like 0 but the answer has no paging fields (§c19);
    ``limit`` (a positive integer; 200 when not given, the gateway's page, and at most 1,000)
    keeps at most that many of the newest messages in the window, tool rows included, before
    tool rows are dropped (reference §c16, §c19). Then text fields are cleaned and the 80 KiB
    JSON cap drops the oldest rows first."""
    if offset is not None and offset < 0:
        raise ValueError("offset must be a non-negative integer")  # (the tool's words)
    if limit is not None and limit < 1:
        # OpenClaw 2026.9.6 reads it as a positive integer (reference §c19): 0 is refused.
        raise ValueError("limit must be a positive integer")
    total = len(messages)
    indexed = [(message_seq(m, i + 1), m) for i, m in enumerate(messages)]
    skip = offset or 0
    window = [(seq, m) for seq, m in indexed[: max(total - skip, 0)]]
    # The gateway keeps the newest ``limit`` rows before tool messages are dropped (tool rows
    # count toward it), and a limit past the rows keeps them all (reference §c16).
    # Without a limit the gateway pages DEFAULT_PAGE rows (reference §c19).
    page = DEFAULT_PAGE if limit is None else min(limit, MAX_PAGE)
    window = window[max(len(window) - page, 0) :]
    # Where the page began before tool rows were dropped: a page of only tool rows still pages
    # on from there (OpenClaw 2026.9.6 takes the gateway's nextOffset then, §c19), so paging
    # goes on and every older row is reached.
    window_oldest = window[0][0] if window else None
    if not include_tools:
        window = [(seq, m) for seq, m in window if m.get("role") not in TOOL_ROLES]
    flags = _Flags(cut_at_limit=MUTANT_HISTORY_FIELD_CUT_AT_LIMIT in mutants)
    rows = [(seq, sanitize_message(m, flags)) for seq, m in window]

    kept, dropped, total_bytes, hard_capped = _capped(rows)
    out_messages = tuple(row for _, row in kept)
    # The page's JSON is ``[`` + its rows' JSON joined by ``,`` + ``]``: its size is what the
    # cap summed (each row's JSON begins ``{`` and ends ``}``, so no surrogate pair spans two);
    # encoding the whole page again cost as much as its rows did.
    final_bytes = json_bytes(list(out_messages)) if hard_capped else total_bytes
    if MUTANT_HISTORY_BYTES_UNCLEANED in mutants:
        final_bytes = json_bytes([m for _, m in window[dropped:]])  # the bug: before cleaning

    next_offset, floor = _next_offset(skip, total, kept[0][0] if kept else None, window_oldest)
    paging = (*((PAGED_MORE,) if next_offset is not None else ()),
              *((PAGED_FLOOR,) if floor else ())) if offset is not None else ()
    return HistoryResult(
        messages=out_messages,
        offset=offset,
        total_messages=total,
        next_offset=next_offset,
        truncated=dropped > 0 or flags.truncated or hard_capped,
        # A row replaced by the placeholder was dropped too (reference §c16).
        dropped_messages=dropped > 0 or hard_capped,
        content_truncated=flags.truncated,
        content_redacted=flags.redacted,
        bytes=final_bytes,
        session_key=session_key,
        edges=(*flags.edges, *((ROWS_DROPPED_SEVERAL_LEFT,)
                               if dropped and len(kept) > 1 and not hard_capped else ()),
               *paging),
        paging_always=MUTANT_HISTORY_PAGING_ALWAYS in mutants,
    )


def _capped(rows: list[tuple[int, dict[str, Any]]]
            ) -> tuple[list[tuple[int, dict[str, Any]]], int, int, bool]:
    """The 80 KiB JSON cap: the oldest rows dropped first (how many), the page's size, and
    whether even the newest row alone was over it (replaced by the placeholder)."""
    sizes = [json_bytes(row) for _, row in rows]
    total_bytes = 2 + sum(sizes) + max(len(rows) - 1, 0)  # brackets and commas
    dropped = 0
    while len(rows) - dropped > 1 and total_bytes > BYTE_CAP:
        total_bytes -= sizes[dropped] + 1
        dropped += 1
    kept = rows[dropped:]
    hard_capped = False
    if kept and total_bytes > BYTE_CAP:
        seq, _ = kept[-1]
        kept = [
            (seq, {"role": "assistant", "content": OMITTED_MESSAGE, "__openclaw": {"seq": seq}})
        ]
        hard_capped = True
    return kept, dropped, total_bytes, hard_capped


def _next_offset(offset: int, total: int, oldest_seq: int | None,
                 window_oldest: int | None) -> tuple[int | None, bool]:
    """Where paging back goes on, None when no older row is left; and whether the floor
    ``offset + 1`` bound it.

    OpenClaw 2026.9.6 (resolveSessionsHistoryPaginationMetadata, §c19), with ``seq`` the
    oldest row returned: ``max(offset + 1, min(gateway's nextOffset ?? total, total - seq +
    1))``, ``hasMore`` when it is below the total. The gateway's own nextOffset (chat.history,
    resolveChatHistoryNextOffset) is ``max(offset + 1, total - oldest row of its page + 1)``,
    given only when below the total; its page is this window (tool rows still in), whose
    oldest row is no newer than ``seq``, so the min is ``total - seq + 1``. With no row
    returned (a page of only tool rows, dropped) the tool takes the gateway's nextOffset as
    it is; an empty window (offset past the rows) has none."""
    if oldest_seq is None:
        if window_oldest is None:
            return None, False
        oldest_seq = window_oldest  # the gateway's nextOffset, from its own page
    term = total - oldest_seq + 1
    candidate = max(offset + 1, term)
    return (candidate if candidate < total else None), offset + 1 >= term
