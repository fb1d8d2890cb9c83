"""FMT-5 sessions_history limits and FMT-6 archive reads."""

from __future__ import annotations

import base64
import json
from typing import Any

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
    assert out["content"][2] == {"type": "text", "text": "hi"}
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
    result = sessions_history([msg("user", "a"), msg("assistant", "b")])
    assert result.next_offset is None
    assert "nextOffset" not in result.to_json()
    assert result.to_json()["totalMessages"] == 2
    assert not result.truncated


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
