"""docs/oracles.md says what each oracle assumes about timing (issue 38 item 6): every oracle the
simulator checks is named in that section, so a new oracle cannot arrive without its line."""

from __future__ import annotations

from pathlib import Path

from sim import invariants

_DOC = Path(__file__).resolve().parents[2] / "docs" / "oracles.md"
_HEADING = "## What each oracle assumes about timing"


def _timing_section() -> str:
    text = _DOC.read_text(encoding="utf-8")
    start = text.index(_HEADING)
    end = text.find("\n## ", start + len(_HEADING))
    return text[start:] if end < 0 else text[start:end]


def test_every_oracle_has_its_timing_line() -> None:
    section = _timing_section()
    missing = [inv.name for inv in invariants.ALL if f"`{inv.name}`" not in section]
    assert missing == []


def test_the_section_is_read_whole() -> None:
    # The section ends at the next heading: a name mentioned only further down does not count.
    section = _timing_section()
    assert section.startswith(_HEADING) and "\n## " not in section[len(_HEADING):]
