"""The sessions_history check against the released package (``pytest -m conform``; skipped with
one line when Node 24 or the package is missing). ``test_functions.py`` runs the whole check at
2,000 inputs (``test_no_undocumented_difference[sessions-history]``); these pin a few answers of
OpenClaw's own tool that the model was fixed to follow, staged the way the check stages them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sim.conform import checks, install
from sim.conform.driver import Driver, manifest_path
from sim.conform.history import HISTORY, _many
from sim.conform.history_sides import model_answer

pytestmark = pytest.mark.conform


@pytest.fixture(scope="module")
def driver() -> Iterator[Driver]:
    installed = install.find_installed(install.PINNED_OPENCLAW)
    if installed is None:
        pytest.fail(f"openclaw {install.PINNED_OPENCLAW} and Node >= 24.16 are not installed "
                    f"in {install.cache_root()} (run `handoff conform` once)")
    manifest = manifest_path(install.PINNED_OPENCLAW)
    assert manifest is not None
    with Driver(installed, manifest) as running:
        yield running


def _both(driver: Driver, rows: list[dict[str, Any]], args: dict[str, Any]) -> tuple[Any, Any]:
    (value,) = checks.staged(HISTORY, driver, [(rows, args)])
    (real,) = HISTORY.real(driver, [value])
    return checks.canonical(model_answer(value)), real


@pytest.mark.parametrize(("args", "error"), [
    ({"limit": 0}, "limit must be a positive integer"),
    ({"limit": 2.5}, "limit must be a positive integer"),
    ({"limit": True}, "limit must be a positive integer"),
    ({"offset": -1}, "offset must be a non-negative integer"),
])
def test_arguments_that_are_no_count_refuse_the_call_alike(driver: Driver, args: dict[str, Any],
                                                           error: str) -> None:
    assert _both(driver, _many(3), args) == ({"error": error}, {"error": error})


@pytest.mark.parametrize("args", [{"limit": " 2 ", "offset": "1"}, {"limit": 2.0, "offset": 0},
                                  {"offset": 0, "includeTools": "yes"}, {}])
def test_counts_the_tool_accepts_page_alike(driver: Driver, args: dict[str, Any]) -> None:
    model, real = _both(driver, _many(7), args)
    assert model == real and "ok" in real


def test_a_page_holds_at_most_1000_rows_in_both(driver: Driver) -> None:
    # 1,001 rows, the newest 1,000 of them tool rows: the page of 1,000 holds no other row, so
    # without tools it is empty and pages on past them (the 80 KiB cap binds long before 1,000
    # rows otherwise: each row carries ~200 bytes of row metadata).
    rows = [{"role": "user", "content": "first"},
            *({"role": "toolResult", "content": f"t{i}"} for i in range(1_000))]
    model, real = _both(driver, rows, {"limit": 5_000, "offset": 0})
    assert model == real
    assert real["ok"]["messages"] == [] and real["ok"]["nextOffset"] == 1_000


def test_usage_dropped_marks_content_truncated_in_both(driver: Driver) -> None:
    rows = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "done", "usage": {"inputTokens": 3}}]
    model, real = _both(driver, rows, {})
    assert model == real and real["ok"]["contentTruncated"] is True
