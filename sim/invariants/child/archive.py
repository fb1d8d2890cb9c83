"""FMT-6: what a requester reads from a run's retained archive.

Read from the trace: ``spawn`` (the run, its child session key and task), the child's own
records (``child.message``, ``child.tool_result``, ``child.inherited``: one answered turn
each), ``child.end`` with its ``archive`` (the store row the finished run retained: its key,
generation and size), ``session.cleanup`` (the live session deleted) and ``requester.archive``
(what the requester read). The oracle restates the rule; it never runs the archive reader.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.trace import Record

ARCHIVE_RECORD_LIMIT = 8 * 1024 * 1024


@attrs.define
class _Run:
    spawn: Record
    texts: set[str] = attrs.field(factory=set)  # what this run's transcript may say
    messages: int = 1  # the task
    archived: Record | None = None


def _strings(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "thinking"):
                    if isinstance(block.get(key), str):
                        yield block[key]
                yield from _strings(block.get("content"))


def archive_reads(trace: Sequence[Record]) -> list[Violation]:
    runs: dict[str, _Run] = {}
    # Each key's archived generations, in order: a read looks at its own key's only (a scan of
    # every archive per read made a run with n children cost O(n^2)).
    archived: dict[str, list[Record]] = {}
    cleaned: dict[str, Record] = {}
    violations = []
    for r in of_kinds(trace, ("spawn", "child.message", "child.tool_result", "child.inherited",
                              "child.end", "session.cleanup", "requester.archive")):
        kind = r.kind
        if kind == "spawn":
            runs[r.data["run_id"]] = _Run(r, {r.data["task"]})
        elif kind in ("child.message", "child.tool_result", "child.inherited"):
            run = runs[r.data["run_id"]]
            run.messages += 1
            if kind == "child.message":
                run.texts.update(b["text"] for b in r.data["blocks"] if b["text"] is not None)
            else:
                run.texts.add(r.data["text"])
        elif kind == "child.end":
            runs[r.data["run_id"]].archived = r
            archived.setdefault(r.data["archive"]["session_key"], []).append(r)
        elif kind == "session.cleanup":
            cleaned[r.data["session_key"]] = r
        elif kind == "requester.archive":
            key = r.data["session_key"]
            violations += _check_read(r, runs, archived.get(key, []), cleaned.get(key))
    return violations


def _check_read(read: Record, runs: dict[str, _Run], generations: list[Record],
                cleanup: Record | None) -> list[Violation]:
    key, run_id = read.data["session_key"], read.data["run_id"]
    run = runs[run_id]
    oversized = [a for a in generations if a.data["archive"]["bytes"] > ARCHIVE_RECORD_LIMIT]
    after = " after cleanup deleted the live session" if cleanup is not None else ""
    reused = len({a.data["run_id"] for a in generations} | {run_id}) > 1
    where = f"{read.actor} read run {run_id} of {key}{after}" + \
        (" (a reused key)" if reused else "")
    proof = (read.seq, *(a.seq for a in generations))
    problems = []
    status = read.data["status"]
    if oversized:
        if status != "unavailable" or read.data["retryable"]:
            row = oversized[0].data["archive"]
            problems.append(
                f"generation {row['generation']} is {row['bytes']} "
                f"bytes, over 8 MiB, so the history is unavailable and not retryable; the reader "
                f"said {status} (retryable {read.data['retryable']})")
    elif run.archived is None:
        if status != "not_found":
            problems.append(f"the run retained no archive yet, but the reader said {status}")
    elif status != "ok":
        problems.append(f"the run's archive was retained, but the reader said {status} "
                        f"({read.data['reason']})")
    result = read.data["result"]
    if status == "ok" and result is not None:
        if "totalMessages" in result and result["totalMessages"] != run.messages:
            problems.append(f"{result['totalMessages']} messages, but the run's transcript "
                            f"holds {run.messages}")
        others = set().union(*(runs[a.data["run_id"]].texts for a in generations
                               if a.data["run_id"] != run_id)) - run.texts
        for message in result["messages"]:
            foreign = [t for t in _strings(message.get("content")) if t in others]
            if foreign:
                problems.append(f"it holds another generation's text {foreign[0]!r}")
                break
    return [Violation("archive-read", "FMT-6", f"{where}: {'; '.join(problems)}", proof)] \
        if problems else []


INVARIANTS = (
    Invariant("archive-read", "FMT-6", "safety",
              "A run's retained archive stays readable after cleanup deletes the live session, "
              "paged within that run's own generation of a reused key; an archive record over "
              "8 MiB makes the history unavailable (not retryable) for every generation.",
              archive_reads),
)
