"""The properties issue 36 found unstated, each an oracle shown catching a broken variant that
its neighbours let through: a reset's kill reaching the killed run's own children
(``reset-cascades``), a history page's ``bytes`` (``history-bytes``) and a newer answer's
generation (``announce-key``)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import attrs

from sim import invariants, scenario
from sim.cli import root as cli
from sim.invariants.child.history_paging import page_bytes
from sim.invariants.observations import killed_by_reset
from sim.trace import Record
from sim.world import core as world

# The first default seeds are enough: each corner below is reached within them.
SEEDS = range(1, 80)


def _world() -> scenario.Scenario:
    return scenario.load(cli.default_world_path())


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def _edit(record: Record, **data: Any) -> Record:
    return attrs.evolve(record, data={**record.data, **data})


def _first(probe: str) -> tuple[int, list[Record]]:
    """The first default seed whose run hits ``probe``, and its trace."""
    for seed in SEEDS:
        result = world.run(_world(), seed=seed)
        if result.probes.get(probe):
            return seed, list(result.trace)
    raise AssertionError(f"no seed in {SEEDS} hits {probe}")


def test_a_reset_that_spares_a_killed_runs_own_children_is_caught() -> None:
    seed, trace = _first("requester.reset-cascades")
    assert _check("reset-cascades", trace) == []
    found = {v.invariant for v in world.run(_world(), seed=seed,
                                            mutants=["reset-spares-grandchildren"]).violations}
    assert "reset-cascades" in found
    # The neighbours judge the reset session's own children and abort requests only.
    assert not found & {"reset-kills-children", "abort-cascades"}


def test_a_grandchild_ending_later_or_on_its_own_after_the_reset_is_caught() -> None:
    _, trace = _first("requester.reset-cascades")
    killed = killed_by_reset(trace)
    sessions = {r.data["child_session_key"] for r in trace
                if r.kind == "spawn" and r.data["run_id"] in killed}
    # A run its parent's kill took with it: spawned by a killed run's session, ended killed.
    grandchild = next(r.data["run_id"] for r in trace if r.kind == "child.end"
                      and r.data["error"] == "subagent run terminated"
                      and r.data["run_id"] not in killed
                      and any(s.kind == "spawn" and s.data["run_id"] == r.data["run_id"]
                              and s.data["requester"] in sessions for s in trace))
    later = [_edit(attrs.evolve(r, t_ms=r.t_ms + 1000), status="ok", error=None)
             if r.kind == "child.end" and r.data["run_id"] == grandchild else r for r in trace]
    assert any(grandchild in m and "instead of killed" in m
               for m in _check("reset-cascades", later))
    never = [r for r in trace if not (r.kind == "child.end" and r.data["run_id"] == grandchild)]
    assert any(grandchild in m and "never ended" in m for m in _check("reset-cascades", never))


def test_a_history_page_whose_bytes_field_is_off_is_caught() -> None:
    for seed in SEEDS:
        trace = list(world.run(_world(), seed=seed).trace)
        pages = [r for r in trace if r.kind == "requester.archive" and r.data["result"]]
        if pages:
            break
    assert pages and _check("history-bytes", trace) == []
    page = pages[-1]
    off = [_edit(r, result={**r.data["result"], "bytes": r.data["result"]["bytes"] + 1})
           if r is page else r for r in trace]
    assert len(_check("history-bytes", off)) == 1
    # history-bounds, the neighbour, only bounds the page's size from above.
    assert invariants.BY_NAME["history-bounds"].check(off) == []


def test_the_mutant_that_measures_a_page_before_cleaning_is_caught() -> None:
    for seed in SEEDS:
        result = world.run(_world(), seed=seed, mutants=["history-bytes-uncleaned"])
        found = {v.invariant for v in result.violations}
        if found:
            assert "history-bytes" in found
            assert world.run(_world(), seed=seed).ok
            return
    raise AssertionError("history-bytes-uncleaned not found")


def test_page_bytes_counts_as_javascript_does() -> None:
    assert page_bytes([]) == 2
    assert page_bytes([{"a": "中"}]) == len('[{"a":"中"}]'.encode())
    assert page_bytes([{"a": 3.0}]) == len('[{"a":3}]')  # JSON.stringify(3.0) is "3"
    assert page_bytes([{"a": "\ud83d\ude00"}]) == len('[{"a":""}]') + 4  # a pair: 4 bytes
    assert page_bytes([{"a": "\ud800"}]) == len('[{"a":""}]') + 6  # lone: written \ud800


def test_a_newer_answer_under_a_skipped_or_kept_generation_is_caught() -> None:
    for seed in SEEDS:
        trace = list(world.run(_world(), seed=seed).trace)
        redriven = {r.data["run_id"] for r in trace if r.kind == "world.operator"}
        # A correction's generation (no operator request for the run: a redrive's is
        # redrive-from-retained's).
        sends = [r for r in trace if r.kind == "gateway.send" and r.data["run_id"] not in redriven
                 and r.data["key"].startswith("announce:v1:") and r.data["key"].endswith(":g2")]
        if sends:
            break
    else:
        raise AssertionError("no reopened generation in the first seeds")
    assert _check("announce-key", trace) == []
    second = sends[0]
    skipped = [_edit(r, key=r.data["key"].removesuffix(":g2") + ":g3")
               if r.kind == "gateway.send" and r.data["key"] == second.data["key"] else r
               for r in trace]
    assert any("not generation 2" in m for m in _check("announce-key", skipped))
    kept = [_edit(r, key=r.data["key"].removesuffix(":g2"))
            if r.kind == "gateway.send" and r.data["key"] == second.data["key"] else r
            for r in trace]
    assert any("not generation 2" in m for m in _check("announce-key", kept))


def test_the_mutant_that_reopens_under_the_old_key_is_caught() -> None:
    for seed in SEEDS:
        found = {v.invariant for v in world.run(_world(), seed=seed,
                                                mutants=["reopen-keeps-key"]).violations}
        if found:
            assert "announce-key" in found
            assert world.run(_world(), seed=seed).ok
            return
    raise AssertionError("reopen-keeps-key not found")


def test_a_field_cut_although_it_fits_is_caught() -> None:
    # The boundary draws give a transcript a field of exactly 4,000 units; a `<` written for
    # `<=` at the cut adds the suffix to it whole. history-bounds (at most 4,000 units plus
    # the suffix) lets it through.
    seed, trace = _first("requester.history-field-at-limit")
    assert _check("history-field-cut", trace) == []
    found = {v.invariant for v in world.run(_world(), seed=seed,
                                            mutants=["history-field-cut-at-limit"]).violations}
    assert found == {"history-field-cut"}
    suffix = "\n…(truncated)…"

    def cut(message: dict[str, Any]) -> dict[str, Any]:
        content = [dict(b, text=b["text"] + suffix) if b.get("type") == "text"
                   and len(b.get("text", "")) == 4_000 else b for b in message["content"]]
        return {**message, "content": content}

    forged = [_edit(r, result={**r.data["result"], "messages": [
        cut(m) if isinstance(m.get("content"), list) else m
        for m in r.data["result"]["messages"]]})
        if r.kind == "requester.archive" and r.data["result"] else r for r in trace]
    assert any("within the limit" in m for m in _check("history-field-cut", forged))


def test_a_wake_whose_sections_leave_the_stable_order_is_caught() -> None:
    # A wake's sections come spawned first, then ended first, then by session key. Forged:
    # the first of two sections spawned in one instant ended after the second.
    for seed in SEEDS:
        trace = list(world.run(_world(), seed=seed).trace)
        spawned = {r.data["run_id"]: r for r in trace if r.kind == "spawn"}
        ended = {r.data["run_id"]: r for r in trace if r.kind == "child.end"}
        wakes = [r for r in trace if r.kind == "requester.accept"
                 and r.data["key"].startswith("announce:requester-settle:")
                 and "Child completion results:" in r.data["text"]]
        for wake in wakes:
            text = wake.data["text"]
            runs = [run for run in wake.data["key"].split(":")[6].split(",") if run in spawned
                    and run in ended]
            shown = sorted((text.find(f"session_key: {spawned[r].data['child_session_key']}\n"),
                            r) for r in runs
                           if f"session_key: {spawned[r].data['child_session_key']}\n" in text)
            for (_, a), (_, b) in pairwise(shown):
                if spawned[a].t_ms == spawned[b].t_ms:
                    assert _check("wake-message", trace) == []
                    late = ended[b].t_ms + 1
                    later = [attrs.evolve(r, t_ms=late) if r is ended[a] else r for r in trace]
                    assert any("not in the order spawned, ended, session key" in m
                               for m in _check("wake-message", later))
                    return
    raise AssertionError("no wake with two sections spawned in one instant")
