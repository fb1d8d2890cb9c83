"""The frozen-result cap (reference §c14, §c17): the model's pure cap, the oracles' restatement of
it, and the announce oracle catching broken variants of it in the simulation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import actors.child.shell
from actors.child.frozen import (
    FROZEN_RESULT_MAX_BYTES,
    cap_frozen_result,
    frozen_notice,
)
from actors.mutants import MUTANT_FROZEN_CAP_CHARS
from sim import scenario
from sim.invariants.frozen import frozen
from sim.world import core as world
from tests.conftest import SCENARIOS

LIMIT = 102_400


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def test_a_result_within_the_cap_is_kept_whole() -> None:
    assert cap_frozen_result(None) is None
    assert cap_frozen_result("") == ""
    at_cap = "é" * (LIMIT // 2)
    assert cap_frozen_result(at_cap) == at_cap
    assert cap_frozen_result("a" * LIMIT) == "a" * LIMIT


def test_one_byte_over_is_a_prefix_plus_the_notice_of_exactly_the_cap() -> None:
    capped = cap_frozen_result("a" * (LIMIT + 1))
    assert capped is not None
    notice = "\n\n[truncated: frozen completion output exceeded 100KB (100KB)]"
    assert capped.endswith(notice)
    assert capped == "a" * (LIMIT - len(notice)) + notice
    assert _size(capped) == FROZEN_RESULT_MAX_BYTES


def test_the_prefix_never_splits_a_character() -> None:
    # 102,400 less the 62-byte notice is 102,338: inside the 3-byte 中 after 25,584 "中a".
    text = "中a" * 37_504  # 150,016 bytes
    capped = cap_frozen_result(text)
    assert capped is not None
    notice = "\n\n[truncated: frozen completion output exceeded 100KB (147KB)]"
    assert capped == "中a" * 25_584 + notice
    assert _size(capped) == 102_398
    # A four-byte character at the cut too.
    emoji = cap_frozen_result("😀" * 30_000)
    assert emoji is not None and emoji.startswith("😀" * 25_584) and "\ufffd" not in emoji


def test_the_kilobytes_round_half_up_like_javascript() -> None:
    assert frozen_notice(150_016).endswith("(147KB)]")  # 146.5: Python's round would give 146
    assert frozen_notice(150_015).endswith("(146KB)]")
    assert frozen_notice(102_401).endswith("(100KB)]")


def test_whitespace_is_kept_and_counted() -> None:
    """The seed keeps a result's whitespace (seed 002): no trim before the cap, unlike
    OpenClaw's; the notice counts the untrimmed bytes."""
    text = "\n  " + "a" * LIMIT + "  \n"
    capped = cap_frozen_result(text)
    assert capped is not None and capped.startswith("\n  a")
    assert capped.endswith(f"({round((LIMIT + 6) / 1024)}KB)]")


def test_a_lone_surrogate_counts_as_three_bytes() -> None:
    text = "\ud800" * 40_000  # 120,000 bytes as JavaScript's encoder writes it
    capped = cap_frozen_result(text)
    assert capped is not None and capped.endswith("(117KB)]")
    # The kept prefix went through UTF-8 and back: each lone surrogate is U+FFFD (§c19).
    assert capped.startswith("\ufffd" * ((LIMIT - 62) // 3))


def test_the_chars_mutant_counts_characters() -> None:
    chars = frozenset({MUTANT_FROZEN_CAP_CHARS})
    assert cap_frozen_result("中" * 50_000, chars) == "中" * 50_000  # 150,000 bytes kept
    capped = cap_frozen_result("中" * 120_000, chars)
    assert capped is not None and len(capped) == LIMIT and _size(capped) > LIMIT


@pytest.mark.parametrize("text", [
    "a" * LIMIT, "a" * (LIMIT + 1), "中a" * 37_504, "😀" * 30_000, "é" * 60_000,
    "\ud800" * 40_000, " \t" * 60_000, "x" + "中" * 40_000, "xy" + "😀" * 30_000,
])
def test_the_oracles_restatement_agrees_with_the_model(text: str) -> None:
    assert frozen(text) == cap_frozen_result(text)


# -- in the simulation: the oracles restate the cap and catch broken variants of it --------------

def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


@pytest.mark.parametrize("name", ["frozen-cap-multibyte.toml", "frozen-cap-boundary.toml",
                                  "frozen-cap-shared.toml", "oversized-reply.toml"])
def test_the_frozen_cap_scenarios_pass(name: str) -> None:
    result = _run(name)
    assert result.violations == ()


def _uncapped(text: str | None, mutants: frozenset[str] = frozenset()) -> str | None:
    return text


def _split(text: str | None, mutants: frozenset[str] = frozenset()) -> str | None:
    """Cuts at the byte limit even inside a character (the replacement character shows it)."""
    if text is None or _size(text) <= LIMIT:
        return text
    notice = frozen_notice(_size(text))
    return text.encode()[:LIMIT - len(notice)].decode("utf-8", "replace") + notice


def _half_even(text: str | None, mutants: frozenset[str] = frozenset()) -> str | None:
    capped = cap_frozen_result(text)
    if text is None or capped is None or capped == text:
        return capped
    size = _size(text)
    return capped.replace(f"({(size + 512) // 1024}KB)]", f"({round(size / 1024)}KB)]")


def _trimmed(text: str | None, mutants: frozenset[str] = frozenset()) -> str | None:
    """OpenClaw's own order: trim, then cap (the seed keeps whitespace)."""
    if text is None or _size(text) <= LIMIT:
        return text
    return cap_frozen_result(text.strip())


@pytest.mark.parametrize(("variant", "name"), [
    (_uncapped, "frozen-cap-boundary.toml"),
    (_split, "frozen-cap-multibyte.toml"),
    (_half_even, "frozen-cap-multibyte.toml"),
])
def test_the_announce_oracle_catches_a_broken_cap(
        monkeypatch: pytest.MonkeyPatch,
        variant: Callable[[str | None, frozenset[str]], str | None], name: str) -> None:
    monkeypatch.setattr(actors.child.shell, "cap_frozen_result", variant)
    result = _run(name)
    assert "announce-block" in _names(result), result.violations


def test_the_oracles_catch_a_trim_before_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.child.shell, "cap_frozen_result", _trimmed)
    text = (SCENARIOS / "frozen-cap-multibyte.toml").read_text(encoding="utf-8").replace(
        'reply_unit = "中a"', 'reply_unit = "\\n 中a"')
    result = world.run(scenario.loads(text))
    assert "announce-block" in _names(result), result.violations
    monkeypatch.undo()
    assert world.run(scenario.loads(text)).violations == ()


def test_the_chars_mutant_is_caught_in_the_multibyte_scenario() -> None:
    result = _run("frozen-cap-multibyte.toml", mutants=[MUTANT_FROZEN_CAP_CHARS])
    assert "announce-block" in _names(result)


def test_the_wake_oracle_catches_an_uncapped_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Uncapped, the two answers still fit the shared cap as heads, but the markers count the
    200,000 characters written, not the frozen text's."""
    monkeypatch.setattr(actors.child.shell, "cap_frozen_result", _uncapped)
    result = _run("frozen-cap-shared.toml")
    assert "wake-message" in _names(result), result.violations
