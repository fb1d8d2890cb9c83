"""The ``sessions_history`` check: the model's projection, limits and paging (FMT-5) beside
OpenClaw's tool reading OpenClaw's own ``chat.history``.

What is real (the installed package, node/history.mjs): the transcript store the rows are
written to (``appendTranscriptMessages``: OpenClaw's SQLite store, with its write-side redaction
and image artifacts), the gateway method ``chat.history`` (``createEmbeddedCallGateway``:
OpenClaw's in-process implementation of it, ``readChatHistoryPage`` with its display
projection, page window, byte cap and ``resolveChatHistoryNextOffset``) and the tool
(``createSessionsHistoryTool``: argument reading, tool rows, the 4,000-unit field cut,
redaction, the 80 KiB cap, ``resolveSessionsHistoryPaginationMetadata``). No OpenClaw logic is
restated in the fake gateway.

What is fake: the stored transcript rows (the generated transcript; each row's event id
``row-N`` and write time are the check's), and the one session lookup the tool makes before
it reads (``sessions.resolve`` answers the key asked: the child session exists and the
requester may read it).

The model reads the rows as OpenClaw's store holds them: the message the store kept (its own
redaction applied on write) with the ``__openclaw`` row metadata the gateway reads back for it
(id, record time, display position, seq), so that both sides count the same bytes. The stage
(node ``historyStore``) writes the transcript, reads every row back through the gateway (the
rows its display projection shows, for the explainers), calls the tool at once and keeps its
answer for ``_real`` (the store's maintenance prunes entries older than 30 days, which then read
back empty: each entry is dated at its write); it also hands back
what OpenClaw's read-time masking (redactToolPayloadText) makes of each shown text it changes,
which the ``history-redaction`` explainer puts in place of the model's patterns. Rows that show
nothing (blank text, only thinking) are hidden by OpenClaw's display projection and not drawn:
``history-display-projection`` lists it. Differences are explained by the ``history-*`` rows of
differences.toml (sim/conform/history_sides.py states each).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from actors.announce.labels import js_trim
from actors.history.arguments import MAX_SAFE_INTEGER
from actors.history.sessions import TEXT_FIELD_LIMIT
from sim.conform.checks import Check
from sim.conform.driver import Driver
from sim.conform.history_sides import model_answer, stored_rows

# Text: any Unicode (lone surrogates included), the classes the cut and redaction care for.
_SPECIAL = ("\t\n\r \xa0\u2028\u3000<>&\"'\\\x00\u200b\ufeffé\U0001f600\ud800\udc00\udbff"
            "\udfff")
_LONE = st.sampled_from(["\ud800", "\udc00", "\udbff", "\udfff"])
CREDENTIALS = (
    "sk-abcdefghijklmnopqrstuvwx", "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "github_pat_11ABCDEFGHIJKLMNOPQRSTUV_xyz",
    "xoxb-1234567890-abcdefghij", "AKIAABCDEFGHIJKLMNOP", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "Bearer abcdefghijklmnopqrstuvwxyz", "bearer abc.def-ghi_jkl~mno",
    "password=hunter2hunter2", "api_key: \"0123456789abcdef\"", "token=abcdefghijklmnopqrstu",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----",
)
_SHORT = st.one_of(
    st.text(max_size=12),
    st.text(alphabet=st.sampled_from(_SPECIAL + "ab"), max_size=12),
    st.lists(st.one_of(st.text(max_size=3), _LONE, st.sampled_from(_SPECIAL)), max_size=6)
    .map("".join),
    st.tuples(st.text(max_size=4), st.sampled_from(CREDENTIALS), st.text(max_size=4))
    .map(" ".join),
)


def _near_cut(parts: tuple[int, str, str]) -> str:
    """A field within a few UTF-16 units of the 4,000-unit cut, with an astral character or a
    lone surrogate at or near it (the cut must never split a pair)."""
    offset, piece, tail = parts
    return "a" * (TEXT_FIELD_LIMIT + offset - len(piece.encode("utf-16-le",
                                                             "surrogatepass")) // 2) + piece + tail


TEXT = st.one_of(
    _SHORT, _SHORT, _SHORT,
    st.tuples(st.integers(-3, 3), st.sampled_from(["", "\U0001f600", "\ud800", "é", "b"]),
              st.sampled_from(["", "\U0001f600", "x"])).map(_near_cut),
    st.integers(3_000, 9_000).map(lambda n: "w" * n),
)
_DATA = st.sampled_from(["", "QUJD", "QUJDRA==", "QU JD\nRA==", "!!", "A" * 4_000])


def _block() -> st.SearchStrategy[dict[str, Any]]:
    text = st.builds(lambda t, sig: {"type": "text", "text": t, **sig}, TEXT,
                     st.sampled_from([{}, {}, {"textSignature": "ts"}]))
    thinking = st.builds(lambda t, sig: {"type": "thinking", "thinking": t, **sig}, TEXT,
                         st.sampled_from([{}, {"thinkingSignature": "SIG"},
                                          {"signature": "s"}]))
    image = st.builds(lambda data, mime: {"type": "image", **data, "mimeType": mime},
                      st.one_of(st.just({}), _DATA.map(lambda d: {"data": d}),
                                st.integers(0, 10**6).map(lambda n: {"bytes": n})),
                      st.sampled_from(["image/png", "image/jpeg"]))
    call = st.builds(lambda name: {"type": "toolCall", "id": "call-1", "name": name,
                                   "arguments": {"q": "x"}}, st.sampled_from(["read", "exec"]))
    return st.one_of(text, text, text, thinking, image, call)


_EXTRA = st.sampled_from([{}, {}, {}, {"details": {"x": 1}}, {"usage": {"inputTokens": 3}},
                          {"cost": 0.5}])


def _visible(content: Any) -> bool:
    """Does the row show text: a string, or a text block, that is not blank as JavaScript
    trims?"""
    if isinstance(content, str):
        return js_trim(content) != ""
    return any(block.get("type") == "text" and js_trim(block["text"]) != ""
               for block in content)


def _row() -> st.SearchStrategy[dict[str, Any]]:
    role = st.sampled_from(["user", "assistant", "assistant", "toolResult", "tool"])
    # Every row shows some text: OpenClaw's display projection hides a row that shows nothing
    # (a blank one, only thinking), which the model does not (the row
    # history-display-projection lists it; such rows are not drawn here).
    content = st.one_of(TEXT, st.lists(_block(), min_size=1, max_size=4)).filter(_visible)
    return st.builds(lambda r, c, extra: {"role": r, "content": c, **extra}, role, content,
                     _EXTRA)


def _many(count: int) -> list[dict[str, Any]]:
    """A long transcript of small rows (the 200-row default page, the 1,000-row largest)."""
    roles = ("user", "assistant", "toolResult", "assistant")
    return [{"role": roles[i % 4], "content": f"row {i + 1}"} for i in range(count)]


def _wide(count: int) -> list[dict[str, Any]]:
    """Rows of long text: past the 80 KiB page cap after the field cut (or one row past it)."""
    return [{"role": "assistant", "content": [{"type": "text", "text": f"{i} " + "z" * 3_990}]
             * (1 + i % 3)} for i in range(count)]


# Mostly short transcripts (a stored row costs OpenClaw's store ~5 ms): long ones around the
# 200-row default page, wide ones past the 80 KiB cap; the 1,000-row largest page is an edge.
TRANSCRIPT = st.one_of(
    *[st.lists(_row(), max_size=8)] * 6, st.lists(_row(), max_size=30),
    st.sampled_from([0, 1, 2, 3, 199, 200, 201, 202]).map(_many),
    st.integers(1, 40).map(_wide),
)

ABSENT = "(absent)"  # the argument is not passed at all
_COUNT = st.one_of(
    st.just(ABSENT), st.just(ABSENT), st.integers(-3, 12), st.integers(-3, 12),
    st.sampled_from([199, 200, 201, 999, 1_000, 1_001, MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1,
                     2**64, 10**400, -(2**53)]),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, -1.5, 1e20, 1e-7, 3.0000000000000004]),
    st.sampled_from(["3", " 4 ", "2.0", "2.5", "1e2", "abc", "", "  ", "0x10", "-1", "+5", None,
                     True, False, [], {}]),
)
ARGS = st.builds(
    lambda limit, offset, tools: {key: value for key, value in
                                  (("limit", limit), ("offset", offset), ("includeTools", tools))
                                  if value != ABSENT},
    _COUNT, _COUNT, st.sampled_from([ABSENT, True, False, None, 0, 1, "", "no"]))
HISTORY_INPUT = st.tuples(TRANSCRIPT, ARGS)


def _stage(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    stored = driver.request("historyStore", inputs=[{"rows": list(rows), "args": args}
                                                    for rows, args in inputs])
    return [{"sessionKey": kept["sessionKey"], "rows": kept["rows"], "args": args,
             "shown": kept["shown"], "ticket": kept["ticket"],
             "redactions": kept["redactions"]}
            for kept, (_, args) in zip(stored, inputs, strict=True)]


def _real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return list(driver.request("sessionsHistory",
                               tickets=[value["ticket"] for value in inputs]))


def _show(value: dict[str, Any]) -> str:
    return repr({"args": value["args"], "rows": stored_rows(value)})


HISTORY = Check(
    "sessions-history",
    "createSessionsHistoryTool (internal) over OpenClaw's chat.history "
    "(createEmbeddedCallGateway) and transcript store (appendTranscriptMessages)",
    HISTORY_INPUT, model_answer, _real,
    edges=(([], {}), (_many(3), {"limit": 0}), (_many(3), {"limit": 1, "offset": 0}),
           (_many(250), {}), (_many(1_001), {"limit": 1_001, "offset": 0}),
           (_many(1_001), {"limit": MAX_SAFE_INTEGER}), (_many(1_001), {"offset": 1}),
           ([{"role": "toolResult", "content": "t"}] * 3 + _many(2),
            {"limit": 2, "offset": 0}),
           (_wide(30), {"offset": 0}), (_wide(1), {"includeTools": True})),
    show=_show, stage=_stage,
    needs=("createSessionsHistoryTool", "createEmbeddedCallGateway", "appendTranscriptMessages",
           "replaceSessionEntry", "resolveSessionStorePathCore"))
