"""A Gateway restart (reference §c18): every streaming run is interrupted; when the Gateway is
back recovery resumes each from its transcript, or ends it error when its execution context was
lost; a required one's requester first reads the resumed notice (a failed notice retried, with no
second recovery turn), then its completion once; a not-required one resumes silently. The model
does it, and `restart-resumes` (with `run-timeout`'s moved deadline) catches broken variants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from actors.child.restart import LOST_CONTEXT_ERROR, RESUMED_NOTICE
from sim import scenario
from sim.invariants.child.restarts import restart_resumes
from sim.invariants.child.run_timeout import moved_deadline, run_timeout
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(**kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "gateway-restart.toml"), **kwargs)


def _run_of(result: world.RunResult, child: str) -> str:
    return next(r.run_id for r in result.runs if r.child_id == child)


def _messages(records: list[Record]) -> list[str]:
    return [v.message for v in restart_resumes(records)]


def test_running_children_are_interrupted_then_resumed_or_lost() -> None:
    result = _run()
    assert result.violations == ()
    records = result.trace.records
    writer, quiet, lost, done = (_run_of(result, c) for c in ("writer", "quiet", "lost", "done"))
    interrupted = [r.data["run_id"] for r in records if r.kind == "child.interrupted"]
    assert sorted(interrupted) == sorted([writer, quiet, lost])
    resumed = [r.data["run_id"] for r in records if r.kind == "child.resumed"]
    assert sorted(resumed) == sorted([writer, quiet])  # once each: no second recovery turn
    ends = {r.data["run_id"]: r for r in records if r.kind == "child.end"}
    assert (ends[lost].t_ms, ends[lost].data["status"], ends[lost].data["error"]) == (
        35_000, "error", LOST_CONTEXT_ERROR)
    assert ends[writer].t_ms == ends[quiet].t_ms == 75_000  # 15 s down: no run time
    assert ends[done].t_ms == 5_000
    # writer's requester: the notice fails once, is retried 15 s later, then the completion.
    failed = [r for r in records if r.kind == "requester.restart-notice-failed"]
    assert [(r.data["run_id"], r.t_ms) for r in failed] == [(writer, 35_000)]
    notices = [r for r in records if r.kind == "requester.restart-notice"]
    assert [(r.data["run_id"], r.data["text"], r.t_ms, r.data["attempt"]) for r in notices] \
        == [(writer, RESUMED_NOTICE, 50_000, 2)]
    accepted = [r for r in records if r.kind == "requester.accept"]
    writer_accepts = [r for r in accepted if r.data["run_id"] == writer]
    assert len(writer_accepts) == 1 and notices[0].seq < writer_accepts[0].seq
    assert quiet not in [r.data["run_id"] for r in accepted]


def test_the_oracle_catches_a_completion_without_its_notice() -> None:
    result = _run(mutants=["restart-notice-skipped"])
    messages = [v.message for v in result.violations if v.invariant == "restart-resumes"]
    assert any("without first reading 'Resumed your interrupted task" in m
               for m in messages), messages


def _edited(edit: Callable[[Record], Record | None]) -> list[Record]:
    return [e for r in _run().trace.records for e in [edit(r)] if e is not None]


def test_the_oracle_catches_a_notice_after_the_completion() -> None:
    records = _run().trace.records
    notice = next(r for r in records if r.kind == "requester.restart-notice")
    writer = notice.data["run_id"]
    accept = next(r for r in records
                  if r.kind == "requester.accept" and r.data["run_id"] == writer)
    moved = [r for r in records if r is not notice]
    moved.insert(moved.index(accept) + 1, notice)
    assert any("without first reading" in m for m in _messages(moved))


def test_the_oracle_catches_a_lost_run_ending_otherwise() -> None:
    def ok(r: Record) -> Record:
        if r.kind == "child.end" and r.data["error"] == LOST_CONTEXT_ERROR:
            return attrs.evolve(r, data={**r.data, "status": "ok", "error": None})
        return r

    assert any("execution context was lost" in m for m in _messages(_edited(ok)))


def test_the_oracle_catches_a_notice_for_a_silent_child() -> None:
    result = _run()
    records = list(result.trace.records)
    notice = next(r for r in records if r.kind == "requester.restart-notice")
    forged = attrs.evolve(notice, data={**notice.data, "run_id": _run_of(result, "quiet")})
    records.insert(records.index(notice), forged)
    assert any("not required" in m for m in _messages(records))


def test_the_oracle_catches_a_second_recovery_turn() -> None:
    records = list(_run().trace.records)
    resumed = next(r for r in records if r.kind == "child.resumed")
    records.insert(records.index(resumed) + 1, resumed)
    assert any("a second recovery turn" in m for m in _messages(records))


def test_the_oracle_catches_a_run_ending_while_the_gateway_is_down() -> None:
    def early(r: Record) -> Record:
        if r.kind == "child.end" and r.data["status"] == "ok" and r.t_ms == 75_000:
            return attrs.evolve(r, t_ms=30_000)
        return r

    assert any("before the Gateway was back" in m for m in _messages(_edited(early)))


def test_the_oracle_catches_a_twice_read_notice() -> None:
    records = list(_run().trace.records)
    notice = next(r for r in records if r.kind == "requester.restart-notice")
    records.insert(records.index(notice) + 1, notice)
    assert any("read twice" in m for m in _messages(records))


def test_an_outage_moves_a_deadline_on() -> None:
    assert moved_deadline(0, 30_000, []) == 30_000
    assert moved_deadline(0, 30_000, [(20_000, 35_000)]) == 45_000
    assert moved_deadline(10_000, 40_000, [(0, 15_000)]) == 45_000  # started while down
    assert moved_deadline(0, 30_000, [(31_000, 40_000)]) == 30_000  # after it: no move
    # recorded before the run's end at the deadline's very instant: it interrupted the run
    assert moved_deadline(0, 30_000, [(30_000, 40_000)]) == 40_000
    # the first outage moves the deadline into the second, which moves it again
    assert moved_deadline(0, 30_000, [(40_000, 45_000), (20_000, 35_000)]) == 50_000


def test_run_timeout_counts_no_outage_and_catches_one_counted() -> None:
    text = (SCENARIOS / "gateway-restart.toml").read_text()
    text = text.replace('id = "writer"\n', 'id = "writer"\nrun_timeout_seconds = 40\n', 1)
    result = world.run(scenario.loads(text, "restart-timeout.toml"))
    assert result.violations == ()
    writer = _run_of(result, "writer")
    end = next(r for r in result.trace.records
               if r.kind == "child.end" and r.data["run_id"] == writer)
    assert (end.data["status"], end.t_ms) == ("timeout", 55_000)  # 40 s of run time + 15 s
    without = [r for r in result.trace.records if r.kind != "world.gateway-restart"]
    assert any(writer in v.message for v in run_timeout(without))


def test_two_restarts_one_while_the_gateway_is_down() -> None:
    """A second restart while the Gateway is still down keeps it down until the later return;
    a context lost by the first stays lost; each kept run still resumes once, noticed once."""
    text = (SCENARIOS / "gateway-restart.toml").read_text()
    text = text.replace("[expect]", '[[timeline]]\nat = 30\nevent = "gateway-restart"\n'
                        'restart_after = 20\n\n[[timeline]]\nat = 65\n'
                        'event = "gateway-restart"\nrestart_after = 5\n\n[expect]', 1)
    result = world.run(scenario.loads(text, "two-restarts.toml"))
    assert result.violations == ()
    records = result.trace.records
    writer, lost = _run_of(result, "writer"), _run_of(result, "lost")
    ends = {r.data["run_id"]: r for r in records if r.kind == "child.end"}
    assert (ends[lost].t_ms, ends[lost].data["error"]) == (50_000, LOST_CONTEXT_ERROR)
    # 20 s of run time before the first restart, 30 s down, back at 50 s, interrupted again
    # at 65 s (35 s of run time), down 5 s: the last 25 s run from 70 s.
    assert ends[writer].t_ms == 95_000
    resumed = [r.data["restart"] for r in records
               if r.kind == "child.resumed" and r.data["run_id"] == writer]
    assert resumed == [2, 3]


def test_a_restored_completion_keeps_its_window_from_the_runs_end() -> None:
    """A completion pending across a Gateway restart (every send refused, the restart in its
    backoff) is restored from the store and given up 30 minutes after the run's end, not after
    the restart or the return (reference §c18). `expiry-ends-attempts` restates the bound
    (scenario expiry-across-gateway-restart.toml); this test pins the instants."""
    text = (SCENARIOS / "expiry.toml").read_text()
    text = text.replace("[expect]", '[[timeline]]\nat = 600\nevent = "gateway-restart"\n'
                        'restart_after = 60\n\n[expect]', 1)
    result = world.run(scenario.loads(text, "restart-expiry.toml"))
    assert result.violations == ()
    records = result.trace.records
    end = next(r for r in records if r.kind == "child.end")
    starts = [r.t_ms for r in records if r.kind == "delivery.start"]
    assert starts == [0, 660_000]  # the delivery process came back with the Gateway
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    assert (give_up.t_ms, give_up.data["reason"]) == (end.t_ms + 30 * 60_000, "expiry")
    assert all(r.t_ms < give_up.t_ms for r in records if r.kind == "gateway.send")
