"""FMT-5 sessions_history limits and FMT-6 archive reads."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.history import (
    ARCHIVE_RECORD_LIMIT,
    BYTE_CAP,
    OMITTED_MESSAGE,
    TRUNCATION_SUFFIX,
    ArchiveRecord,
    ArchiveStore,
    LiveSession,
    Reader,
    json_bytes,
    read_run_history,
    redact_credentials,
    sessions_history,
    truncate_text_field,
    utf16_length,
)


def msg(role: str, content: Any, seq: int | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"role": role, "content": content, **extra}
    if seq is not None:
        m["__openclaw"] = {"seq": seq}
    return m


def test_text_field_cut_at_4000_utf16_units_with_marker() -> None:
    assert truncate_text_field("a" * 4_000) == ("a" * 4_000, False)
    cut, changed = truncate_text_field("a" * 4_001)
    assert changed and cut == "a" * 4_000 + TRUNCATION_SUFFIX
    assert len(cut) == 4_014 <= 4_015
    # Astral characters count two units each: 2,500 of them are 5,000 units.
    emoji, changed = truncate_text_field("😀" * 2_500)
    assert changed and emoji == "😀" * 2_000 + TRUNCATION_SUFFIX
    # A pair straddling unit 4,000 is left out whole.
    odd, _ = truncate_text_field("a" + "😀" * 2_500)
    assert odd == "a" + "😀" * 1_999 + TRUNCATION_SUFFIX
    assert utf16_length(odd[: -len(TRUNCATION_SUFFIX)]) == 3_999


def test_redaction_of_credential_like_text() -> None:
    text, changed = redact_credentials(
        "key sk-abcdefghijklmnop1234 and Bearer abcdefghijklmnopqrstu and password=hunter22xx"
    )
    assert changed
    assert "sk-abcdefghijklmnop1234" not in text
    assert "abcdefghijklmnopqrstu" not in text
    assert "hunter22xx" not in text
    assert "Bearer [redacted]" in text and "password=[redacted]" in text
    plain, changed = redact_credentials("nothing secret here, just a token of thanks")
    assert not changed and plain == "nothing secret here, just a token of thanks"


def test_redaction_happens_before_truncation() -> None:
    secret = "sk-" + "z" * 5_000  # a credential longer than the field limit
    result = sessions_history([msg("assistant", [{"type": "text", "text": secret}])])
    block = result.messages[0]["content"][0]
    assert block["text"] == "[redacted]"
    assert result.content_redacted and not result.content_truncated


def test_dropped_fields_and_image_data() -> None:
    data = base64.b64encode(b"x" * 1_000).decode()
    original = msg(
        "assistant",
        [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
            {"type": "image", "data": data, "mimeType": "image/png"},
            {"type": "text", "text": "hi", "textSignature": "t"},
        ],
        usage={"input": 1},
        cost={"total": 1},
        details={"x": 1},
        openclawReasoningReplay={"y": 2},
    )
    result = sessions_history([original])
    out = result.messages[0]
    assert set(out) == {"role", "content"}
    assert out["content"][0] == {"type": "thinking", "thinking": "hmm"}
    assert out["content"][1] == {
        "type": "image",
        "mimeType": "image/png",
        "omitted": True,
        "bytes": 1_000,
    }
    # Reference §c16: the text block keeps its signature.
    assert out["content"][2] == {"type": "text", "text": "hi", "textSignature": "t"}
    assert result.content_truncated  # details, usage and cost were dropped (not the blocks')
    assert "usage" in original  # the input is not mutated


def test_tool_messages_only_when_asked() -> None:
    transcript = [
        msg("user", "go"),
        msg("assistant", [{"type": "toolCall", "name": "read"}]),
        msg("toolResult", "file body"),
        msg("assistant", "done"),
    ]
    plain = sessions_history(transcript)
    assert [m["role"] for m in plain.messages] == ["user", "assistant", "assistant"]
    with_tools = sessions_history(transcript, include_tools=True)
    assert [m["role"] for m in with_tools.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]


def test_byte_cap_drops_oldest_first_and_pages_back() -> None:
    transcript = [msg("assistant", f"{i:03d}" + "x" * 3_900, seq=i + 1) for i in range(60)]
    result = sessions_history(transcript)
    assert result.bytes <= BYTE_CAP
    assert result.bytes == json_bytes(list(result.messages))
    assert result.dropped_messages and result.truncated
    assert not result.content_truncated
    kept = len(result.messages)
    assert 0 < kept < 60
    oldest_seq = result.messages[0]["__openclaw"]["seq"]
    assert oldest_seq == 60 - kept + 1
    assert result.messages[-1]["__openclaw"]["seq"] == 60
    assert result.next_offset == 60 - oldest_seq + 1 == kept
    # The next page ends just below the oldest row of this one.
    page2 = sessions_history(transcript, offset=result.next_offset)
    assert page2.messages[-1]["__openclaw"]["seq"] == oldest_seq - 1
    assert page2.offset == kept


def test_no_next_offset_when_everything_fits() -> None:
    result = sessions_history([msg("user", "a"), msg("assistant", "b")], offset=0)
    assert result.next_offset is None
    assert "nextOffset" not in result.to_json()
    assert result.to_json()["totalMessages"] == 2
    assert result.to_json()["hasMore"] is False
    assert not result.truncated


def test_paging_fields_only_when_an_offset_is_passed() -> None:
    """OpenClaw 2026.9.6 (resolveSessionsHistoryPaginationMetadata, reference §c19): offset,
    nextOffset (when there is more), hasMore and totalMessages, in that order, only when the
    caller passed an offset; 0 is an offset, none is not."""
    transcript = [msg("user", str(i)) for i in range(10)]
    unpaged = sessions_history(transcript, limit=3).to_json()
    assert not {"offset", "nextOffset", "hasMore", "totalMessages"} & set(unpaged)
    paged = sessions_history(transcript, limit=3, offset=0).to_json()
    assert list(paged)[-4:] == ["offset", "nextOffset", "hasMore", "totalMessages"]
    assert (paged["offset"], paged["nextOffset"], paged["hasMore"], paged["totalMessages"]) == (
        0, 3, True, 10)
    assert {k: v for k, v in paged.items() if k not in ("offset", "nextOffset", "hasMore",
                                                        "totalMessages")} == unpaged
    last = sessions_history(transcript, limit=3, offset=9).to_json()
    assert "nextOffset" not in last and last["hasMore"] is False and last["offset"] == 9
    past = sessions_history(transcript, limit=3, offset=12).to_json()  # past the rows
    assert past["messages"] == [] and past["hasMore"] is False and "nextOffset" not in past
    # The known-bug variant answers them without an offset too.
    always = sessions_history(transcript, limit=3,
                              mutants=frozenset({"history-paging-always"})).to_json()
    assert (always["offset"], always["hasMore"], always["totalMessages"]) == (0, True, 10)


def test_next_offset_floor_is_offset_plus_one() -> None:
    """max(offset + 1, min(gateway's, total - seq + 1)): with recorded seqs above their places
    the floor wins; with rows numbered by place it binds on a one-row page at the window's top
    (the probe that says so only with an offset)."""
    transcript = [msg("user", str(i), seq=i + 5) for i in range(10)]  # seqs 5..14
    page = sessions_history(transcript, limit=2, offset=3)
    assert [m["__openclaw"]["seq"] for m in page.messages] == [10, 11]
    assert page.next_offset == 4  # total 10 - seq 10 + 1 = 1, below the floor 3 + 1
    plain = [msg("user", str(i), seq=i + 1) for i in range(10)]
    top = sessions_history(plain, limit=1, offset=2)
    assert top.next_offset == 3 and "requester.history-paged-floor" in top.edges
    assert "requester.history-paged-more" in top.edges
    assert "requester.history-paged-floor" not in sessions_history(plain, limit=1).edges
    assert "requester.history-paged-floor" not in sessions_history(plain, limit=2,
                                                                   offset=2).edges


def test_limit_keeps_newest_and_sets_next_offset() -> None:
    transcript = [msg("user", str(i)) for i in range(10)]
    result = sessions_history(transcript, limit=3)
    assert [m["content"] for m in result.messages] == ["7", "8", "9"]
    assert result.next_offset == 3
    last_page = sessions_history(transcript, limit=3, offset=9)
    assert [m["content"] for m in last_page.messages] == ["0"]
    assert last_page.next_offset is None


def test_oversize_last_message_is_replaced_keeping_seq() -> None:
    # Many short text blocks: each is under the field limit, together over 80 KiB.
    blocks = [{"type": "text", "text": "y" * 3_000} for _ in range(40)]
    result = sessions_history([msg("user", "q", seq=1), msg("assistant", blocks, seq=2)])
    assert result.messages == (
        {"role": "assistant", "content": OMITTED_MESSAGE, "__openclaw": {"seq": 2}},
    )
    assert result.truncated and result.dropped_messages
    assert result.next_offset == 1


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "toolResult"]), st.integers(0, 9_000)),
        max_size=40,
    ),
    st.integers(0, 45),
    st.booleans(),
)
def test_property_byte_cap_and_paging(
    spec: list[tuple[str, int]], offset: int, include_tools: bool
) -> None:
    transcript = [msg(role, "w" * size) for role, size in spec]
    result = sessions_history(transcript, offset=offset, include_tools=include_tools)
    assert result.bytes == json_bytes(list(result.messages)) <= BYTE_CAP
    for m in result.messages:
        assert len(m["content"]) <= 4_015
    if result.next_offset is not None:
        assert offset <= result.next_offset < len(transcript)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            st.text(alphabet=st.sampled_from(["w", "中", "😀", "\ud800", "\udc00", '"']),
                    max_size=30),
            st.integers(0, 40),
        ),
        max_size=12,
    ),
)
def test_property_page_bytes_are_its_json_bytes(spec: list[tuple[str, str, int]]) -> None:
    """The page's size is summed from its rows' sizes: exact for any text (surrogates at a
    row's edges, multibyte characters), and after the cap dropped rows or replaced the last
    (``blocks`` blocks of 3,000 characters each: 28 of them pass the 80 KiB cap alone)."""
    transcript = [msg(role, [{"type": "text", "text": text + "w" * 3_000}] * blocks + [
        {"type": "text", "text": text}]) for role, text, blocks in spec]
    result = sessions_history(transcript)
    assert result.bytes == json_bytes(list(result.messages))


# ---------------------------------------------------------------------------------------------
# Archives


KEY = "agent:main:subagent:worker"
ADMIN = Reader(gateway_admin=True)
PARENT = Reader(session_key="agent:main:main")


def store_with_two_generations() -> ArchiveStore:
    gen1 = [msg("user", "first task"), msg("assistant", "first answer")]
    gen2 = [msg("user", "second task"), msg("assistant", "second answer")]
    return (
        ArchiveStore()
        .with_archive(ArchiveRecord.encode(KEY, 1, "run-1", gen1))
        .with_archive(ArchiveRecord.encode(KEY, 2, "run-2", gen2))
    )


def test_archive_readable_after_live_session_deleted_and_key_reused() -> None:
    store = store_with_two_generations().with_live(LiveSession(KEY, "sid-3", "agent:main:main"))
    store = store.delete_live(KEY)
    first = read_run_history(store, KEY, "run-1", ADMIN)
    assert first.status == "ok" and first.history is not None
    assert [m["content"] for m in first.history.messages] == ["first task", "first answer"]
    second = read_run_history(store, KEY, "run-2", ADMIN, limit=1)
    assert second.history is not None
    assert [m["content"] for m in second.history.messages] == ["second answer"]
    # Paging stays inside run-2's own archive.
    assert second.history.total_messages == 2 and second.history.next_offset == 1
    older = read_run_history(store, KEY, "run-2", ADMIN, limit=1, offset=1)
    assert older.history is not None
    assert [m["content"] for m in older.history.messages] == ["second task"]
    assert read_run_history(store, KEY, "run-9", ADMIN).status == "not_found"


def test_oversize_record_makes_every_generation_unavailable() -> None:
    huge = ArchiveRecord(KEY, 3, b"{" + b" " * ARCHIVE_RECORD_LIMIT)  # not even valid JSON
    store = store_with_two_generations().with_archive(huge)
    for run_id in ("run-1", "run-2", "run-3"):
        read = read_run_history(store, KEY, run_id, ADMIN)
        assert read.status == "unavailable"
        assert read.retryable is False
        assert "exceeds" in read.reason
    # Exactly at the limit the record is decoded as usual.
    body = json.dumps({"runId": "run-4", "messages": []}).encode()
    at_limit = ArchiveRecord(
        "agent:main:subagent:other", 1, body + b" " * (ARCHIVE_RECORD_LIMIT - len(body))
    )
    ok = read_run_history(
        ArchiveStore().with_archive(at_limit), at_limit.session_key, "run-4", ADMIN
    )
    assert ok.status == "ok"


def test_deleted_child_archive_needs_access_independent_of_child_metadata() -> None:
    live = store_with_two_generations().with_live(LiveSession(KEY, "sid-3", "agent:main:main"))
    # While the child session lives, its metadata lets the parent read.
    assert read_run_history(live, KEY, "run-1", PARENT).status == "ok"
    assert read_run_history(live, KEY, "run-1", Reader("agent:other:main")).status == "forbidden"
    deleted = live.delete_live(KEY)
    assert read_run_history(deleted, KEY, "run-1", PARENT).status == "forbidden"
    assert read_run_history(deleted, KEY, "run-1", ADMIN).status == "ok"


# ---------------------------------------------------------------------------------------------
# Reference §c16 details: examples from the rule, then the rule as properties

SURROGATE_HIGH, SURROGATE_LOW = "\ud83d", "\ude00"


def test_lone_surrogates_are_data_never_an_error() -> None:
    assert utf16_length("\ud800") == 1
    assert utf16_length("a\udfffb") == 3
    result = sessions_history([msg("assistant", [{"type": "text", "text": "x\ud800y"}])])
    assert result.messages[0]["content"][0]["text"] == "x\ud800y"
    # JSON.stringify writes a lone surrogate as a six-byte escape.
    assert json_bytes("\ud800") == len('"\\ud800"')
    # A high and low surrogate kept apart by Python are one four-byte character in JavaScript.
    assert json_bytes(SURROGATE_HIGH + SURROGATE_LOW) == len('"😀"'.encode())
    cut, changed = truncate_text_field("\ud800" * 5_000)
    assert changed and cut == "\ud800" * 4_000 + TRUNCATION_SUFFIX


def test_cut_never_splits_a_surrogate_pair_given_as_two_code_points() -> None:
    text = "a" + (SURROGATE_HIGH + SURROGATE_LOW) * 2_500
    cut, changed = truncate_text_field(text)
    head = cut[: -len(TRUNCATION_SUFFIX)]
    assert changed and head == "a" + (SURROGATE_HIGH + SURROGATE_LOW) * 1_999
    assert not head.endswith(SURROGATE_HIGH)


def test_block_details_and_text_signature_are_kept() -> None:
    block = {"type": "toolCall", "id": "c1", "details": {"exitCode": 0}}
    text = {"type": "text", "text": "t", "textSignature": "sig-1"}
    result = sessions_history([msg("assistant", [block, text])])
    assert result.messages[0]["content"] == [block, text]
    assert not result.content_truncated


def test_tool_result_details_dropped_mark_content_truncated() -> None:
    result = sessions_history([msg("toolResult", "out", details={"stdout": "..."})],
                              include_tools=True)
    assert "details" not in result.messages[0]
    assert result.content_truncated and result.truncated
    # Usage and cost too: OpenClaw 2026.9.6's tool marks any of the three (handoff conform).
    plain = sessions_history([msg("assistant", "out", usage={"input": 3}, cost={"usd": 1})])
    assert plain.content_truncated and "usage" not in plain.messages[0]
    signed = sessions_history([msg("assistant", [{"type": "thinking", "thinking": "t",
                                                  "thinkingSignature": "s"}])])
    assert not signed.content_truncated  # a block's signature is dropped unmarked


def test_message_level_thinking_is_not_cut() -> None:
    long = "t" * 9_000
    result = sessions_history([msg("assistant", "answer", thinking=long)])
    assert result.messages[0]["thinking"] == long
    assert not result.content_truncated


def test_image_without_data_and_base64_line_breaks() -> None:
    # A block without data is left as it is (OpenClaw 2026.9.6's gateway leaves it).
    result = sessions_history([msg("user", [{"type": "image", "mimeType": "image/png"}])])
    assert result.messages[0]["content"][0] == {"type": "image", "mimeType": "image/png"}
    wrapped = base64.encodebytes(b"z" * 1_000).decode()  # MIME style: a line break every 76
    assert "\n" in wrapped
    result = sessions_history([msg("user", [{"type": "image", "data": wrapped}])])
    assert result.messages[0]["content"][0] == {"type": "image", "omitted": True, "bytes": 1_000}
    assert not result.content_truncated  # dropped by the gateway, before the tool counts


def test_a_single_message_over_the_cap_sets_dropped_messages() -> None:
    blocks = [{"type": "text", "text": "y" * 3_000} for _ in range(40)]
    result = sessions_history([msg("assistant", blocks, seq=1)])
    assert result.messages == (
        {"role": "assistant", "content": OMITTED_MESSAGE, "__openclaw": {"seq": 1}},)
    assert result.dropped_messages and result.truncated


any_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=5_000)
units = st.lists(st.sampled_from(["a", "é", "\u4e2d", "😀", "\ud800", "\udfff",
                                  SURROGATE_HIGH + SURROGATE_LOW]),
                 max_size=4_200).map("".join)


def _units(text: str) -> int:
    # UTF-16 code units by definition: astral characters are two, everything else one.
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(any_text, units))
def test_property_utf16_cut(text: str) -> None:
    """A field over 4,000 UTF-16 units keeps the longest prefix of at most 4,000 units that
    does not end between a high and a low surrogate, then the marker; lone surrogates are
    ordinary data."""
    cut, changed = truncate_text_field(text)
    assert changed == (_units(text) > 4_000)
    if not changed:
        assert cut == text
        return
    assert cut.endswith(TRUNCATION_SUFFIX)
    head = cut[: -len(TRUNCATION_SUFFIX)]
    assert text.startswith(head) and _units(head) <= 4_000
    rest = text[len(head):]
    pair_cut = head.endswith(tuple(chr(c) for c in range(0xD800, 0xDC00))) and \
        rest[:1] >= "\udc00" and rest[:1] <= "\udfff"
    assert not pair_cut
    # Maximal: the next character (with its low surrogate, if it completes a pair) won't fit.
    step = 2 if (len(rest) > 1 and "\ud800" <= rest[0] <= "\udbff"
                 and "\udc00" <= rest[1] <= "\udfff") else 1
    assert _units(head + rest[:step]) > 4_000


_SIZED = {"a": 1, "é": 2, "\u4e2d": 3, "😀": 4, chr(0xDC00): 6, chr(0xDFFF): 6}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list(_SIZED)), max_size=50))
def test_property_json_bytes_counts_as_javascript(chars: list[str]) -> None:
    """Buffer.byteLength(JSON.stringify(s)): two quotes plus UTF-8 bytes per character, a lone
    surrogate as a six-byte escape."""
    assert json_bytes("".join(chars)) == 2 + sum(_SIZED[c] for c in chars)


@st.composite
def messages_with_extras(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """A message plus whether the rule says something in it is cut or dropped."""
    touched = False
    blocks: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "thinking", "image", "toolCall"]))
        if kind == "text":
            size = draw(st.sampled_from([5, 4_000, 4_001]))
            block: dict[str, Any] = {"type": "text", "text": "w" * size}
            touched |= size > 4_000
            if draw(st.booleans()):
                block["textSignature"] = "kept"
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": "hm"}
            if draw(st.booleans()):
                block["thinkingSignature"] = "dropped"  # (unmarked)
        elif kind == "image":
            block = {"type": "image"}
            if draw(st.booleans()):
                block["data"] = "aGVsbG8="  # (dropped unmarked)
        else:
            block = {"type": "toolCall", "id": "x", "details": {"kept": True}}
        blocks.append(block)
    message: dict[str, Any] = {"role": "assistant", "content": blocks}
    if draw(st.booleans()):
        message["details"] = {"tool": "output"}
        touched = True
    if draw(st.booleans()):
        message["usage"] = {"input": 1}
        touched = True
    if draw(st.booleans()):
        message["thinking"] = "q" * draw(st.sampled_from([3, 5_000]))
    return message, touched


@settings(max_examples=300, deadline=None)
@given(messages_with_extras())
def test_property_content_truncated_when_anything_was_cut_or_dropped(
    case: tuple[dict[str, Any], bool],
) -> None:
    message, touched = case
    result = sessions_history([message])
    assert result.content_truncated == touched
    out = result.messages[0]
    # Kept as they were: block details, text signatures, message-level thinking.
    assert out.get("thinking") == message.get("thinking")
    for before, after in zip(message["content"], out["content"], strict=True):
        for kept in ("details", "textSignature"):
            assert after.get(kept) == before.get(kept)
        if before["type"] == "image" and "data" in before:
            assert after["omitted"] is True and "data" not in after and after["bytes"] == 5
        elif before["type"] == "image":
            assert after == before


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.lists(st.sampled_from([" ", "\n", "\r\n", "\t"]), max_size=8),
       st.randoms(use_true_random=False))
def test_property_image_bytes_ignore_base64_whitespace(
    raw: bytes, spaces: list[str], rnd: Any,
) -> None:
    encoded = base64.b64encode(raw).decode()
    for space in spaces:
        at = rnd.randint(0, len(encoded))
        encoded = encoded[:at] + space + encoded[at:]
    result = sessions_history([msg("user", [{"type": "image", "data": encoded}])])
    assert result.messages[0]["content"][0]["bytes"] == len(raw)


@settings(max_examples=50, deadline=None)
@given(st.integers(81 * 1024, 200 * 1024), st.integers(0, 3))
def test_property_one_message_over_the_cap_is_dropped(size: int, before: int) -> None:
    """However many small messages precede it, a last message over 80 KiB alone is replaced by
    the placeholder, and that counts as a dropped message."""
    blocks = [{"type": "text", "text": "y" * 3_000} for _ in range(size // 3_000 + 1)]
    transcript = [msg("user", "q") for _ in range(before)] + [msg("assistant", blocks)]
    result = sessions_history(transcript)
    assert result.messages[-1]["content"] == OMITTED_MESSAGE
    assert result.dropped_messages and result.truncated


def test_image_sizes_follow_openclaws_count() -> None:
    """Issue 24: characters up to U+0020 are not data, at most two ``=`` are padding, and a
    numeric ``bytes`` without data is kept as given (3.5 too)."""
    def shown(block: dict[str, object]) -> object:
        message = {"role": "assistant", "content": [{"type": "image", **block}]}
        return sessions_history([message]).messages[0]["content"][0]["bytes"]

    assert shown({"data": "QUJD\x01REVG\x1f"}) == 6  # control characters are skipped
    assert shown({"data": "QQ==="}) == 1  # a third "=" is not padding: 5 * 3 // 4 - 2
    assert shown({"bytes": 3.5}) == 3.5
    assert shown({"bytes": True}) is True  # a block without data is left as it is


def test_paging_goes_on_past_a_page_of_only_tool_rows() -> None:
    """Reference §c19 (openclaw 2026.9.6): a page whose rows were all tool rows, dropped, still
    has a nextOffset, so a reader paging back reaches every older row (before, paging stopped
    there and the oldest rows were never returned)."""
    transcript = [msg("user", "first"), msg("assistant", "second"),
                  *[msg("toolResult", f"t{i}") for i in range(6)]]
    page = sessions_history(transcript, limit=3)
    assert page.messages == () and page.next_offset == 3
    page = sessions_history(transcript, limit=3, offset=3)
    assert page.messages == () and page.next_offset == 6  # rows 3..5: tool rows again
    page = sessions_history(transcript, limit=3, offset=6)
    assert [m["content"] for m in page.messages] == ["first", "second"]
    assert page.next_offset is None
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:  # a reader following nextOffset reads every non-tool row
        page = sessions_history(transcript, limit=2, offset=offset)
        seen = [m["content"] for m in page.messages] + seen
        offset = page.next_offset
    assert seen == ["first", "second"]
    # An empty window has no older page.
    assert sessions_history(transcript, limit=3, offset=8).next_offset is None


def test_the_limit_is_a_positive_integer_and_the_default_page_is_200_rows() -> None:
    """Reference §c19 (openclaw 2026.9.6): ``limit`` must be a positive integer (0 was read as
    an empty page), and without one the gateway pages 200 rows (all rows were returned)."""
    transcript = [msg("user", f"m{i}") for i in range(250)]
    with pytest.raises(ValueError, match="positive integer"):
        sessions_history(transcript, limit=0)
    page = sessions_history(transcript)
    assert len(page.messages) == 200 and page.messages[0]["content"] == "m50"
    assert page.next_offset == 200
    assert [m["content"] for m in sessions_history(transcript, offset=200).messages] == [
        f"m{i}" for i in range(50)]
    assert len(sessions_history(transcript, limit=250).messages) == 250
