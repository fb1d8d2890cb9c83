"""Issue 38, third round (main d16614e, seeds 2,001..12,000): each oracle fix keeps its
regression scenario clean (scenarios/regressions/), and the same oracle still catches the
scenario's trace forged into the broken variant next to it (the fact its fix reads, changed)."""

from __future__ import annotations

import attrs

from sim.trace import Record
from tests.invariants.regression_traces import check as _check
from tests.invariants.regression_traces import edit as _edit
from tests.invariants.regression_traces import trace as _trace


def test_retry_timing_leaves_a_correction_to_its_batch_past_an_older_keys_retry() -> None:
    # run-16's first answer is held on its way; the yield freezes it, its child corrects it
    # before the wake, and try 2 of the first key goes out after the correction (seed 5945).
    trace = _trace("correction-behind-own-retry-seed-5945")
    assert _check("retry-timing", trace) == []
    correction = next(r for r in trace
                      if r.kind == "child.correction" and r.data["run_id"] == "run-16")
    retry = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-16"
                 and r.t_ms > correction.t_ms)
    key = retry.data["key"]
    # Had that send carried the correction under a key of its own, the member delivered it
    # itself since the yield, and the batch's close may not give it up before the expiry.
    own = [_edit(r, key=f"{key}:g2") if r is retry else r for r in trace]
    assert any("run-16 was given up at" in m and "before its expiry" in m
               for m in _check("retry-timing", own))
    # Had no correction come, the give-up is of the member's own first answer, sent after the
    # yield: early too.
    uncorrected = [r for r in trace if r is not correction]
    assert any("run-16 was given up at" in m for m in _check("retry-timing", uncorrected))


def test_a_wake_releases_a_member_told_from_its_session_sibling_by_its_task_line() -> None:
    # run-2 and run-3 share the child session c1; run-3 is given up (a partly sent chunked
    # send) in the instant the batch's wake, carrying its section, is taken: released (YLD-2),
    # its correction's generation 2 may be sent (seed 7592).
    trace = _trace("wake-releases-shared-session-seed-7592")
    assert _check("given-up-waits-for-operator", trace) == []
    take = next(r for r in trace if r.kind == "requester.accept"
                and r.data["key"].startswith("announce:requester-settle:"))
    assert "task 3 of the batch\nsession_key: agent:main:subagent:c1\n" in take.data["text"]
    # Had the wake carried run-2's section twice and none of run-3's, run-3 was never released.
    text = take.data["text"].replace("task 3 of the batch\nsession_key",
                                     "task 2 of the batch\nsession_key")
    uncarried = [_edit(r, text=text) if r is take else r for r in trace]
    assert any("run-3 was given up" in m and ":g2" in m
               for m in _check("given-up-waits-for-operator", uncarried))


def test_a_checked_private_result_may_expire_while_its_descendant_is_unsettled() -> None:
    # run-1 is spawned privately, checked after it ended, and released as its turn finishes at
    # 29,001 ms; its child run-2's announce meets an outage and is taken at 1,814,002 ms, after
    # run-1's last 15 s descendant recheck inside its window: run-1 rightly expires
    # undelivered (reference §c8, §c11), as it would unchecked (seed 84662).
    trace = _trace("private-waits-out-descendants-seed-84662")
    assert _check("status-check-keeps-private", trace) == []
    first = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-2")
    refused = next(r for r in trace if r.kind == "fault" and r.seq > first.seq
                   and r.data["run_id"] == "run-2")
    # Had run-2's first send been taken (and nothing of its delivery come after), it settled
    # at 147,000 ms: run-1 was owed its hand-off long before its window ran out.
    taken = Record(refused.seq, refused.t_ms, "requester:agent:main:subagent:c3",
                   "requester.accept", {"run_id": "run-2", "key": first.data["key"],
                                        "status": "ok", "text": ""})
    early = [taken if r is refused else r for r in trace
             if r.data.get("run_id") != "run-2" or r.seq <= refused.seq]
    assert any("run-1's private result" in m and "never handed back" in m
               for m in _check("status-check-keeps-private", early))
    # Had run-2 been taken one millisecond before run-1's last recheck (1,814,001 ms), run-1
    # had that recheck to go out on: owed too.
    accept = next(r for r in trace if r.kind == "requester.accept"
                  and r.data["run_id"] == "run-2")
    sooner = [attrs.evolve(r, t_ms=r.t_ms - 2) if r.data.get("run_id") == "run-2"
              and r.t_ms == accept.t_ms else r for r in trace]
    assert any("run-1's private result" in m
               for m in _check("status-check-keeps-private", sooner))
