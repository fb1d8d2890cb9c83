"""Each chunk fits its channel's limit, and the text is cut where docs/fidelity.md says (DEL-11).

``chunks-join-to-text`` checks that a completion's chunks, joined, are the text its requester
holds: a gateway that sent one 5,000-character message to a channel of 700 passes it. What is
promised is more: a session's own channel takes messages of at most ``chunk_chars`` characters
(the scenario's configuration, ``world.session``), longer text goes out in chunks, each cut after
the last line break within the limit when there is one, else at the limit; a channel with no
limit (another channel an override picked, docs/fidelity.md) gets the text whole.

Read from the configuration (``world.session``: the session's own ``channel`` and its
``chunk_chars``) and what each channel received (``gateway.chunk``: one record per chunk a
channel's user sees, with its index and the send's chunk count). A send whose chunks all reached
the channel is judged chunk by chunk against the rule applied to the text they join to; a send
that broke part-way only by the limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.trace import Record


def _limits(trace: Sequence[Record]) -> dict[str, tuple[str | None, int | None]]:
    """Each top-level session's own channel and its longest message (None: no limit)."""
    limits: dict[str, tuple[str | None, int | None]] = {}
    for r in of_kinds(trace, ("world.session",)):
        if r.kind == "world.session" and not r.data["nested"]:
            limits[r.data["key"]] = (r.data.get("channel"), r.data.get("chunk_chars"))
    return limits


def expected_cut(rest: str, limit: int) -> str:
    """The next chunk of ``rest`` under the rule: all of it when it fits, else up to and with
    the last line break within the limit, else exactly the limit's worth."""
    return rest[:cut_end(rest, 0, limit)]


def cut_end(text: str, at: int, limit: int) -> int:
    """Where the chunk of ``text`` starting at ``at`` ends (:func:`expected_cut` of
    ``text[at:]``, found in place: cutting the rest off after each chunk copied a long text
    once per chunk)."""
    if len(text) - at <= limit:
        return len(text)
    cut = text.rfind("\n", at, at + limit) + 1  # 0: none (a break found is at or after ``at``)
    return cut if cut > 0 else at + limit


def chunk_fits_channel(trace: Sequence[Record]) -> list[Violation]:
    limits = _limits(trace)
    sends: dict[tuple[str, str, str], dict[int, Record]] = {}  # (session, channel, key) -> chunks
    for r in of_kinds(trace, ("gateway.chunk",)):
        if r.kind == "gateway.chunk":
            at = (r.data["session"], r.data["channel"], r.data["key"])
            sends.setdefault(at, {}).setdefault(r.data["index"], r)
    violations: list[Violation] = []
    for (session, channel, _key), got in sends.items():
        own_channel, limit = limits.get(session, (None, None))
        if channel != own_channel:
            limit = None  # another channel's limit is not configured: the text goes whole
        first = got[min(got)]
        run_id, total = first.data["run_id"], first.data["total"]

        def fail(what: str, *records: Record, run_id: str = run_id,
                 channel: str = channel) -> None:
            violations.append(Violation("chunk-fits-channel", "DEL-11",
                                        f"{run_id}'s completion to {channel}: {what}",
                                        tuple(r.seq for r in records)))

        if limit is None:
            if total != 1:
                fail(f"split into {total} chunks, though {channel} sets no message limit "
                     f"for {session}", first)
            continue
        over = [c for c in got.values() if len(c.data["text"]) > limit]
        if over:
            fail(f"chunk {over[0].data['index'] + 1} of {total} has "
                 f"{len(over[0].data['text'])} characters, over the channel's limit of {limit}",
                 over[0])
            continue
        if len(got) != total:
            continue  # broke part-way: the rest of the text is unknown
        text = "".join(got[i].data["text"] for i in range(total) if i in got)
        start = 0  # where the rest of the text starts
        for index in range(total):
            chunk = got.get(index)
            if chunk is None:
                break  # an index past the count: chunks-join-to-text reports the mismatch
            end = cut_end(text, start, limit)
            shown = chunk.data["text"]
            if len(shown) != end - start or not text.startswith(shown, start):
                fail(f"chunk {index + 1} of {total} is {len(shown)} characters; "
                     f"cut after the last line break within {limit} (else at the limit) it is "
                     f"{end - start}", chunk)
                break
            start = end
    return violations


INVARIANTS = (
    Invariant("chunk-fits-channel", "DEL-11", "safety",
              "Every chunk fits its channel's configured limit; longer text is cut after the "
              "last line break within the limit (else at the limit), and a channel with no limit "
              "gets the text whole.", chunk_fits_channel),
)
