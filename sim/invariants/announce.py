"""FMT invariants: what the requester's model actually read, checked against what the child ran.

Restated from the trace alone: the spawn record (child session key and id, task), the child's end
record (status, error, result, usage) and the text of each ``requester.accept`` and
``requester.history`` record. Nothing here imports the formatter it checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

CAP = 160_000
DATA_OPEN = "<prompt-data>\n"
DATA_CLOSE = "\n</prompt-data>"
NO_OUTPUT = "(no output)"
_MARKER = re.compile(
    r"\n\[truncated: (\d+) characters omitted; read the rest with sessions_history "
    r"sessionKey=(\S+)\]")
HISTORY_BYTE_CAP = 80 * 1024
HISTORY_FIELD_MAX = 4_000 + len("\n…(truncated)…")


def _visible(result: str | None) -> bool:
    # DEL-2 / FMT-3: no text, blank text and an exact NO_REPLY all read as "(no output)".
    return result is not None and result.strip() not in ("", "NO_REPLY")


def _label(status: str, error: str | None) -> str:
    error = " ".join(error.split()) if error and error.strip() else None
    if status == "ok":
        return "completed; ready for parent review"
    if status == "timeout":
        return "timed out" + (f": {error}" if error else "")
    if status == "error":
        return f"failed: {error or 'unknown error'}"
    return "finished with unknown status"


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&amp;", "&")


def _context(trace: Sequence[Record]) -> tuple[dict[str, Record], dict[str, Record]]:
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    for r in trace:
        if r.kind == "spawn":
            spawns[r.data["run_id"]] = r
        elif r.kind == "child.end":
            ends[r.data["run_id"]] = r
    return spawns, ends


def announce_block(trace: Sequence[Record]) -> list[Violation]:
    spawns, ends = _context(trace)
    violations: list[Violation] = []
    for r in trace:
        if r.kind != "requester.accept" or r.data["run_id"] not in ends:
            continue
        run_id, text = r.data["run_id"], r.data["text"]
        spawn, end = spawns[run_id], ends[run_id]

        def fail(requirement: str, what: str, r: Record = r, end: Record = end) -> None:
            violations.append(Violation("announce-block", requirement,
                                        f"{r.data['run_id']}: {what}", (end.seq, r.seq)))

        if len(text) > CAP:
            fail("FMT-2", f"the requester read {len(text)} characters, over the {CAP} cap")
        lines = text.split("\n")
        if f"session_key: {spawn.data['child_session_key']}" not in lines:
            fail("FMT-1", "the block does not name the child session key")
        label = _label(end.data["status"], end.data["error"])
        if f"status: {label[:256]}" not in lines and not any(
                line.startswith(f"status: {label[:200]}") for line in lines):
            fail("FMT-1", f"the status line is not 'status: {label}' (runtime status "
                          f"{end.data['status']})")
        result = end.data["result"]
        opens = text.count("<prompt-data>")
        if not _visible(result):
            if opens:
                fail("DEL-2", f"the child had no visible result ({result!r}) but the requester "
                              "read a result block")
            elif NO_OUTPUT not in text:
                fail("FMT-3", "a child without a visible result is not shown as (no output)")
            continue
        if opens != 1 or DATA_OPEN not in text or DATA_CLOSE not in text:
            fail("FMT-2", f"expected exactly one result block, found {opens} openings "
                          "(child text can forge framing)")
            continue
        body = text[text.index(DATA_OPEN) + len(DATA_OPEN):text.index(DATA_CLOSE)]
        shown = _unescape(body)
        after = text[text.index(DATA_CLOSE) + len(DATA_CLOSE):]
        marker = _MARKER.match(after)
        if marker is None:
            if shown != result:
                fail("FMT-2", "the result block does not parse back to the child's result")
        else:
            omitted, key = int(marker.group(1)), marker.group(2)
            if not result.startswith(shown) or omitted != len(result) - len(shown):
                fail("FMT-2", f"the truncated head is not the result's beginning, or the marker's "
                              f"{omitted} omitted characters do not add up")
            if key != spawn.data["child_session_key"]:
                fail("FMT-2", f"the truncation marker points at {key}, not the child's session")
    return violations


def stats_line(trace: Sequence[Record]) -> list[Violation]:
    spawns, ends = _context(trace)
    violations = []
    for r in trace:
        if r.kind != "requester.accept" or r.data["run_id"] not in ends:
            continue
        spawn, end = spawns[r.data["run_id"]], ends[r.data["run_id"]]
        stats = [line for line in r.data["text"].split("\n") if line.startswith("Stats: ")]
        problems = []
        if len(stats) != 1:
            problems.append(f"{len(stats)} stats lines")
        else:
            parts = stats[0][len("Stats: "):].split(" • ")
            if not parts[0].startswith("runtime ") or parts[0] == "runtime n/a":
                problems.append(f"runtime is {parts[0]!r} though start and end are known")
            tokens = [p for p in parts if p.startswith("tokens ")]
            unknown = tokens == ["tokens unknown"]
            if (end.data["usage"] is None) != unknown:
                problems.append(f"tokens read {tokens} but the child's usage was "
                                f"{end.data['usage']}")
            elif end.data["usage"] is not None:
                tokens_in, tokens_out = end.data["usage"]
                if tokens_in + tokens_out < 1000 and tokens != [
                        f"tokens {tokens_in + tokens_out} (in {tokens_in} / out {tokens_out})"]:
                    problems.append(f"tokens read {tokens}, usage was {end.data['usage']}")
            for want in (f"sessionKey {spawn.data['child_session_key']}",
                         f"sessionId {spawn.data['child_session_id']}"):
                if want not in parts:
                    problems.append(f"no '{want}'")
            if not any(p.startswith("transcript ") for p in parts):
                problems.append("no transcript path")
        if problems:
            violations.append(Violation("stats-line", "FMT-4",
                                        f"{r.data['run_id']}: " + "; ".join(problems),
                                        (end.seq, r.seq)))
    return violations


def _strings(value: Any, key: str | None = None) -> list[tuple[str | None, str]]:
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, k)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, key)]
    return []


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def history_bounds(trace: Sequence[Record]) -> list[Violation]:
    violations = []
    for r in trace:
        if r.kind != "requester.history":
            continue
        result = r.data["result"]
        messages = result["messages"]
        problems = []
        size = len(json.dumps(messages, ensure_ascii=False, separators=(",", ":")).encode())
        if size > HISTORY_BYTE_CAP:
            problems.append(f"{size} bytes of messages, over the 80 KiB cap")
        for key, text in _strings(messages):
            if key in ("text", "thinking", "partialJson", "content") and \
                    _utf16(text) > HISTORY_FIELD_MAX:
                problems.append(f"a {key} field of {_utf16(text)} UTF-16 units")
                break
        for message in messages:
            if not r.data["include_tools"] and message.get("role") in ("toolResult", "tool"):
                problems.append("a tool message without includeTools")
            for dropped in ("usage", "details", "cost"):
                if dropped in message:
                    problems.append(f"a message still carries {dropped!r}")
        total, offset = result["totalMessages"], result["offset"]
        if "nextOffset" in result and not offset <= result["nextOffset"] < total:
            problems.append(f"nextOffset {result['nextOffset']} outside [{offset}, {total})")
        if problems:
            violations.append(Violation("history-bounds", "FMT-5",
                                        f"sessions_history of {r.data['child']}: "
                                        + "; ".join(dict.fromkeys(problems)), (r.seq,)))
    return violations


INVARIANTS = (
    Invariant("announce-block", "FMT-1", "safety",
              "Each delivered completion names the child's session and runtime status and carries "
              "its result in one escaped data block that parses back to it (head plus an exact "
              "truncation marker under the cap), or (no output) when it has none.",
              announce_block),
    Invariant("stats-line", "FMT-4", "safety",
              "Each delivered completion ends with one stats line: runtime, tokens (or tokens "
              "unknown), session key, session id, transcript path.", stats_line),
    Invariant("history-bounds", "FMT-5", "safety",
              "sessions_history stays within 80 KiB and 4,000-character fields, drops usage and "
              "tool messages unless asked, and pages with a sane nextOffset.", history_bounds),
)
