"""Drift from OpenClaw 2026.9.6 settled in the model (issue 34, reference §c19): each case here
failed before the model was changed to answer as the released package does."""

from __future__ import annotations

from actors.announce.labels import status_line, task_line
from actors.announce.stats import format_tokens
from actors.child.frozen import FROZEN_RESULT_MAX_BYTES, cap_frozen_result


def test_the_status_line_is_trimmed_and_only_newline_runs_fold() -> None:
    assert status_line("error", "  disk full \n\n now ") == "failed:   disk full   now"
    assert status_line("error", "   ") == "failed:"
    assert status_line("timeout", " ") == "timed out:"
    # A lone CR, a line separator and a tab are kept: only \r?\n runs fold.
    assert status_line("error", "a\rb\u2028c\td") == "failed: a\rb\u2028c\td"


def test_the_status_line_is_capped_at_500_utf16_units() -> None:
    assert status_line("error", "e" * 492) == "failed: " + "e" * 492  # 500 units: kept
    capped = status_line("error", "e" * 493)
    assert capped == "failed: " + "e" * 480 + "…[truncated]"
    # The kept prefix never splits a character outside the BMP, and is right-trimmed.
    assert status_line("error", "x" * 479 + "\U0001f600" * 20) == (
        "failed: " + "x" * 479 + "…[truncated]")
    assert status_line("error", "x" * 470 + " " * 40 + "y" * 10) == (
        "failed: " + "x" * 470 + "…[truncated]")


def test_a_whitespace_only_task_reads_unnamed_task() -> None:
    assert task_line(None) == "task"
    assert task_line("") == "task"
    assert task_line(" \n\t ") == "unnamed task"
    # /\r?\n+/ takes "\r\n", then "\r\n" again: two spaces.
    assert task_line("  review\r\n\r\nthe  diff ") == "review  the  diff"
    assert task_line("t" * 300) == "t" * 300  # no cap on the task line


def test_token_counts_past_1e21_millions_read_as_javascript_writes_them() -> None:
    assert format_tokens(10**27) == "1e+21m"
    assert format_tokens(10**33) == "1e+27m"
    assert format_tokens(int(1.5e300)) == "1.5e+294m"
    assert format_tokens(10**26) == "100000000000000000000.0m"  # below 1e21: toFixed


def test_a_lone_surrogate_in_the_frozen_caps_prefix_becomes_the_replacement_character() -> None:
    text = "\ud800" + "a" * FROZEN_RESULT_MAX_BYTES
    capped = cap_frozen_result(text)
    assert capped is not None and capped.startswith("\ufffda")
    short = "\ud800 under the cap"
    assert cap_frozen_result(short) == short  # a text within the cap is kept as it is
