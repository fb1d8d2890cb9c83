"""Lost-answer recovery (DEL-2), closed turns (DEL-7), transcript mirrors (DEL-8), callbacks and
the blocked-completion warning (DEL-9), payload retention and the registry's memory (DEL-16): the
pure cores, the scenarios, and the oracles catching broken variants of the model."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import actors.gateway.mirror
from actors.delivery.recovery import (
    RECOVERY_ATTEMPTS,
    RecoveryCore,
    RecoveryDue,
    RecoveryTimer,
    RecoveryWrite,
    final_answer,
)
from actors.gateway.blocked import blocked_error
from actors.gateway.mirror import Mirror, SessionLanes
from actors.messages import CompletionAck, SendRejected
from actors.records.retention import PREVIEW_CHARS, preview
from actors.records.run_record import RunRecord
from actors.records.send_error import SendError
from actors.states import DeliveryStatus, OutcomeStatus
from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def _check(records: list[Record], name: str) -> list[invariants.Violation]:
    return invariants.check(records, [name])


# -- the pure cores --------------------------------------------------------------------------


def _record(**changes: Any) -> RunRecord:
    base = RunRecord("run-1", "c1", "agent:main:subagent:c1", "agent:main:main", "task", True,
                     0, ended_at_ms=10, outcome_status=OutcomeStatus.OK, result_text="NO_REPLY",
                     delivery_status=DeliveryStatus.DELIVERED)
    return attrs.evolve(base, **changes)


def _recovery(answer: str | None, probes: list[str]) -> RecoveryCore:
    return RecoveryCore(lambda key, run_id: answer, lambda run_id: _record(),
                        lambda record: f"block: {record.result_text}", probes.append)


def test_recovery_without_an_answer_stops_at_its_bound() -> None:
    probes: list[str] = []
    core = _recovery(None, probes)
    effects = core.start(_record())
    for _ in range(RECOVERY_ATTEMPTS):
        timers = [e for e in effects if isinstance(e, RecoveryTimer)]
        writes = [e for e in effects if isinstance(e, RecoveryWrite)]
        if writes[-1].outcome is not None:
            break
        assert len(timers) == 1 and isinstance(timers[0].payload, RecoveryDue)
        effects = core.due(timers[0].payload)
    assert writes[-1] == RecoveryWrite("run-1", RECOVERY_ATTEMPTS, "exhausted")
    assert probes.count("delivery.recovery-attempted") == RECOVERY_ATTEMPTS
    assert "delivery.recovery-bound-reached" in probes
    # The waits between attempts are the batch wake's: 30 s, then 120 s.
    assert core.start(_record(), attempts_done=RECOVERY_ATTEMPTS)[0].outcome == "exhausted"


def test_recovery_hands_over_a_found_answer_and_resends_after_a_refusal() -> None:
    probes: list[str] = []
    core = _recovery("the answer", probes)
    effects = core.start(_record())
    sent = [e for e in effects if hasattr(e, "key")]
    assert sent and sent[0].key.endswith(":recovered") and "the answer" in sent[0].text
    again = core.failed(SendRejected(sent[0].key, "run-1", SendError("ECONNRESET")))
    assert [e.delay_ms for e in again if isinstance(e, RecoveryTimer)] == [30_000]
    done = core.acked(CompletionAck(sent[0].key, "run-1", accepted=True))
    assert RecoveryWrite("run-1", 1, "recovered") in done
    assert core.acked(CompletionAck(sent[0].key, "run-1", accepted=False)) == []


def test_final_answer_reads_the_runs_own_turn() -> None:
    def text(t: str) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": t}]}
    user = {"role": "user", "content": [{"type": "text", "text": "task"}]}
    call = {"role": "assistant", "content": [{"type": "tool-call", "id": "t1"}]}
    empty = {"role": "assistant", "content": []}
    assert final_answer([user, text("done")]) == "done"
    assert final_answer([user, text("done"), empty]) == "done"
    assert final_answer([user, text("thinking"), call]) is None
    assert final_answer([text("inherited answer"), user, empty]) is None  # never an older turn
    assert final_answer([user, text("NO_REPLY")]) is None


def test_the_warning_keeps_a_refusals_error_over_an_unanswered_try() -> None:
    probes: list[str] = []
    assert blocked_error(None, "gateway timeout", False, probes.append) == "gateway timeout"
    assert blocked_error("ECONNRESET", "gateway timeout", False, probes.append) == "ECONNRESET"
    assert blocked_error("ECONNRESET", "chat gone", True, probes.append) == "chat gone"
    assert blocked_error("ECONNRESET", "gateway timeout", False, probes.append,
                         last_try_only=True) == "gateway timeout"
    assert probes == ["delivery.warning-kept-error"]


def test_a_mirror_waits_behind_open_inputs_of_its_session_only() -> None:
    lanes = SessionLanes()
    lanes.input_sent("s", "k1")
    lanes.input_sent("s", "k2")
    lanes.input_sent("t", "k3")
    assert lanes.input_done("s", "k2") == []
    assert lanes.mirror("s", "run-2", "k2", "text 2") == []  # k1 is still open
    assert lanes.input_done("t", "k3") == []
    assert [m.key for m in lanes.mirror("t", "run-3", "k3", "text 3")] == ["k3"]
    assert lanes.input_done("s", "k1") == [Mirror("s", "run-2", "k2", "text 2", waited=True)]
    # A resend waits on its own: the first hand-off's time running out does not free it.
    lanes.input_sent("s", "k4")
    lanes.input_sent("s", "k4")
    assert lanes.mirror("s", "run-5", "k5", "text 5") == []
    assert lanes.input_expired("s", "k4") == []
    assert [m.key for m in lanes.input_expired("s", "k4")] == ["k5"]


def test_the_preview_is_the_task_or_its_capped_head() -> None:
    assert preview("short") == "short"
    cut = preview("x" * 1000)
    assert len(cut) == PREVIEW_CHARS and cut.endswith("…")


# -- scenarios and oracles -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lost-answer-recovery.toml", "transcript-mirror.toml",
                                  "callback-failure-and-warning.toml", "payload-retention.toml",
                                  "closed-turn-rejection.toml",
                                  "compaction-keeps-turn-identity.toml"])
def test_the_scenarios_pass(name: str) -> None:
    assert _run(name).violations == ()


@pytest.mark.parametrize(("name", "mutant", "invariant"), [
    ("closed-turn-rejection.toml", "closed-turn-rescheduled", "closed-turn-final"),
    ("callback-failure-and-warning.toml", "callback-undelivers",
     "handoff-stays-delivered"),
    ("callback-failure-and-warning.toml", "warning-loses-error", "blocked-warning"),
    ("lost-answer-recovery.toml", "no-answer-recovery", "lost-answer-recovery"),
    ("lost-answer-recovery.toml", "recovery-unbounded", "lost-answer-recovery"),
    ("payload-retention.toml", "payload-dropped-early", "payload-retained"),
    ("payload-retention.toml", "full-text-in-memory", "memory-preview"),
    ("transcript-mirror.toml", "mirror-blocks-send", "mirror-not-blocking"),
    ("compaction-keeps-turn-identity.toml", "compaction-drops-turns", "turn-identity"),
])
def test_each_oracle_catches_its_mutant(name: str, mutant: str, invariant: str) -> None:
    assert invariant in _names(_run(name, mutants=[mutant]))


def test_mirror_order_catches_a_mirror_that_jumps_the_queue(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_waiting(self: SessionLanes, session: str, run_id: str, key: str, text: str,
                   held_ack: object = None) -> list[Mirror]:
        return [Mirror(session, run_id, key, text, waited=False)]
    monkeypatch.setattr(actors.gateway.mirror.SessionLanes, "mirror", no_waiting)
    assert _names(_run("transcript-mirror.toml")) == ["mirror-after-queued-work"]


def test_mirror_recorded_catches_a_lost_mirror_and_a_wrong_one() -> None:
    records = list(_run("transcript-mirror.toml").trace.records)
    dropped = [r for r in records if r.kind != "requester.mirror"]
    assert any("never recorded" in v.message for v in _check(dropped, "mirror-recorded"))
    first = next(i for i, r in enumerate(records) if r.kind == "requester.mirror")
    records[first] = attrs.evolve(records[first], data={**records[first].data, "chars": 1})
    assert any("channel received" in v.message for v in _check(records, "mirror-recorded"))


def test_recovery_oracle_catches_an_invented_answer() -> None:
    records = list(_run("lost-answer-recovery.toml").trace.records)
    spawn = next(i for i, r in enumerate(records) if r.kind == "world.spawn"
                 and r.data["child"] == "c1")
    records[spawn] = attrs.evolve(records[spawn],
                                  data={**records[spawn].data, "answer_lost": False})
    assert any("no answer that was lost" in v.message
               for v in _check(records, "lost-answer-recovery"))


def test_memory_oracle_catches_a_forgotten_run_and_a_wrong_preview() -> None:
    records = list(_run("payload-retention.toml").trace.records)
    at = next(i for i, r in enumerate(records) if r.kind == "world.memory")
    runs = dict(records[at].data["runs"])
    first = sorted(runs)[0]
    runs[first] = {**runs[first], "task_preview": "something else"}
    del runs[sorted(runs)[1]]
    records[at] = attrs.evolve(records[at], data={"runs": runs})
    messages = [v.message for v in _check(records, "memory-preview")]
    assert any("forgot it" in m for m in messages)
    assert any("task preview" in m for m in messages)
