"""FMT-5 paging: the paging fields come exactly when an offset was asked, with the exact
``nextOffset`` and ``hasMore``, and pages followed by ``nextOffset`` tile the transcript.

OpenClaw 2026.9.6 (resolveSessionsHistoryPaginationMetadata, reference §c19; the seed is
silent): ``offset``, ``totalMessages``, ``hasMore``, and ``nextOffset`` only when ``hasMore``,
come only when the caller passed an offset (``0`` is one; none is not); then, with ``seq`` the
oldest row returned, ``nextOffset = max(offset + 1, min(gateway's nextOffset ?? total, total -
seq + 1))`` and ``hasMore`` says it is below the total (a page with no row takes the gateway's
nextOffset as it is; history_reads.py states both). A page is the newest end of its window (the
rows up to ``total - offset``), oldest first. So a reader that follows ``nextOffset`` reads each
row once, never one it read already, never skipping one (when no byte cap or tool filter
dropped rows from a page), down to the first message.

The offset, limit and tool flag are what the read asked (its ``world.action``), and the total
is the transcript's length counted from the child's records (history_reads.py), never the
answer's own ``offset`` or ``totalMessages``. A later read of the same session (and run, for an
archive) at an earlier read's ``nextOffset``, over the same total, is that read's next page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.invariants.child.history_reads import PAGING_FIELDS, Read, served_reads, tool_next_offset
from sim.invariants.index import of_kinds
from sim.trace import Record


def _seqs(messages: list[dict[str, Any]]) -> list[int] | None:
    seqs = []
    for message in messages:
        meta = message.get("__openclaw")
        seq = meta.get("seq") if isinstance(meta, dict) else None
        if not isinstance(seq, int):
            return None  # a page without sequence numbers: nothing to page by
        seqs.append(seq)
    return seqs


def _page_problems(read: Read, seqs: list[int] | None) -> list[str]:
    result, offset, total = read.result, read.offset, read.total
    problems = []
    if seqs and any(b <= a for a, b in pairwise(seqs)):
        problems.append(f"rows out of order (seqs {seqs})")
    if not read.asked:
        return problems
    present = [f for f in PAGING_FIELDS if f in result]
    if offset is None:
        if present:
            problems.append(f"no offset was passed, but the answer has {', '.join(present)}")
        return problems
    missing = [f for f in ("offset", "hasMore", "totalMessages") if f not in result]
    if missing:
        problems.append(f"offset {offset} was passed, but the answer has no "
                        f"{', '.join(missing)}")
    elif result["offset"] != offset:
        problems.append(f"offset {result['offset']}, but the read asked for {offset}")
    if total is None:
        return problems
    if "totalMessages" in result and result["totalMessages"] != total:
        problems.append(f"totalMessages {result['totalMessages']}, but the transcript holds "
                        f"{total}")
    if seqs and seqs[-1] > total - offset:
        problems.append(f"row {seqs[-1]} lies above the window, which ends at "
                        f"{total} - {offset} = {total - offset}")
    if seqs is None:
        return problems
    want = tool_next_offset(total, offset, read.limit, seqs[0] if seqs else None)
    got = result.get("nextOffset")
    if got != want:
        problems.append(
            f"nextOffset {got}, expected {want} (max(offset {offset} + 1, total {total} - "
            f"oldest row {seqs[0]} + 1), when below the total)" if seqs else
            f"nextOffset {got} on an empty page, expected {want} (the gateway's, below the "
            f"window of limit {read.limit} at offset {offset} of {total})")
    if "hasMore" in result and result["hasMore"] is not (want is not None):
        problems.append(f"hasMore {result['hasMore']!r}, but nextOffset {want} "
                        f"{'is' if want is not None else 'would not be'} below the total {total}")
    return problems


def history_paging(trace: Sequence[Record]) -> list[Violation]:
    # (reader, session key, run, include tools) -> the latest page read: its read and seqs
    last: dict[tuple[str, str, str, bool], tuple[Read, list[int]]] = {}
    violations = []
    for read in served_reads(trace):
        r, result = read.record, read.result
        seqs = _seqs(result["messages"])
        problems = _page_problems(read, seqs)
        at = (r.actor, read.session, read.run, read.include_tools)
        before = last.get(at)
        if before is not None and seqs is not None:
            prev, prev_seqs = before
            if (read.offset is not None and prev.result.get("nextOffset") == read.offset
                    and prev.total == read.total and prev_seqs):
                again = [s for s in seqs if s >= prev_seqs[0]]
                if again:
                    problems.append(f"the page at nextOffset {read.offset} repeats row "
                                    f"{again[0]} of the page before it")
                # No byte cap and no tool filter dropped anything: the next page starts right
                # below the previous one's oldest row.
                elif (seqs and read.include_tools and not result.get("droppedMessages")
                      and seqs[-1] != prev_seqs[0] - 1):
                    problems.append(f"the page at nextOffset {read.offset} ends at row "
                                    f"{seqs[-1]}, skipping rows down from {prev_seqs[0] - 1}")
        if seqs is not None:
            last[at] = (read, seqs)
        if problems:
            violations.append(Violation(
                "history-paging", "FMT-5", f"{read.where}: " + "; ".join(problems),
                (r.seq,) if before is None else (before[0].record.seq, r.seq)))
    return violations


# A surrogate pair (one character to JavaScript) or a lone surrogate, as Python holds them.
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")


def _plain(value: Any) -> Any:
    """``value`` with each whole float an int: JavaScript writes ``3.0`` as ``3``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def page_bytes(messages: list[Any]) -> int:
    """``Buffer.byteLength(JSON.stringify(messages))`` (reference §c13: the page's ``bytes``):
    compact JSON in UTF-8, where JavaScript writes a lone surrogate as its six-character
    ``\\udXXX`` escape and a pair as one four-byte character."""
    text = json.dumps(_plain(messages), ensure_ascii=False, separators=(",", ":"))
    if text.isascii():
        return len(text)
    size = len(text.encode("utf-8", "surrogatepass"))
    for found in _SURROGATES.finditer(text):
        size += -2 if len(found.group()) == 2 else 3  # 6 -> 4 for a pair, 3 -> 6 when lone
    return size


def history_bytes(trace: Sequence[Record]) -> list[Violation]:
    """FMT-5, reference §c13: a page's ``bytes`` is the size of the messages it returned, as
    JavaScript measures their JSON: exactly, whatever was dropped or cut before."""
    violations = []
    for r in of_kinds(trace, ("requester.history", "requester.archive")):
        if r.kind not in ("requester.history", "requester.archive"):
            continue
        result = r.data.get("result")
        if not isinstance(result, dict) or "messages" not in result:
            continue
        want = page_bytes(result["messages"])
        if result.get("bytes") != want:
            violations.append(Violation(
                "history-bytes", "FMT-5",
                f"{r.kind.removeprefix('requester.')} of {r.data['child']} by {r.actor}: bytes "
                f"{result.get('bytes')}, but the {len(result['messages'])} messages returned "
                f"are {want} bytes of JSON", (r.seq,)))
    return violations


FIELD_LIMIT = 4_000  # UTF-16 units (reference §c16)
CUT_SUFFIX = "\n…(truncated)…"


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _fields(value: Any) -> list[str]:
    """The text fields of a page's message content (``text``, ``thinking``, ``partialJson``)."""
    if isinstance(value, list):
        return [t for v in value for t in _fields(v)]
    if isinstance(value, dict):
        return [v for k, v in value.items() if k in ("text", "thinking", "partialJson")
                and isinstance(v, str)]
    return []


def history_field_cut(trace: Sequence[Record]) -> list[Violation]:
    """Reference §c16: a text field is cut only when it is over 4,000 UTF-16 units, to its
    longest prefix within them (never splitting a pair: 3,999 then) plus ``\n…(truncated)…``.
    Read from what the child wrote (``child.message``: its texts, by its session key from its
    ``spawn``) and the pages the requester read: a cut field whose text the child wrote within
    4,000 units, or cut shorter than the rule, is wrong (``history-bounds`` bounds it from
    above only, so a cut of a field exactly at the limit passed)."""
    key_of: dict[str, str] = {}  # run -> its child session key
    written: dict[str, set[str]] = {}  # child session key -> the texts its runs wrote
    violations = []
    for r in of_kinds(trace, ("spawn", "child.message", "requester.history",
                              "requester.archive")):
        kind = r.kind
        if kind == "spawn":
            key_of[r.data["run_id"]] = r.data["child_session_key"]
        elif kind == "child.message":
            key = key_of.get(r.data["run_id"])
            if key is not None:
                written.setdefault(key, set()).update(
                    b["text"] for b in r.data["blocks"] if isinstance(b.get("text"), str)
                    and len(b["text"]) * 2 >= FIELD_LIMIT)
        elif kind in ("requester.history", "requester.archive"):
            result = r.data.get("result")
            if not isinstance(result, dict) or "messages" not in result:
                continue
            texts = written.get(str(result.get("sessionKey")), set())
            for field in _fields([m.get("content") for m in result["messages"]]):
                if not field.endswith(CUT_SUFFIX):
                    continue
                head = field[:-len(CUT_SUFFIX)]
                whole = [t for t in texts if t.startswith(head)]
                if not whole:
                    continue  # not a text this oracle saw written whole (or a child's own)
                if all(_units(t) <= FIELD_LIMIT for t in whole):
                    problem = f"cut a field of {_units(whole[0])} UTF-16 units, within the limit"
                elif _units(head) < FIELD_LIMIT - 1:
                    problem = (f"cut a field to {_units(head)} UTF-16 units, short of the "
                               f"longest prefix within {FIELD_LIMIT}")
                else:
                    continue
                violations.append(Violation(
                    "history-field-cut", "FMT-5",
                    f"{kind.removeprefix('requester.')} of {result.get('sessionKey')} by "
                    f"{r.actor}: {problem}", (r.seq,)))
    return violations


INVARIANTS = (
    Invariant("history-field-cut", "FMT-5", "safety",
              "A history page cuts a text field only when it is over 4,000 UTF-16 units, to its "
              "longest prefix within them plus the truncation suffix (reference §c16).",
              history_field_cut),
    Invariant("history-bytes", "FMT-5", "safety",
              "A sessions_history page's bytes field is the UTF-8 size of the JSON of the "
              "messages it returned, as JavaScript measures it (reference §c13).", history_bytes),
    Invariant("history-paging", "FMT-5", "safety",
              "A history page has offset, totalMessages, hasMore (and nextOffset) exactly when "
              "the read passed an offset (reference §c19); then it is the newest end of its "
              "window, oldest first, nextOffset = max(offset + 1, min(gateway's nextOffset, "
              "total - oldest row + 1)) exactly when that is below the total, and the page read "
              "at it continues right below, never repeating a row.", history_paging),
)
