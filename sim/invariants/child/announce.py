"""FMT invariants: what the requester's model actually read, checked against what the child ran.

Restated from the trace alone: the spawn record (child session key and id, task), the child's end
record (status, error, result, usage) and the text of each ``requester.accept`` and
``requester.history`` record. Nothing here imports the formatter it checks. A result reads as
frozen (``sim/invariants/frozen.py``: over 102,400 bytes of UTF-8, a whole-character prefix plus
a notice, reference §c14) before the shared 160,000-character cap applies to the block.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.invariants.child.history_reads import MAX_PAGE, served_reads
from sim.invariants.delivery.receipts import produced
from sim.invariants.frozen import frozen
from sim.invariants.index import of_kinds
from sim.invariants.nesting.findings import HEADER, own_part
from sim.invariants.observations import DATA_CLOSE, DATA_OPEN, shown_block, stats_lines
from sim.invariants.private.completion import private_runs
from sim.trace import Record

CAP = 160_000
NO_OUTPUT = "(no output)"
_MARKER = re.compile(
    r"\n\[truncated: (\d+) characters omitted; read the rest with sessions_history "
    r"sessionKey=(\S+)\]")
HISTORY_BYTE_CAP = 80 * 1024
HISTORY_FIELD_MAX = 4_000 + len("\n…(truncated)…")
# sessions_history's page when no limit is asked for (the gateway's chat.history, reference §c19).
HISTORY_DEFAULT_PAGE = 200


def _visible(result: str | None) -> bool:
    # DEL-2 / FMT-3: no text, blank text and an exact NO_REPLY all read as "(no output)".
    return result is not None and result.strip() not in ("", "NO_REPLY")


# Reference §c16, restated: the runtime's error verbatim (no cap, whitespace kept; a missing or
# empty one is "unknown error"), both context markers neutralised; §c5: the status field line has
# its line breaks collapsed.

# JavaScript's whitespace and line terminators (what String.prototype.trim removes).
_JS_SPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
             "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def _label(status: str, error: str | None) -> str:
    # ``outcome.error || "unknown error"``: only a missing or empty error is unknown; a
    # whitespace-only one is kept (and names a timeout's error too).
    if status == "ok":
        label = "completed; ready for parent review"
    elif status == "timeout":
        label = "timed out" + (f": {error}" if error else "")
    elif status == "error":
        label = "failed: " + (error if error else "unknown error")
    else:
        label = "finished with unknown status"
    label = label.replace("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>",
                          "[[OPENCLAW_INTERNAL_CONTEXT_BEGIN]]").replace(
        "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>", "[[OPENCLAW_INTERNAL_CONTEXT_END]]")
    # OpenClaw 2026.9.6 (reference §c19): each run of \r?\n line breaks is one space, the line is
    # trimmed (JavaScript's whitespace), and past 500 UTF-16 units it keeps 488 of them (no
    # split character), right-trimmed, then "…[truncated]".
    label = re.sub("\r?\n+", " ", label).strip(_JS_SPACE) or status
    if len(label.encode("utf-16-le", "surrogatepass")) <= 1000:
        return label
    units, end = 0, 0
    for end, char in enumerate(label):  # noqa: B007 (end is read after the loop)
        units += 2 if ord(char) > 0xFFFF else 1
        if units > 488:
            break
    return label[:end].rstrip(_JS_SPACE) + "…[truncated]"


def _duration(ms: int) -> str:
    """§c16 compact runtime for whole milliseconds: n/a for zero, Nms under a second, else the
    two most significant non-zero units of d, h, m, s of the rounded seconds."""
    if ms <= 0:
        return "n/a"
    if ms < 1000:
        return f"{ms}ms"
    seconds = (ms + 500) // 1000
    units = [(seconds // 86_400, "d"), (seconds % 86_400 // 3_600, "h"),
             (seconds % 3_600 // 60, "m"), (seconds % 60, "s")]
    return "".join([f"{n}{u}" for n, u in units if n][:2])


def _compact(count: int) -> str:
    """A token count in compact units (reference §c7: ``950``, ``1.0k``, ``197.0k``, ``1.0m``):
    ``0`` for none; else the count over 1,000 (over 1,000,000 from ``1000.0k`` on) to one
    decimal as JavaScript's ``toFixed(1)`` writes it: the quotient is a double, rounded half up
    from its exact binary value (so 1,150 reads ``1.1k``: 1.15 is stored a hair below)."""
    if count <= 0:
        return "0"
    if count < 1000:
        return str(count)

    def to_fixed(quotient: float) -> str:
        # floor(q * 10 + 1/2) in exact arithmetic: q is n / d exactly (d a power of two), so
        # floor((20 n + d) / 2 d) (``Fraction`` arithmetic, as stated first, cost ~10 us a call).
        n, d = quotient.as_integer_ratio()
        tenths = (20 * n + d) // (2 * d)
        return f"{tenths // 10}.{tenths % 10}"

    thousands = to_fixed(count / 1000)
    if count < 1_000_000 and float(thousands) < 1000:
        return thousands + "k"
    return to_fixed(count / 1_000_000) + "m"


def has_line(text: str, line: str) -> bool:
    """Whether ``line`` is one of ``text``'s lines (``line in text.split("\n")``), without
    cutting out every line of the result the announcement carries."""
    if "\n" in line:
        return False  # no line holds a line break
    return (text == line or text.startswith(line + "\n") or text.endswith("\n" + line)
            or f"\n{line}\n" in text)


def _context(trace: Sequence[Record]) -> tuple[dict[str, Record], dict[str, Record]]:
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    for r in of_kinds(trace, ("spawn", "child.end")):
        if r.kind == "spawn":
            spawns[r.data["run_id"]] = r
        elif r.kind == "child.end":
            ends[r.data["run_id"]] = r
    return spawns, ends


def _spawned_children(trace: Sequence[Record], spawns: dict[str, Record],
                      ends: dict[str, Record]) -> set[str]:
    """The runs that spawned children while they ran (their results may carry findings)."""
    by_session: dict[str, list[int]] = {}
    for r in of_kinds(trace, ("spawn",)):
        if r.kind == "spawn":
            by_session.setdefault(r.data["requester"], []).append(r.seq)
    return {run_id for run_id, spawn in spawns.items() if run_id in ends and any(
        spawn.seq < seq < ends[run_id].seq
        for seq in by_session.get(spawn.data["child_session_key"], ()))}


def announce_block(trace: Sequence[Record]) -> list[Violation]:
    spawns, ends = _context(trace)
    made = produced(trace)  # a receipt's result: the end's, or a later correction's (DEL-12)
    parents = _spawned_children(trace, spawns, ends)
    violations: list[Violation] = []
    for r in of_kinds(trace, ("requester.accept",)):
        if r.kind != "requester.accept" or r.data["run_id"] not in ends:
            continue
        run_id, text = r.data["run_id"], r.data["text"]
        spawn, end = spawns[run_id], ends[run_id]

        def fail(requirement: str, what: str, r: Record = r, end: Record = end) -> None:
            violations.append(Violation("announce-block", requirement,
                                        f"{r.data['run_id']}: {what}", (end.seq, r.seq)))

        if len(text) > CAP:
            fail("FMT-2", f"the requester read {len(text)} characters, over the {CAP} cap")
        if not has_line(text, f"session_key: {spawn.data['child_session_key']}"):
            fail("FMT-1", "the block does not name the child session key")
        label = _label(end.data["status"], end.data["error"])
        if not has_line(text, f"status: {label}"):
            fail("FMT-1", f"the status line is not 'status: {label}' (runtime status "
                          f"{end.data['status']})")
        # As the registry froze it: over 102,400 bytes, a whole-character prefix plus the
        # frozen-result notice (reference §c14); the shared cap below applies to that.
        result = frozen(made.get((run_id, r.data["ended_at"]), end).data["result"])
        opens = text.count("<prompt-data>")
        findings_only = DATA_OPEN + HEADER in text  # §c8: findings replace a missing answer
        if not _visible(result) and not findings_only:
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
        block = shown_block(text)
        assert block is not None  # both markers are there (above)
        _, close, shown = block
        marker = _MARKER.match(text, close + len(DATA_CLOSE))  # what follows the block
        own = result or ""  # None only where the findings stand in for it (§c8)
        shown, findings = own_part(shown, own)
        if findings is not None or findings_only or (
                marker is not None and _visible(own) and shown.startswith(own + "\n\n")):
            pass  # the run's own result, then its children's findings (findings-scoped)
        elif marker is None:
            if shown != own:
                fail("FMT-2", "the result block does not parse back to the child's result")
        else:
            omitted, key = int(marker.group(1)), marker.group(2)
            # A run with children: N also counts the cut findings after its own result.
            short = len(own) - len(shown)
            if not own.startswith(shown) or (omitted != short and not (
                    run_id in parents and omitted > short)):
                fail("FMT-2", f"the truncated head is not the result's beginning, or the marker's "
                              f"{omitted} omitted characters do not add up")
            if key != spawn.data["child_session_key"]:
                fail("FMT-2", f"the truncation marker points at {key}, not the child's session")
            elif run_id not in parents and omitted == short and own.startswith(shown):
                problem = _cut_not_exact(text, marker.end() - marker.start(), own, shown, key)
                if problem:
                    fail("FMT-2", problem)
    return violations


def _escaped_length(text: str) -> int:
    """The length of ``text`` escaped (``&`` five characters, ``<`` four), counted."""
    return len(text) + 3 * text.count("<") + 4 * text.count("&")


def _cut_not_exact(text: str, marker_len: int, own: str, head: str, key: str) -> str | None:
    """What is wrong with a lone result's cut (None: nothing), from the block's length alone:
    the block is cut only when the result whole would pass the 160,000 cap (a block of exactly
    the cap fits, FMT-2: "one strict shared cap"), and then to the longest head that fits with
    its marker (issue 36: a ``<`` for ``<=`` at the cap, or a head a character short)."""
    shown = _escaped_length(head)
    rest = len(text) - shown - marker_len  # the block without its result
    whole = rest + _escaped_length(own)
    if whole <= CAP:
        return f"the result was cut, yet the block whole is {whole} characters, within the cap"
    if len(head) + 1 < len(own):
        marker = (f"\n[truncated: {len(own) - len(head) - 1} characters omitted; read the rest "
                  f"with sessions_history sessionKey={key}]")
        longer = rest + shown + _escaped_length(own[len(head)]) + len(marker)
        if longer <= CAP:
            return (f"the head of {len(head)} characters is not the longest that fits: one more "
                    f"makes the block {longer} characters")
    return None


def stats_line(trace: Sequence[Record]) -> list[Violation]:
    spawns, ends = _context(trace)
    private = private_runs(trace)
    violations = []
    # A run that waited for the maxConcurrent lane or its session's earlier run starts later,
    # or never (aborted waiting).
    started: dict[str, int | None] = {}
    for r in of_kinds(trace, ("lane.queued", "session.queued", "lane.started",
                              "requester.accept")):
        if r.kind in ("lane.queued", "session.queued"):
            started[r.data["run_id"]] = None
        elif r.kind == "lane.started":
            started[r.data["run_id"]] = r.t_ms
        if r.kind != "requester.accept" or r.data["run_id"] not in ends:
            continue
        if r.data["run_id"] in private:
            continue  # a private hand-off leaves the stats line out (private-handoff-stable)
        spawn, end = spawns[r.data["run_id"]], ends[r.data["run_id"]]
        start_ms = started.get(r.data["run_id"], spawn.t_ms)
        if start_ms is None:
            start_ms = end.t_ms  # never started: its runtime is unknown ("n/a")
        stats = stats_lines(r.data["text"])
        problems = []
        if len(stats) != 1:
            problems.append(f"{len(stats)} stats lines")
        else:
            parts = stats[0][len("Stats: "):].split(" • ")
            runtime = f"runtime {_duration(end.t_ms - start_ms)}"
            if parts[0] != runtime:
                problems.append(f"{parts[0]!r} where the child ran from {start_ms} to "
                                f"{end.t_ms} ms ({runtime!r})")
            tokens = [p for p in parts if p.startswith("tokens ")]
            unknown = tokens == ["tokens unknown"]
            if (end.data["usage"] is None) != unknown:
                problems.append(f"tokens read {tokens} but the child's usage was "
                                f"{end.data['usage']}")
            elif end.data["usage"] is not None:
                tokens_in, tokens_out = (max(n, 0) for n in end.data["usage"])
                want = (f"tokens {_compact(tokens_in + tokens_out)} "
                        f"(in {_compact(tokens_in)} / out {_compact(tokens_out)})")
                if tokens != [want]:
                    problems.append(f"tokens read {tokens}, usage was {end.data['usage']} "
                                    f"({want!r})")
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
    # Lone surrogates are data (a JSON log may carry them): one unit each, never an error.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def history_bounds(trace: Sequence[Record]) -> list[Violation]:
    """The page's bounds, judged against what the read asked (its ``world.action``) and the
    transcript's length counted from the child's records (``history_reads.py``), never the
    answer's own ``offset`` or ``totalMessages`` (which come only with an offset, §c19)."""
    violations = []
    for read in served_reads(trace):
        if read.archive:
            continue
        r, result = read.record, read.result
        messages = result["messages"]
        problems = []
        size = len(json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
                   .encode("utf-8", "surrogatepass"))
        if size > HISTORY_BYTE_CAP:
            problems.append(f"{size} bytes of messages, over the 80 KiB cap")
        # Content fields only: a message-level `thinking` is not cut (reference §c16).
        for key, text in _strings([m.get("content") for m in messages]):
            if key in ("text", "thinking", "partialJson", "content", None) and \
                    _utf16(text) > HISTORY_FIELD_MAX:
                problems.append(f"a {key or 'content'} field of {_utf16(text)} UTF-16 units")
                break
        for message in messages:
            if not read.include_tools and message.get("role") in ("toolResult", "tool"):
                problems.append("a tool message without includeTools")
            for dropped in ("usage", "details", "cost"):
                if dropped in message:
                    problems.append(f"a message still carries {dropped!r}")
        total, offset, limit = read.total, read.offset or 0, read.limit
        # With tool rows asked for and nothing dropped for size, the page is the newest
        # ``limit`` rows of the window (all of them when the limit is past the rows, §c16).
        if total is not None and read.include_tools and not result["droppedMessages"]:
            # No limit: the gateway's page of 200 rows (reference §c19); at most 1,000.
            page = HISTORY_DEFAULT_PAGE if limit is None else min(limit, MAX_PAGE)
            want = min(page, max(total - offset, 0))
            if len(messages) != want:
                problems.append(f"{len(messages)} rows for limit {limit} at offset {offset} of "
                                f"{total}, not {want}")
        if total is not None and "nextOffset" in result and \
                not offset + 1 <= result["nextOffset"] < total:
            problems.append(f"nextOffset {result['nextOffset']} outside [{offset + 1}, {total})")
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
