"""Oracles for the exact property (issue 25 item 4, docs/oracles.md): each catches a broken
variant that its weaker neighbour lets through, in the default world or in a forged trace."""

from __future__ import annotations

from typing import Any

import attrs

from sim import invariants, scenario
from sim.cli import root as cli
from sim.invariants.gateway.chunk_limits import expected_cut
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _default(seed: int, mutant: str) -> list[str]:
    result = world.run(scenario.load(cli.default_world_path()), seed=seed, mutants=[mutant])
    return sorted({v.invariant for v in result.violations})


def _check(name: str, trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME[name].check(trace)]


def _edit(record: Record, **data: Any) -> Record:
    return attrs.evolve(record, data={**record.data, **data})


def test_a_session_that_starts_its_newest_waiting_run_first_never_overlaps_yet_is_caught() -> None:
    # Seed 20 is the first default seed the mutant breaks (76 before the world's worker session
    # and early re-runs, sim/world/draws/child.py): the session still runs one run at a time
    # (session-runs-serial holds), but run-8 starts before run-7, spawned earlier.
    assert _default(20, "session-queue-newest-first") == ["session-runs-in-spawn-order"]


def test_a_lane_that_serves_its_newest_waiter_first_still_caps_concurrency_yet_is_caught() -> None:
    assert _default(11, "lane-newest-first") == ["lane-runs-in-queue-order"]


def test_two_slots_freed_at_one_instant_may_wake_their_waiters_in_either_order() -> None:
    # Seed 427: two lane holders end at 205 s and hand their slots to run-5 and then run-6,
    # which record their starts in that order. (Seed 804 showed run-6's start recorded first
    # until issue 35's draws moved it; the trace is reordered here to show the same.)
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=427).trace)
    at = [i for i, r in enumerate(trace) if r.kind == "lane.started" and r.t_ms == 205_000]
    assert [trace[i].data["run_id"] for i in at] == ["run-5", "run-6"]
    assert _check("lane-runs-in-queue-order", trace) == []
    first, second = at
    swapped = list(trace)
    swapped[first] = attrs.evolve(trace[second], seq=trace[first].seq)
    swapped[second] = attrs.evolve(trace[first], seq=trace[second].seq)
    starts = [r.data["run_id"] for r in swapped if r.kind == "lane.started" and r.t_ms == 205_000]
    assert starts == ["run-6", "run-5"]
    assert _check("lane-runs-in-queue-order", swapped) == []
    # Had run-5 started (and ended) a moment later, run-6 would have passed it.
    late = [attrs.evolve(r, t_ms=205_001)
            if r.data.get("run_id") == "run-5" and r.t_ms == 205_000
            else r for r in swapped]
    assert any("before run-5" in m for m in _check("lane-runs-in-queue-order", late))


def test_chunks_over_the_channel_limit_join_to_the_text_yet_are_caught() -> None:
    found = _default(3, "chunk-overflows-to-line-end")
    assert "chunk-fits-channel" in found
    assert "chunks-join-to-text" not in found  # joined, the chunks are still the text


def test_a_delivered_row_whose_correction_never_went_out_is_caught() -> None:
    # The requester keeps the older receipt, the only one that reached it, so the reply is the
    # newest receipt *that arrived* (newest-receipt-owns holds); the store says delivered.
    # Seed 11, its first failing default seed (7 before seed 7's Gateway restart, issue 35).
    found = _default(11, "delivered-ignores-correction")
    assert "delivered-is-newest" in found
    assert "newest-receipt-owns" not in found


def test_findings_are_dated_by_the_first_hand_off_not_by_the_registrys_record() -> None:
    # Seed 256 (74 before the frozen cap and the nested-delete kill moved the default world):
    # run-7's own correction opens its second generation, whose announcement renders the
    # findings afresh (docs/nesting.md) with a grandchild's correction. Dated per generation
    # by its first hand-off, that is right, with or without the registry's records of storing
    # the findings (which the oracle judges, never reads as the date).
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=256).trace)
    assert any(r.kind == "delivery.findings-frozen" and r.data["key"].endswith("run-7:g2")
               for r in trace)
    assert any(r.kind == "delivery.findings-frozen" for r in trace)
    assert _check("findings-scoped", trace) == []
    unrecorded = [r for r in trace if r.kind != "delivery.findings-frozen"]
    assert _check("findings-scoped", unrecorded) == []
    # Rendered again after a hand-off of the same generation: caught by the hand-off bound
    # alone, without the registry's records (seed 11, the first default seed that shows it
    # since the world holds a parent's findings for its child's correction,
    # sim/faults/findings_hold.py; seed 109 before, seed 16 before issues 35 and 36).
    rerendered = world.run(scenario.load(cli.default_world_path()), seed=11,
                           mutants=["findings-rerendered"]).trace
    assert _check("findings-scoped", [r for r in rerendered
                                      if r.kind != "delivery.findings-frozen"])
    kept = world.run(scenario.load(cli.default_world_path()), seed=11).trace
    assert _check("findings-scoped", list(kept)) == []  # the findings as first rendered


def test_the_cut_rule_keeps_lines_whole_within_the_limit() -> None:
    assert expected_cut("ab\ncd\nef", 5) == "ab\n"  # the last break within 5 characters
    assert expected_cut("abcdefgh", 5) == "abcde"  # no break: at the limit
    assert expected_cut("abc", 5) == "abc"


def _chunked(trace: list[Record]) -> list[Record]:
    return [r for r in trace if r.kind == "gateway.chunk" and r.data["total"] > 1]


def test_a_forged_send_of_one_long_message_to_a_limited_channel_is_caught() -> None:
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=3).trace)
    chunks = _chunked(trace)
    assert chunks and _check("chunk-fits-channel", trace) == []
    key = chunks[0].data["key"]
    mine = [r for r in chunks if r.data["key"] == key]
    whole = "".join(r.data["text"] for r in mine)
    # One message carrying the whole text, where the channel takes at most 700 characters.
    forged = [r for r in trace if r not in mine[1:]]
    forged[forged.index(mine[0])] = _edit(mine[0], text=whole, total=1)
    assert any("over the channel's limit of 700" in m
               for m in _check("chunk-fits-channel", forged))
    # A cut one character short of the rule's: every chunk may still fit and, joined, they are
    # still the text; only the rule says where the cut belongs.
    first, second = mine[0].data["text"], mine[1].data["text"]
    forged = list(trace)
    forged[trace.index(mine[0])] = _edit(mine[0], text=first[:-1])
    forged[trace.index(mine[1])] = _edit(mine[1], text=first[-1] + second)
    assert _check("chunks-join-to-text", forged) == []
    assert _check("chunk-fits-channel", forged)


def _paged() -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / "history-paging.toml"), seed=1).trace)


def test_the_paging_scenario_tiles_the_transcript() -> None:
    trace = _paged()
    pages = [r.data["result"] for r in trace if r.kind == "requester.history"]
    assert [(p["offset"], p.get("nextOffset")) for p in pages] == \
        [(0, 2), (2, 4), (4, 6), (6, None)]
    assert _check("history-paging", trace) == []


def test_a_next_offset_in_range_but_wrong_is_caught() -> None:
    trace = _paged()
    i = next(i for i, r in enumerate(trace) if r.kind == "requester.history")
    page = trace[i].data["result"]
    # One less re-reads the oldest row; history-bounds only asks for a value in range.
    trace[i] = _edit(trace[i], result={**page, "nextOffset": 1})
    assert _check("history-bounds", trace) == []
    assert any("nextOffset 1, expected 2" in m for m in _check("history-paging", trace))


def test_a_next_page_that_repeats_or_skips_rows_is_caught() -> None:
    trace = _paged()
    reads = [i for i, r in enumerate(trace) if r.kind == "requester.history"]
    second = trace[reads[1]]
    rows = second.data["result"]["messages"]
    # The page read at nextOffset 2 holds rows 5 and 6 (6 was on the page before) ...
    repeated = [{**m, "__openclaw": {"seq": m["__openclaw"]["seq"] + 1}} for m in rows]
    forged = list(trace)
    forged[reads[1]] = _edit(second, result={**second.data["result"], "messages": repeated})
    assert any("repeats row 6" in m for m in _check("history-paging", forged))
    # ... or rows 3 and 4 (row 5 is never read).
    skipped = [{**m, "__openclaw": {"seq": m["__openclaw"]["seq"] - 1}} for m in rows]
    forged[reads[1]] = _edit(second, result={**second.data["result"], "messages": skipped,
                                             "nextOffset": 5})
    assert any("skipping rows down from 5" in m for m in _check("history-paging", forged))


def test_a_token_count_in_compact_units_is_checked_to_the_digit() -> None:
    # stats-line checked the tokens only under 1,000; a count past it is written in compact
    # units (reference §c7), rounded as JavaScript's toFixed(1) does.
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=3).trace)
    assert _check("stats-line", trace) == []
    ends = {r.data["run_id"]: r for r in trace if r.kind == "child.end"}
    i, accept = next((i, r) for i, r in enumerate(trace) if r.kind == "requester.accept"
                     and r.data["run_id"] in ends and "Stats: " in r.data["text"])
    end = ends[accept.data["run_id"]]
    j = trace.index(end)
    line = next(x for x in accept.data["text"].split("\n") if x.startswith("Stats: "))
    tokens = next(p for p in line.split(" • ") if p.startswith("tokens "))

    def forged(usage: list[int], written: str) -> list[str]:
        copy = list(trace)
        copy[j] = _edit(end, usage=usage)
        copy[i] = _edit(accept, text=accept.data["text"].replace(tokens, written))
        return _check("stats-line", copy)

    assert forged([1_150, 96], "tokens 1.2k (in 1.1k / out 96)") == []  # 1.15 is a hair below
    assert any("'tokens 1.3k (in 1.2k / out 96)'" in m  # 1,250: rounded up, not cut
               for m in forged([1_154, 96], "tokens 1.2k (in 1.1k / out 96)"))
    assert any("'tokens 1.2k (in 1.2k / out 0)'" in m
               for m in forged([1_154, 0], "tokens 1154 (in 1154 / out 0)"))


def test_a_fresh_key_after_a_restart_is_caught_before_it_duplicates_a_completion() -> None:
    # Seed 2, the first default seed with a restart while a run waits to be handed over: its
    # resend carries a fresh key, but the completion had not reached the requester before the
    # crash, so nothing arrives twice (at-most-once holds) until seed 34 (22 before issue 35's
    # cleanup and retention draws moved the default world's seeds). There the session takes
    # the fresh key's copy as a second receipt of the reply with an equal end time, which
    # newest-receipt-owns states since issue 36's equal-end draw (equal keeps the first).
    assert _default(2, "fresh-key-after-restart") == ["announce-key"]
    assert _default(34, "fresh-key-after-restart") == ["announce-key", "at-most-once",
                                                       "newest-receipt-owns"]


def test_a_key_without_the_run_id_is_caught_on_the_first_hand_off() -> None:
    # Seed 2: a child session's only run; no re-run shares its key yet (rerun-keeps-answer
    # holds until seed 10).
    assert _default(2, "key-without-run-id") == ["announce-key"]


def test_a_resend_of_the_same_answer_under_another_key_is_caught() -> None:
    # Seed 2 of the default world hands run-5 over twice, across two restarts, under one key.
    # Forged: the second hand-off under a key of the right spelling but the next generation,
    # with no operator request and no newer answer between.
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=2).trace)
    assert _check("announce-key", trace) == []
    sends = [i for i, r in enumerate(trace)
             if r.kind == "gateway.send" and r.data["run_id"] == "run-5"]
    assert len(sends) >= 2
    last = trace[sends[-1]]
    forged = [*trace]
    forged[sends[-1]] = _edit(last, key=f"{last.data['key']}:g2")
    assert any("no operator request between" in m for m in _check("announce-key", forged))
    # The same key spelled without the child session's own segment: caught by its spelling.
    forged[sends[-1]] = _edit(last, key=last.data["key"].replace(":subagent:c3", ""))
    assert any("not 'announce:v1:" in m for m in _check("announce-key", forged))


def test_a_failed_run_whose_store_row_keeps_its_captured_text_is_caught() -> None:
    # Seed 1: run-3 fails (a provider error) and is never handed to its requester, so no
    # result block shows the captured text; the store row keeping it is what a redrive would
    # send (DEL-14). Before, the mutant was first seen at seed 12.
    assert _default(1, "failed-result-replayed") == ["failure-not-replayed"]
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=1).trace)
    assert _check("failure-not-replayed", trace) == []
    forged = [_edit(r, rows=[{**row, "result_chars": 40} if row["run_id"] == "run-3" else row
                             for row in r.data["rows"]])
              if r.kind == "world.rows" else r for r in trace]
    assert any("store row keeps a result of 40" in m
               for m in _check("failure-not-replayed", forged))


def test_a_give_up_before_the_requester_yields_is_judged() -> None:
    # Seed 6: run-4 is given up after four failed tries at 224 s; its requester's yield makes it
    # a batch member only at 414 s. A yielded batch owns its members from the yield on, not
    # before (the oracle used to spare every member that was ever frozen: first seed 12).
    assert _default(6, "give-up-after-tries") == ["retry-timing"]
    # The same seed with the expiry counted from the spawn: run-2 is still sent under its own
    # key after the yield, so the batch does not own it, and its give-up comes too early.
    assert _default(6, "expiry-from-spawn") == ["retry-timing"]


def test_a_correction_sent_after_its_batch_wake_was_refused_for_good_is_caught() -> None:
    # Seed 61 (seed 22 until issue 35's draws moved it; first seen at seed 29 before that): a
    # run given up, its producer's correction is then sent at once as a second generation, with
    # no operator redrive.
    assert _default(61, "give-up-correction-sent") == ["given-up-waits-for-operator"]
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=61).trace)
    assert _check("given-up-waits-for-operator", trace) == []


def test_a_wave_of_one_undelivered_child_that_is_never_woken_is_caught() -> None:
    # Seed 5: run-1's own send gives up (suspended) and its wave is run-1 alone; reference §c9
    # consumes a one-child wave without a wake only when that child was already delivered. The
    # oracle used to judge waves of two or more only (first seen at seed 9).
    trace = list(world.run(scenario.load(cli.default_world_path()), seed=5).trace)
    wakes = [r for r in trace if r.kind == "gateway.send"
             and r.data["key"] == "announce:requester-settle:main:agent:main:main:run-1"]
    assert wakes and _check("wave-woken", trace) == []
    # Seed 5 with the mutant gets an operator's redrive of run-1 a week later, which delivers
    # it: the oracle used to read the lone child as taken then (first seen at seed 9 again).
    # Whether it was already delivered is read off its first generation, before the redrive.
    assert _default(5, "wave-never-woken") == ["wave-woken"]
    assert _default(9, "wave-never-woken") == ["wave-woken"]
    # A one-child wave whose child was taken owes nothing: seed 5 with run-1's wake removed and
    # run-1's own completion forged as taken passes.
    took = next(r for r in trace if r.kind == "requester.accept")
    unwoken = [r for r in trace
               if not (r.kind == "gateway.send" and r.data["run_id"] == "wave:run-1")]
    assert any("the wave run-1 " in m for m in _check("wave-woken", unwoken))
    # Forged: the week-later redrive (refused here, already delivered) goes out as a second
    # generation the requester takes; the first was never taken, so the wave was still owed.
    redrive = next(r for r in trace if r.kind == "world.operator"
                   and r.data["run_id"] == "run-1")
    own = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-1")
    key = own.data["key"] + ":g2"
    again = [attrs.evolve(own, seq=len(trace) + 2, t_ms=redrive.t_ms, data={
                 **own.data, "key": key}),
             attrs.evolve(took, seq=len(trace) + 3, t_ms=redrive.t_ms, data={
                 **took.data, "run_id": "run-1", "key": key})]
    at = unwoken.index(redrive) + 1  # right after the request, before the rows and the end
    redriven = [*unwoken[:at], *again, *unwoken[at:]]
    assert any("the wave run-1 " in m for m in _check("wave-woken", redriven))
    forged = [*unwoken, attrs.evolve(took, seq=len(trace) + 1, t_ms=548_000, data={
        **took.data, "run_id": "run-1", "key": "announce:v1:agent:main:subagent:c1:run-1"})]
    forged.sort(key=lambda r: (r.t_ms, r.seq))
    assert _check("wave-woken", forged) == []


def test_a_lone_child_whose_first_generation_was_taken_after_a_redrive_owes_no_wake() -> None:
    # Seeds 2419, 7012 (found by the 8,000-seed sweep of the first version of the sharpening,
    # which cut a lone child's trail at the operator's request): the redrive found the run's
    # first generation still its own, and the same key went out again and was taken; the wave
    # of it alone is consumed with no wake (reference §c9).
    for seed, run_id in ((2419, "run-1"), (7012, "run-2")):
        trace = list(world.run(scenario.load(cli.default_world_path()), seed=seed).trace)
        sends = {r.data["key"] for r in trace
                 if r.kind == "gateway.send" and r.data["run_id"] == run_id}
        assert len(sends) == 1 and any(r.kind == "world.operator" and r.data["run_id"] == run_id
                                       for r in trace)
        assert _check("wave-woken", trace) == [], seed


def test_a_confirmed_hand_off_the_registry_calls_stale_then_gives_up_is_caught() -> None:
    # callback-failure-and-warning.toml: c1's session confirms, its callback fails, the run is
    # delivered. Forged: the registry calls that confirmation stale and gives the run up. The
    # oracle once ended what it owed at the registry's own "stale" record (issue 36) and passed.
    trace = list(world.run(scenario.load(SCENARIOS / "callback-failure-and-warning.toml")).trace)
    assert _check("handoff-stays-delivered", trace) == []
    at = next(i for i, r in enumerate(trace)
              if r.kind == "delivery.delivered" and r.data["run_id"] == "run-1")
    delivered = trace[at]
    forged = [*trace[:at],
              attrs.evolve(delivered, kind="delivery.stale",
                           data={"run_id": "run-1", "what": "ack"}),
              attrs.evolve(delivered, kind="delivery.give_up", data={
                  "run_id": "run-1", "status": "failed", "reason": "permanent_failure",
                  "error": "forged"}),
              *trace[at + 1:]]
    assert any("confirmed run-1's hand-off" in m and "delivery.give_up" in m
               for m in _check("handoff-stays-delivered", forged))


def test_an_empty_page_of_tool_rows_that_stops_paging_is_caught() -> None:
    # Reference §c19: a page whose rows were all tool rows (dropped) still pages on from its
    # window; one without nextOffset would leave every older row unread.
    trace = list(world.run(scenario.load(SCENARIOS / "history-paging-tool-rows.toml"),
                           seed=1).trace)
    assert _check("history-paging", trace) == []
    i = [i for i, r in enumerate(trace) if r.kind == "requester.history"][1]
    page = trace[i].data["result"]
    assert page["messages"] == [] and page["nextOffset"] == 3
    stopped = {k: v for k, v in page.items() if k != "nextOffset"}
    trace[i] = _edit(trace[i], result=stopped)
    assert any("nextOffset None on an empty page, expected 3" in m
               for m in _check("history-paging", trace))
