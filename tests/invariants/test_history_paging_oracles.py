"""The FMT-5 paging oracles (issue 34 item 5, reference §c19): the paging fields come exactly
when the read passed an offset, ``hasMore`` and ``nextOffset`` are exact, and the oracles take
the offset from what was asked (``world.action``) and the total from the child's records, so a
forged answer's own ``offset`` or ``totalMessages`` cannot vouch for it. Each forged variant
below is one the oracles let through before."""

from __future__ import annotations

from typing import Any

import attrs

from sim import invariants, scenario
from sim.cli import root as cli
from sim.invariants.child.history_reads import gateway_next_offset, tool_next_offset
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def _edit(record: Record, **data: Any) -> Record:
    return attrs.evolve(record, data={**record.data, **data})


def _paged() -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / "history-paging.toml"), seed=1).trace)


def _first_read(trace: list[Record]) -> tuple[int, int]:
    """Positions of the first history read's request (world.action) and its answer."""
    i = next(i for i, r in enumerate(trace) if r.kind == "requester.history")
    number = trace[i].data["request"]
    j = next(j for j, r in enumerate(trace) if r.kind == "world.action"
             and r.data["request"] == number)
    return j, i


def test_the_paging_scenario_asks_offsets_and_gets_exact_fields() -> None:
    trace = _paged()
    pages = [r.data["result"] for r in trace if r.kind == "requester.history"]
    assert [(p["offset"], p.get("nextOffset"), p["hasMore"], p["totalMessages"])
            for p in pages] == [(0, 2, True, 7), (2, 4, True, 7), (4, 6, True, 7),
                                (6, None, False, 7)]
    asked = [r.data["offset"] for r in trace if r.kind == "world.action"]
    assert asked == [0, 2, 4, 6]
    assert _check("history-paging", trace) == [] and _check("history-bounds", trace) == []


def test_paging_fields_without_an_offset_are_caught() -> None:
    # The first read asked no offset (the request says None), yet its answer pages: the
    # known-bug variant history-paging-always; the answer alone looks fine.
    trace = _paged()
    j, _ = _first_read(trace)
    trace[j] = _edit(trace[j], offset=None)
    assert any("no offset was passed, but the answer has offset, nextOffset, hasMore, "
               "totalMessages" in m for m in _check("history-paging", trace))


def test_missing_paging_fields_with_an_offset_are_caught() -> None:
    trace = _paged()
    _, i = _first_read(trace)
    page = trace[i].data["result"]
    bare = {k: v for k, v in page.items() if k not in ("offset", "hasMore", "totalMessages",
                                                        "nextOffset")}
    trace[i] = _edit(trace[i], result=bare)
    assert any("offset 0 was passed, but the answer has no offset, hasMore, totalMessages" in m
               for m in _check("history-paging", trace))


def test_a_wrong_has_more_is_caught() -> None:
    trace = _paged()
    _, i = _first_read(trace)
    trace[i] = _edit(trace[i], result={**trace[i].data["result"], "hasMore": False})
    assert any("hasMore False, but nextOffset 2 is below the total 7" in m
               for m in _check("history-paging", trace))


def test_the_answer_cannot_vouch_for_its_own_offset_or_total() -> None:
    # An answer claiming offset 1 of 8 rows, with nextOffset 3 as that claim would give: the
    # old oracles read both from the answer and passed it; the request said 0 and the child's
    # records count 7 rows.
    trace = _paged()
    _, i = _first_read(trace)
    page = trace[i].data["result"]
    trace[i] = _edit(trace[i], result={**page, "offset": 1, "totalMessages": 8,
                                       "nextOffset": 3})
    found = _check("history-paging", trace)
    assert any("offset 1, but the read asked for 0" in m for m in found)
    assert any("totalMessages 8, but the transcript holds 7" in m for m in found)
    assert any("nextOffset 3, expected 2" in m for m in found)
    # history-bounds: nextOffset 7 is in range of the forged total 8, not of the transcript's 7.
    trace[i] = _edit(trace[i], result={**page, "totalMessages": 8, "nextOffset": 7})
    assert any("nextOffset 7 outside [1, 7)" in m for m in _check("history-bounds", trace))


def test_a_default_world_archive_read_without_an_offset_is_judged_too() -> None:
    result = world.run(scenario.load(cli.default_world_path()), seed=2,
                       mutants=["history-paging-always"])
    assert any(v.invariant == "history-paging" and "no offset was passed" in v.message
               for v in result.violations)
    assert world.run(scenario.load(cli.default_world_path()), seed=2).ok


def test_the_oracle_formula_is_the_released_code_s() -> None:
    """resolveSessionsHistoryPaginationMetadata (openclaw 2026.9.6): max(offset + 1,
    min(gateway's nextOffset ?? total, total - seq + 1)), present below the total."""
    assert gateway_next_offset(7, 0, 2) == 2 and gateway_next_offset(7, 6, 2) is None
    assert gateway_next_offset(7, 9, 2) is None  # past the rows: an empty page
    assert tool_next_offset(7, 0, 2, 6) == 2
    assert tool_next_offset(10, 2, 1, 8) == 3  # one row at the window's top: the floor binds
    # Rows numbered above their places (the released code's seq, not ours): the floor wins
    # where a rule without its + 1 would answer the offset itself and read the page again.
    assert tool_next_offset(10, 3, 2, 10) == 4
    assert tool_next_offset(10, 3, 2, 10) != max(3, 10 - 10 + 1)
    # A page of only tool rows (none returned) takes the gateway's.
    assert tool_next_offset(10, 0, 3, None) == gateway_next_offset(10, 0, 3) == 3


def test_the_offsets_scenario_answers_as_the_released_code() -> None:
    trace = list(world.run(scenario.load(SCENARIOS / "history-paging-offsets.toml"),
                           seed=1).trace)
    fields = ("offset", "nextOffset", "hasMore", "totalMessages")
    pages = [([m["__openclaw"]["seq"] for m in r.data["result"]["messages"]],
              {k: r.data["result"][k] for k in fields if k in r.data["result"]})
             for r in trace if r.kind in ("requester.history", "requester.archive")]
    assert pages == [
        ([6, 7], {}),  # no offset: no paging fields
        ([6, 7], {"offset": 0, "nextOffset": 2, "hasMore": True, "totalMessages": 7}),
        ([4], {"offset": 3, "nextOffset": 4, "hasMore": True, "totalMessages": 7}),  # floor
        ([], {"offset": 9, "hasMore": False, "totalMessages": 7}),  # past the rows
        ([1, 2], {"offset": 5, "hasMore": False, "totalMessages": 7}),  # the archive read
    ]
    assert [r.data["offset"] for r in trace if r.kind == "world.action"] == [None, 0, 3, 9, 5]
    assert _check("history-paging", trace) == [] and _check("history-bounds", trace) == []


def test_the_scenario_writer_keeps_no_offset_apart_from_offset_0() -> None:
    from sim.scenario import write as scenario_write

    loaded = scenario.load(SCENARIOS / "history-paging-offsets.toml")
    # (The writer writes what a shrunk run needs: no per-child expectations.)
    loaded = attrs.evolve(loaded, expect=attrs.evolve(loaded.expect, children=()))
    reads = [e.offset for e in loaded.timeline]
    assert reads == [None, 0, 3, 9, 5]
    text = scenario_write.dumps(loaded)
    assert text.count("offset = 0\n") == 1
    assert [e.offset for e in scenario.loads(text).timeline] == reads
