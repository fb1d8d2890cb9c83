"""The oracles that read only observables for a private child's parent turn (PRV-2, PRV-6) and a
batch's wake timing (YLD-1, wake-not-delayed), each shown catching a broken variant of the
model; and the default world's aimed draws for those paths."""

from __future__ import annotations

from typing import Any

import pytest

import actors.delivery.wakes.batch_wake
import actors.delivery.wakes.delivery_wakes
import actors.requester.turns
from actors.mutants import (
    MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL,
    MUTANT_STATUS_CHECK_CONSUMES_PRIVATE,
    MUTANT_WAIT_EARLIER_TURN,
)
from actors.records.batch_record import BatchRow, BatchStatus
from actors.records.run_record import RunRecord
from sim import scenario
from sim.invariants.yields.yield_batches import wake_not_delayed
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _found(result: world.RunResult) -> set[str]:
    return {v.invariant for v in result.violations}


@pytest.mark.parametrize("name", ["private-yield-message-tool.toml",
                                  "private-status-check-then-finish.toml",
                                  "private-yield-with-public-sibling.toml"])
def test_the_scenarios_pass(name: str) -> None:
    assert _run(name).violations == ()


def test_a_resumed_turn_answers_by_its_reply_mode() -> None:
    """message_tool: the message-tool send reaches the conversation, the final stays internal."""
    kinds = {"requester.turn_answer", "conversation.reply"}
    records = [r for r in _run("private-yield-message-tool.toml").trace.records
               if r.kind in kinds]
    answer = next(r for r in records if r.kind == "requester.turn_answer")
    replies = [r.data["text"] for r in records if r.kind == "conversation.reply"]
    assert answer.data["final"] not in replies
    assert replies == answer.data["message_tool"]
    auto = [r for r in _run("private-yield-with-public-sibling.toml").trace.records
            if r.kind in kinds]
    final = next(r.data["final"] for r in auto if r.kind == "requester.turn_answer")
    assert [r.data["text"] for r in auto if r.kind == "conversation.reply"] == [final]


def test_reply_rules_catch_a_final_sent_in_message_tool_mode() -> None:
    result = _run("private-yield-message-tool.toml",
                  mutants=[MUTANT_PRIVATE_YIELD_FINAL_TO_CHANNEL])
    assert "private-yield-reply-rules" in _found(result)


def test_reply_rules_catch_a_final_kept_internal_in_auto_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The older §e7 reading: a private batch keeps the resumed turn's answer private too."""
    real = actors.requester.turns.answer

    def kept_private(port: Any, session: str, wake: Any, message_tool: bool,
                     tool_called: bool, final_to_channel: bool = False) -> None:
        real(port, session, wake, True, False)  # nothing visible, whatever the mode

    monkeypatch.setattr(actors.requester.turns, "answer", kept_private)
    assert "private-yield-reply-rules" in _found(_run("private-yield-with-public-sibling.toml"))


@pytest.mark.parametrize("name", ["private-status-check-then-finish.toml",
                                  "private-yield-with-public-sibling.toml"])
def test_status_check_oracle_catches_a_check_that_consumes_the_result(name: str) -> None:
    result = _run(name, mutants=[MUTANT_STATUS_CHECK_CONSUMES_PRIVATE])
    assert "status-check-keeps-private" in _found(result)


def test_status_check_oracle_catches_a_checked_result_left_out_of_the_wake(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A check that invalidates the result: the wake takes it for already announced."""
    def announced(record: RunRecord) -> bool:
        return record.private

    monkeypatch.setattr(actors.delivery.wakes.delivery_wakes, "_announced", announced)
    assert "status-check-keeps-private" in _found(_run("private-yield-with-public-sibling.toml"))


def test_wake_not_delayed_catches_a_recheck_that_outlasts_the_descendants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch that honours its deferral's recheck (made ten times longer) even after the
    descendant it waited for settled wakes its requester long after the batch settled."""
    def waiting(self: Any, row: BatchRow, now_ms: int) -> bool:
        return row.status == BatchStatus.PENDING and row.next_attempt_at_ms is not None \
            and row.next_attempt_at_ms > now_ms

    monkeypatch.setattr(actors.delivery.wakes.batch_wake, "DEFERRAL_MS", 300_000)
    monkeypatch.setattr(actors.delivery.wakes.batch_wake.BatchWakeCore, "waiting", waiting)
    assert "wake-not-delayed" in _found(_run("yield-batch.toml"))


def test_wake_not_delayed_reads_no_registry_verdict() -> None:
    """Without the registry's own settle, hand-over, give-up and cleanup records the oracle
    still finds a batch that waited for an earlier turn's child: it reads only what was asked
    and what the gateway and the transcripts saw."""
    result = _run("yield-batch.toml", mutants=[MUTANT_WAIT_EARLIER_TURN])
    registry = ("delivery.", "batch.", "run.cleanup", "private.")
    outside = [r for r in result.trace.records if not r.kind.startswith(registry)]
    assert wake_not_delayed(outside)
    assert wake_not_delayed([r for r in _run("yield-batch.toml").trace.records
                             if not r.kind.startswith(registry)]) == []
