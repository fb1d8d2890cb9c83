"""ANNOUNCE_SKIP (reference §c1) and cleanup once per run (DEL-16): the oracles catch broken
variants of the model and are quiet without them."""

from __future__ import annotations

from typing import Any

import pytest

import actors.delivery.core
from actors import events
from actors.delivery import attempts
from actors.delivery.core import Core
from actors.delivery.table import DeliveryCore
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def test_the_skip_scenario_announces_nothing_and_cleans_up_each_run_once() -> None:
    result = _run("announce-skip.toml")
    assert result.violations == ()
    kinds = [(r.kind, r.data["run_id"]) for r in result.trace.records
             if r.kind in ("delivery.announce_skip", "run.cleanup", "requester.accept")]
    skip_run = next(r.run_id for r in result.runs if r.child_id == "skip")
    assert kinds.count(("delivery.announce_skip", skip_run)) == 1
    assert kinds.count(("run.cleanup", skip_run)) == 1
    assert ("requester.accept", skip_run) not in kinds
    # Cleanup is durable: the store row says when it ran, and the restart finished it.
    assert all(r.cleaned_up_at_ms is not None for r in result.runs)
    assert any(r.kind == "crash" for r in result.trace.records)


def test_announce_skip_catches_the_skip_token_announced_as_text() -> None:
    result = _run("announce-skip.toml", mutants=["announce-skip-as-text"])
    assert _names(result) == ["announce-skip"]
    assert "replied exactly ANNOUNCE_SKIP" in result.violations[0].message


def test_announce_skip_catches_a_real_answer_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sloppy matcher: any reply that mentions the token is skipped, losing a real answer.
    monkeypatch.setattr(actors.delivery.core, "is_announce_skip",
                        lambda text: text is not None and "ANNOUNCE_SKIP" in text)
    result = _run("announce-skip.toml")
    assert "announce-skip" in _names(result)
    assert any("not ANNOUNCE_SKIP" in v.message for v in result.violations)


def test_cleanup_once_catches_a_cleanup_that_never_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DeliveryCore, "_cleanup", lambda self, record, now_ms: [])
    result = _run("announce-skip.toml")
    assert _names(result) == ["cleanup-once"]
    assert "never cleaned up" in result.violations[0].message


def test_cleanup_once_catches_a_cleanup_that_runs_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    original = DeliveryCore._cleanup

    def twice(self: DeliveryCore[Any], record: Any, now_ms: int) -> list[Any]:
        effects = original(self, record, now_ms)
        return effects + [e for e in effects if isinstance(e, events.RunCleanedUp)]

    monkeypatch.setattr(DeliveryCore, "_cleanup", twice)
    result = _run("announce-skip.toml")
    assert _names(result) == ["cleanup-once"]
    assert "cleaned up twice" in result.violations[0].message


def test_cleanup_once_catches_a_cleanup_before_resolution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = attempts.start_attempt

    def early(core: Core, active: Any, now_ms: int) -> list[Any]:
        return [events.RunCleanedUp(active.record.run_id, "pending"),
                *original(core, active, now_ms)]

    monkeypatch.setattr(attempts, "start_attempt", early)
    result = _run("announce-skip.toml")
    assert "cleanup-once" in _names(result)
    assert any("before its obligations resolved" in v.message for v in result.violations)
