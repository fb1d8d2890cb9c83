"""The delivery oracles read what was asked and what an outsider saw, and each one catches a
deliberately broken model (monkeypatched here, so the invariants themselves stay untouched)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

import actors.delivery.attempts
import actors.delivery.table
import actors.requester.spawning
from actors import events
from actors.delivery.table import DeliveryCore
from actors.records import retry
from actors.records.run_record import RunRecord
from actors.states import DeliveryStatus
from sim import invariants, scenario
from sim.invariants.observations import error_class
from sim.trace import Trace
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def test_not_required_skipped_reads_the_request_not_the_models_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The requester registers every run as required: its own spawn record agrees with itself,
    # so only the request the world made shows the bug.
    def always_required(**fields: Any) -> RunRecord:
        return RunRecord(**{**fields, "required": True})

    monkeypatch.setattr(actors.requester.spawning, "RunRecord", always_required)
    result = _run("not-required.toml")
    assert "not-required-skipped" in _names(result)
    spawn = next(r for r in result.trace if r.kind == "spawn"
                 and r.data["child"] == "fire-and-forget")
    assert spawn.data["required"] is True  # the model's record hides it


def _skip_everything(self: DeliveryCore, record: RunRecord, now_ms: int) -> list[Any]:
    return [events.DeliverySkipped(record.run_id, DeliveryStatus.NOT_REQUIRED)]


def test_a_silent_skip_of_a_required_run_is_neither_resolved_nor_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(DeliveryCore, "child_ended", _skip_everything)
    result = _run("transient-then-success.toml")
    # (Not cleanup-once: the rows still show them pending, so no cleanup is owed; the skip
    # record is no premise of it.)
    assert _names(result) == ["eventually-resolved", "required-reaches-requester"]
    stuck = next(v for v in result.violations if v.invariant == "eventually-resolved")
    assert "still pending" in stuck.message


def test_required_reaches_requester_catches_a_run_registered_not_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The requester registers every run as fire-and-forget: the registry's own rows and records
    # agree with each other; only the request shows the run was asked to report back.
    def never_required(**fields: Any) -> RunRecord:
        return RunRecord(**{**fields, "required": False})

    monkeypatch.setattr(actors.requester.spawning, "RunRecord", never_required)
    result = _run("transient-then-success.toml")
    assert "required-reaches-requester" in _names(result)
    assert any("recorded it as not required" in v.message for v in result.violations)


TWO_SESSIONS = textwrap.dedent("""\
    name = "two requesters"
    [[sessions]]
    key = "agent:main:main"
    [[sessions]]
    key = "agent:ops:main"
    [[children]]
    id = "c1"
    requester = "agent:main:main"
    run_for = 10
    reply = "for main only"
    """)


def test_delivered_means_received_catches_a_hand_off_to_another_requester(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    send = actors.delivery.attempts.Send  # the send path makes every Send (actors/delivery/)

    def misrouted(requester: str, completion: Any) -> actors.delivery.attempts.Send:
        return send("agent:ops:main", attrs.evolve(completion, requester="agent:ops:main"))

    monkeypatch.setattr(actors.delivery.attempts, "Send", misrouted)
    path = tmp_path / "two.toml"
    path.write_text(TWO_SESSIONS, encoding="utf-8")
    result = world.run(scenario.load(path))
    assert "delivered-means-received" in _names(result)
    assert any("was asked for by requester:agent:main:main, but its completion was handed to "
               "requester:agent:ops:main" in v.message for v in result.violations)


def test_permanent_stops_retries_catches_a_permanent_error_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(retry, "classify", lambda error: retry.ErrorClass.TRANSIENT)
    result = _run("permanent-rejection.toml")
    assert "permanent-stops-retries" in _names(result)


def test_retry_timing_catches_hurried_transport_tries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "transport_wait_ms", lambda failed: 1_000 if failed < 4 else None)
    result = _run("transient-then-success.toml")
    assert _names(result) == ["retry-timing"]
    assert "the policy waits 5000 ms" in result.violations[0].message


def test_retry_timing_catches_a_backoff_without_doubling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "backoff_ms", lambda attempt, jitter: 15_000)
    result = _run("expiry.toml")
    assert "retry-timing" in _names(result)
    assert any("outside the backoff" in v.message for v in result.violations)


def test_retry_timing_catches_giving_up_before_the_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "COMPLETION_EXPIRY_MS", 10 * 60_000)
    result = _run("expiry.toml")
    assert "retry-timing" in _names(result)
    assert any("before its expiry" in v.message for v in result.violations)


def test_expiry_ends_attempts_catches_a_window_too_long(monkeypatch: pytest.MonkeyPatch) -> None:
    # Retrying on for 40 minutes keeps every backoff right: only the expiry's own oracle sees
    # the attempts after 30 minutes (as a window counted from a restart instead of the run's
    # end would, the bug tests/child/test_gateway_restart.py pins).
    monkeypatch.setattr(retry, "COMPLETION_EXPIRY_MS", 40 * 60_000)
    result = _run("expiry.toml")
    assert _names(result) == ["expiry-ends-attempts"]
    end = next(r for r in result.trace if r.kind == "child.end")
    first = result.violations[0]
    assert first.message.endswith(f"at or after its expiry at {end.t_ms + 30 * 60_000} ms")
    late = [r.t_ms for r in result.trace if r.kind == "gateway.send"
            and r.t_ms >= end.t_ms + 30 * 60_000]
    assert late and result.trace[first.records[-1]].t_ms == late[0]


def test_expiry_ends_attempts_holds_the_deadline_instant() -> None:
    # The boundary: an attempt due exactly at the deadline gives up; the mutant starts it.
    result = _run("mutant-expiry-inclusive.toml")
    end = next(r for r in result.trace if r.kind == "child.end")
    deadline = end.t_ms + 30 * 60_000
    found = [v for v in result.violations if v.invariant == "expiry-ends-attempts"]
    assert [result.trace[v.records[-1]].t_ms for v in found] == [deadline]
    assert _run("mutant-expiry-inclusive.toml", mutants=()).violations == ()


FAILING_CHILD = textwrap.dedent("""\
    name = "a child whose stream breaks after it said something"
    [[sessions]]
    key = "agent:main:main"
    [[children]]
    id = "c1"
    run_for = 20
    reply = "Half of the answer was streamed before the stream broke."
    outcome = "error"
    error = "model provider error: 500"
    """)


def test_failure_not_replayed_catches_a_failed_runs_text_delivered(tmp_path: Path) -> None:
    path = tmp_path / "failing.toml"
    path.write_text(FAILING_CHILD, encoding="utf-8")
    assert world.run(scenario.load(path)).violations == ()
    # The known-bug variant keeps the text the failed run captured as its result.
    result = world.run(scenario.load(path), mutants=["failed-result-replayed"])
    assert "failure-not-replayed" in _names(result)


@pytest.mark.parametrize(("error", "cls"), [
    ("chat not found", "permanent"),
    ("session writer claim rebound: cause: bot was blocked by the user", "permanent"),
    ("agent call failed: Error: chat not found (status: unavailable)", "permanent"),
    ("Forbidden: bot is not a member of the supergroup chat", "permanent"),
    ("gateway not connected", "transient"),
    ("econnreset", "transient"),
    ("agent call failed: UNAVAILABLE: upstream restarting", "transient"),
    ("unavailable", "other"),
    ("rate limited: retry later", "other"),
])
def test_the_oracles_error_classes_restate_the_reference(error: str, cls: str) -> None:
    assert error_class(error) == cls


def test_a_run_is_tied_to_the_request_it_answers_by_order() -> None:
    trace = Trace()
    for n in (1, 2):
        trace.append(n, "harness", "world.spawn", {"child": "c1", "requester": "m", "actor": "r",
                                                   "required": n == 2, "task": "t"})
        trace.append(n, "r", "spawn", {"run_id": f"run-{n}", "child": "c1", "required": True})
        trace.append(n, "r", "requester.accept", {"run_id": f"run-{n}"})
    found = invariants.check(trace.records, ["not-required-skipped"])
    assert [v.message.split()[0] for v in found] == ["run-1"]


def test_retry_timing_gives_a_frozen_members_correction_to_its_batch() -> None:
    # Seed 2362 with children drawn 1..8: run-16's first answer goes out on its own after the
    # yield, its correction comes before the batch's wake and is the batch's, and the batch's
    # close (no visible reply to three wakes) gives it up: no early give-up of its own.
    from sim.invariants.delivery.retries import retry_timing

    result = _run("regressions/batch-owns-correction-seed-2362.toml")
    assert retry_timing(result.trace) == []
    # Without the correction run-16 stays its own delivery's since its own send: the batch's
    # give-up of it is then an early one, as before.
    uncorrected = [r for r in result.trace
                   if not (r.kind == "child.correction" and r.data["run_id"] == "run-16")]
    found = retry_timing(uncorrected)
    assert [v.message.split(" ")[0] for v in found] == ["run-16"]
