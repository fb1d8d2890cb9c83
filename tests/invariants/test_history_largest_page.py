"""The gateway's largest page (1,000 rows, OpenClaw 2026.9.6's CHAT_HISTORY_MAX_ENTRIES): the
scenario sessions-history-largest-page passes with the page the package gives, and the oracles'
statement of the gateway's page (history-paging, history-bounds) bounds it at 1,000 rows."""

from __future__ import annotations

from sim.invariants.child.history_reads import gateway_next_offset, tool_next_offset
from sim.scenario.loader import load
from sim.world import core as world

SCENARIO = "scenarios/sessions-history-largest-page.toml"


def test_the_largest_page_scenario_passes() -> None:
    result = world.run(load(SCENARIO), seed=1)
    assert result.violations == ()
    (read,) = [r for r in result.trace if r.kind == "requester.history"]
    page = read.data["result"]
    assert [m["__openclaw"]["seq"] for m in page["messages"]] == [1003]
    assert (page["nextOffset"], page["hasMore"], page["totalMessages"]) == (1, True, 1003)


def test_the_oracles_bound_the_gateways_page_at_1000_rows() -> None:
    # A read with limit 5,000 at offset 0 of 1,003 rows: the gateway's page is rows 4..1,003,
    # so its nextOffset is 1,000 (it was None, every row in the page, before).
    assert gateway_next_offset(1_003, 0, 5_000) == 1_000
    assert gateway_next_offset(1_003, 0, 1_000) == 1_000
    assert gateway_next_offset(1_003, 0, 999) == 999  # rows 5..1,003
    # The tool takes the gateway's on a page with no row (only tool rows, dropped).
    assert tool_next_offset(1_003, 0, 5_000, None) == 1_000
