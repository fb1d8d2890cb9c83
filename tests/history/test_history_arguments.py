"""sessions_history's arguments read as OpenClaw 2026.9.6's tool reads them (handoff conform
--check sessions-history compares the two on generated calls)."""

from __future__ import annotations

from typing import Any

import pytest

from actors.history.arguments import MAX_SAFE_INTEGER, read_arguments
from actors.history.sessions import MAX_PAGE, sessions_history


@pytest.mark.parametrize(("args", "read"), [
    ({}, (None, None, False)),
    ({"limit": 3, "offset": 0}, (3, 0, False)),
    ({"limit": 2.0, "offset": -0.0}, (2, 0, False)),  # JavaScript holds 2.0 as 2
    ({"limit": " 4 ", "offset": "1e2"}, (4, 100, False)),  # decimal strings, trimmed
    ({"limit": "", "offset": "  "}, (None, None, False)),  # blank: not given
    ({"limit": None}, (None, None, False)),
    ({"limit": MAX_SAFE_INTEGER}, (MAX_SAFE_INTEGER, None, False)),
    ({"includeTools": "no"}, (None, None, True)),  # JavaScript's truthiness
    ({"includeTools": 0.0}, (None, None, False)),
    ({"includeTools": []}, (None, None, False)),  # (the model's reading of an empty list)
])
def test_counts_read_as_the_tool_reads_them(args: dict[str, Any],
                                            read: tuple[Any, ...]) -> None:
    assert read_arguments(args) == read


@pytest.mark.parametrize("limit", [0, -1, 2.5, MAX_SAFE_INTEGER + 1, 10**400, True, "abc",
                                   "0x10", [], {}, float("inf")])
def test_a_limit_that_is_no_positive_count_refuses_the_call(limit: Any) -> None:
    with pytest.raises(ValueError, match=r"^limit must be a positive integer$"):
        read_arguments({"limit": limit})


@pytest.mark.parametrize("offset", [-1, 0.5, "-1", False, 2**64])
def test_an_offset_that_is_no_count_refuses_the_call(offset: Any) -> None:
    with pytest.raises(ValueError, match=r"^offset must be a non-negative integer$"):
        read_arguments({"offset": offset})


def test_a_page_holds_at_most_1000_rows() -> None:
    rows = [{"role": "user", "content": f"{i}"} for i in range(MAX_PAGE + 5)]
    page = sessions_history(rows, limit=MAX_PAGE + 1, offset=0)
    assert len(page.messages) == MAX_PAGE and page.next_offset == MAX_PAGE  # 5 rows left
