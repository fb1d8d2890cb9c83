"""FMT-5 paging: ``nextOffset`` is the right offset, and pages followed by it tile the transcript.

``history-bounds`` checks that ``nextOffset`` lies in ``[offset, totalMessages)``; any value
there passes, the one that re-reads the oldest row returned or skips rows below it as well. What
reference §c13 promises is the value: ``nextOffset = max(offset, total - oldestSurvivingSeq + 1)``,
present exactly when it is below ``total``; and a page is the newest end of its window (the
rows up to ``total - offset``), oldest first. So a reader that follows ``nextOffset`` reads each
row once, never one it read already, never skipping one (when no byte cap or tool filter
dropped rows from a page), down to the first message.

Read from what the requester was handed (``requester.history`` and ``requester.archive``: the
page's messages, each with its ``__openclaw.seq``, its ``offset``, ``totalMessages`` and
``nextOffset``) and what it asked for (``limit``, ``includeTools``). A later read of the same
session (and run, for an archive) at an earlier read's ``nextOffset``, over the same total, is
that read's next page.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from sim.invariants.base import Invariant, Violation
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


def _page_problems(result: dict[str, Any], seqs: list[int], limit: int | None = None,
                   tools: bool | None = True) -> list[str]:
    """``tools``: whether tool rows were asked for; None when the record does not say (an
    archive read), and then an empty page's nextOffset is not judged."""
    total, offset = result["totalMessages"], result["offset"]
    problems = []
    if any(b <= a for a, b in pairwise(seqs)):
        problems.append(f"rows out of order (seqs {seqs})")
    if seqs and seqs[-1] > total - offset:
        problems.append(f"row {seqs[-1]} lies above the window, which ends at "
                        f"{total} - {offset} = {total - offset}")
    want = None
    if seqs and max(offset, total - seqs[0] + 1) < total:
        want = max(offset, total - seqs[0] + 1)
    elif not seqs and not tools and total > offset:
        # A page of only tool rows, dropped: paging goes on below the window the page was cut
        # from, the newest `limit` rows up to total - offset (reference §c19; rows are numbered
        # by their place in the transcript), so every older row is still reached.
        window = min(200 if limit is None else limit, total - offset)  # 200: the default page
        if window and offset + window < total:
            want = offset + window
    got = result.get("nextOffset")
    if not seqs and tools is None:
        return problems
    if got != want:
        problems.append(
            f"nextOffset {got}, expected {want} (max(offset {offset}, total {total} - oldest "
            f"row {seqs[0]} + 1))" if seqs else f"nextOffset {got} on an empty page, "
            f"expected {want}")
    return problems


def history_paging(trace: Sequence[Record]) -> list[Violation]:
    # (reader, session key, run, include tools) -> the latest page read: its record and seqs
    last: dict[tuple[str, str, str, bool], tuple[Record, list[int]]] = {}
    violations = []
    for r in of_kinds(trace, ("requester.history", "requester.archive")):
        if r.kind not in ("requester.history", "requester.archive"):
            continue
        result = r.data.get("result")
        if not isinstance(result, dict) or "messages" not in result:
            continue
        seqs = _seqs(result["messages"])
        if seqs is None:
            continue
        # An archive read names its run; a history read its child and whether it asked for
        # tool messages (an archive read's record does not say: no gap is judged there).
        archive = r.kind == "requester.archive"
        if archive:  # its record names neither the limit nor tools: an empty page not judged
            problems = _page_problems(result, seqs, None, None)
        else:
            problems = _page_problems(result, seqs, r.data.get("limit"),
                                      bool(r.data["include_tools"]))
        session = str(result.get("sessionKey") or (r.data["session_key"] if archive
                                                     else r.data["child"]))
        tools = False if archive else bool(r.data["include_tools"])
        at = (r.actor, session, str(r.data["run_id"]) if archive else "", tools)
        before = last.get(at)
        if before is not None:
            prev, prev_seqs = before
            prev_result = prev.data["result"]
            if (prev_result.get("nextOffset") == result["offset"]
                    and prev_result["totalMessages"] == result["totalMessages"] and prev_seqs):
                again = [s for s in seqs if s >= prev_seqs[0]]
                if again:
                    problems.append(f"the page at nextOffset {result['offset']} repeats row "
                                    f"{again[0]} of the page before it")
                # No byte cap and no tool filter dropped anything: the next page starts right
                # below the previous one's oldest row.
                elif (seqs and tools and not result.get("droppedMessages")
                      and seqs[-1] != prev_seqs[0] - 1):
                    problems.append(f"the page at nextOffset {result['offset']} ends at row "
                                    f"{seqs[-1]}, skipping rows down from {prev_seqs[0] - 1}")
        last[at] = (r, seqs)
        if problems:
            violations.append(Violation(
                "history-paging", "FMT-5",
                f"{r.kind.removeprefix('requester.')} of {session} by {r.actor}: "
                + "; ".join(problems), (r.seq,) if before is None else (before[0].seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("history-paging", "FMT-5", "safety",
              "A history page is the newest end of its window, oldest first, with nextOffset = "
              "max(offset, total - oldest row + 1) exactly when that is below the total; the "
              "page read at it continues right below, never repeating a row.", history_paging),
)
