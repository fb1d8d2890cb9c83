"""Each ``sessions_history`` page a requester was served, with what was asked and what it read.

The FMT-5 paging oracles judge a page against two things the model never computed for them:

* what the read asked: its ``world.action`` (``limit``, ``offset``, ``include_tools``, joined by
  the request's number). ``offset`` None means the caller passed none, which is not ``0``: only
  a read given an offset is answered with paging fields (reference §c19). A read the harness
  did not number (a test driving a requester directly) falls back to the served record's own
  as-asked fields (``requester.history``'s ``limit`` and ``offset``); an archive read without a
  request is not judged on them.
* the transcript's length, counted from the child's own records: a run's transcript is its
  task plus one row per ``child.message``, ``child.tool_result`` and ``child.inherited``
  (actors/child/steps.py's order); a run's end (``child.end``) makes it its session's live
  transcript, a cleanup or a session's deletion removes that (a read of it sees no rows). An
  archive read names its run.

Rows are numbered by their place in the transcript (``__openclaw.seq``), so ``total - offset``
is the newest row a page may hold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from sim.invariants.index import of_kinds
from sim.trace import Record

DEFAULT_PAGE = 200  # chat.history's page when no limit is asked (reference §c19)
# chat.history's largest page (CHAT_HISTORY_MAX_ENTRIES, OpenClaw 2026.9.6: a larger limit reads
# 1,000 rows; `handoff conform --check sessions-history` compares it with the package).
MAX_PAGE = 1_000
PAGING_FIELDS = ("offset", "nextOffset", "hasMore", "totalMessages")
_KINDS = ("world.action", "spawn", "child.message", "child.tool_result", "child.inherited",
          "child.end", "session.cleanup", "world.delete-session", "requester.history",
          "requester.archive")


@attrs.frozen
class Read:
    record: Record
    result: dict[str, Any]
    session: str  # the child session key read
    run: str  # the run read from the archive; "" for a live read
    asked: bool  # whether what was asked is known (then offset, limit, tools are it)
    offset: int | None
    limit: int | None
    include_tools: bool
    total: int | None  # the transcript's length; None when unknown (a never spawned child)

    @property
    def archive(self) -> bool:
        return self.record.kind == "requester.archive"

    @property
    def where(self) -> str:
        kind = "archive read" if self.archive else "sessions_history"
        return f"{kind} of {self.session} by {self.record.actor}"


def gateway_next_offset(total: int, offset: int, limit: int | None) -> int | None:
    """chat.history's own nextOffset (resolveChatHistoryNextOffset, OpenClaw 2026.9.6): its
    page is the newest ``limit`` (200; at most 1,000) rows up to ``total - offset``, tool rows
    included;
    ``max(offset + 1, total - oldest row of that page + 1)``, given only when below the total
    (``hasMore``). An empty page (offset past the rows) has none."""
    top = total - offset
    if top <= 0:
        return None
    oldest = max(top - (DEFAULT_PAGE if limit is None else min(limit, MAX_PAGE)), 0) + 1
    candidate = max(offset + 1, total - oldest + 1)
    return candidate if candidate < total else None


def tool_next_offset(total: int, offset: int, limit: int | None,
                     oldest_seq: int | None) -> int | None:
    """The tool's nextOffset (resolveSessionsHistoryPaginationMetadata, OpenClaw 2026.9.6):
    with ``seq`` the oldest row returned, ``max(offset + 1, min(gateway's nextOffset ?? total,
    total - seq + 1))``, present when below the total (``hasMore``); with no row returned, the
    gateway's nextOffset as it is."""
    gateway = gateway_next_offset(total, offset, limit)
    if oldest_seq is None:
        return gateway
    candidate = max(offset + 1, min(total if gateway is None else gateway,
                                    total - oldest_seq + 1))
    return candidate if candidate < total else None


def served_reads(trace: Sequence[Record]) -> Iterator[Read]:
    """Every page served (an archive read only when it answered ``ok``), in trace order."""
    asked: dict[int, Mapping[str, Any]] = {}  # request number -> its world.action's data
    key_of_child: dict[str, str] = {}
    key_of_run: dict[str, str] = {}
    rows: dict[str, int] = {}  # run -> its transcript's length so far (the task first)
    live: dict[str, int] = {}  # session key -> its live transcript's length
    for r in of_kinds(trace, _KINDS):
        kind, data = r.kind, r.data
        if kind == "world.action":
            asked[data["request"]] = data
        elif kind == "spawn":
            key_of_child[data["child"]] = key_of_run[data["run_id"]] = data["child_session_key"]
            rows[data["run_id"]] = 1
        elif kind in ("child.message", "child.tool_result", "child.inherited"):
            rows[data["run_id"]] = rows.get(data["run_id"], 1) + 1
        elif kind == "child.end":
            live[data["archive"]["session_key"]] = rows.get(data["run_id"], 1)
        elif kind == "session.cleanup":
            if data["deleted"]:
                live.pop(data["session_key"], None)
        elif kind == "world.delete-session":
            live.pop(data["session"], None)
        elif kind in ("requester.history", "requester.archive"):
            result = data.get("result")
            if not isinstance(result, dict) or "messages" not in result:
                continue
            archive = kind == "requester.archive"
            if archive and data["status"] != "ok":
                continue
            request = asked.get(data.get("request") or 0)
            if archive:
                session, run = data["session_key"], data["run_id"]
                total = rows.get(run)
            else:
                session, run = key_of_child.get(data["child"], ""), ""
                total = live.get(session, 0) if session else None
            if request is not None:
                yield Read(r, result, session, run, True, request["offset"], request["limit"],
                           bool(request["include_tools"]), total)
            elif not archive:
                yield Read(r, result, session, run, True, data.get("offset"),
                           data.get("limit"), bool(data["include_tools"]), total)
            else:
                yield Read(r, result, session, run, False, None, None, True, total)
