"""Every invariant catches a deliberately broken variant of the model, and is quiet without one.

The breakages are monkeypatches of the model (not of the invariants): each one reintroduces the
kind of bug the invariant exists for, and the run's trace must show it.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import actors.child.consumers
import actors.child.consumers.activation
import actors.child.consumers.in_process
import actors.child.consumers.views
import actors.delivery.payload
from actors.delivery import attempts
from actors.delivery.core import Core
from actors.delivery.table import DeliveryCore
from actors.messages import Completion, CompletionAck
from actors.records.run_record import RunRecord
from actors.requester.session import Receipt, SessionCore
from actors.states import DeliveryStatus
from sim import invariants, scenario
from sim.invariants.delivery.reached import LIVENESS_BOUND_MS
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def test_every_invariant_is_registered_with_a_requirement() -> None:
    names = [inv.name for inv in invariants.ALL]
    assert len(names) == len(set(names))
    for inv in invariants.ALL:
        assert inv.kind in ("safety", "liveness")
        assert inv.doc


def test_the_scenario_suite_is_clean_without_breakage() -> None:
    for path in sorted(SCENARIOS.glob("*.toml")):
        loaded = scenario.load(path)
        if loaded.mutants:
            continue
        assert world.run(loaded).violations == (), path.name


# -- DEL ------------------------------------------------------------------------------------------


def test_at_most_once_catches_a_fresh_key_after_restart() -> None:
    result = _run("restart-replays-claim-key.toml", mutants=["fresh-key-after-restart"])
    # (The fresh key's copy is a second receipt of the reply with an equal end time, taken:
    # newest-receipt-owns states DEL-12's tie since issue 36's equal-end draw.)
    assert _names(result) == ["announce-key", "at-most-once", "newest-receipt-owns"]
    (violation,) = [v for v in result.violations if v.invariant == "at-most-once"]
    assert "reached requester:agent:main:main twice" in violation.message
    kinds = [result.trace[seq].kind for seq in violation.records]
    assert kinds == ["requester.accept", "requester.accept"]


def test_not_required_skipped_catches_delivering_fire_and_forget_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = DeliveryCore.child_ended

    def deliver_everything(self: DeliveryCore, record: RunRecord, now_ms: int) -> list[Any]:
        return original(self, attrs.evolve(record, required=True,
                                                 delivery_status=DeliveryStatus.PENDING),
                        now_ms)

    monkeypatch.setattr(DeliveryCore, "child_ended", deliver_everything)
    result = _run("not-required.toml")
    assert "not-required-skipped" in _names(result)


def test_delivered_means_received_catches_an_ack_without_a_transcript_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forgetful(self: SessionCore, completion: Completion, now_ms: int
                  ) -> tuple[CompletionAck, Receipt]:
        return CompletionAck(completion.key, completion.run_id, accepted=False), Receipt.DUPLICATE

    monkeypatch.setattr(SessionCore, "receive_completion", forgetful)
    result = _run("transient-then-success.toml")
    assert "delivered-means-received" in _names(result)


def test_eventually_resolved_reports_a_stuck_delivery(monkeypatch: pytest.MonkeyPatch) -> None:
    original = attempts.try_failed

    def give_up_silently(core: Core, active: Any, error: str, now_ms: int) -> list[Any]:
        return original(core, active, error, now_ms)[:1]  # notes the failure, retries nothing

    monkeypatch.setattr(attempts, "try_failed", give_up_silently)
    result = _run("transient-then-success.toml")
    # The transient refusal left unretried is also what retryable-keeps-trying is about.
    assert _names(result) == ["eventually-resolved", "retryable-keeps-trying"]
    message = next(v.message for v in result.violations if v.invariant == "eventually-resolved")
    assert message.startswith("stuck: run-1 (child c1) ended at 30000 ms")
    assert "still pending" in message


def test_eventually_resolved_enforces_its_time_bound() -> None:
    # A hand-made trace: the run is still sent far too late, and its row says it failed (the
    # registry's own give-up record is no evidence either way).
    from sim.trace import Trace

    trace = Trace()
    trace.append(0, "harness", "world.spawn", {"child": "c1", "requester": "main", "actor": "r",
                                               "required": True, "task": "t"})
    trace.append(0, "r", "spawn", {"run_id": "run-1", "child": "c1", "required": True})
    trace.append(10, "c", "child.end", {"run_id": "run-1"})
    trace.append(5, "h", "world.heal", {})
    late = 10 + LIVENESS_BOUND_MS + 1
    trace.append(late, "gateway", "gateway.send", {"run_id": "run-1", "key": "k1"})
    trace.append(late, "d", "delivery.give_up", {"run_id": "run-1"})
    trace.append(late, "h", "world.rows", {"rows": [{"run_id": "run-1",
                                                     "delivery_status": "failed"}]})
    trace.append(late, "h", "world.end", {"reason": "quiescent"})
    found = invariants.check(trace.records, ["eventually-resolved"])
    assert [v.invariant for v in found] == ["eventually-resolved"]
    assert "later than" in found[0].message


def test_result_intact_catches_a_truncated_result(monkeypatch: pytest.MonkeyPatch) -> None:
    original = actors.delivery.payload.render

    def truncating(record: RunRecord, kind: Any, *findings: Any) -> str:
        return original(attrs.evolve(record, result_text=(record.result_text or "")[:5]), kind,
                        *findings)

    monkeypatch.setattr(actors.delivery.payload, "render", truncating)
    result = _run("transient-then-success.toml")
    # What the requester read no longer is the child's result; the block's own check agrees.
    assert _names(result) == ["announce-block", "result-intact"]
    intact = [v for v in result.violations if v.invariant == "result-intact"]
    assert "but the child's result was" in intact[0].message


# -- OUT ------------------------------------------------------------------------------------------


def test_output_rule_catches_the_seed_000_bug_in_its_scenario() -> None:
    result = _run("seed-000-max-tokens-partial.toml", mutants=["last-assistant-message"])
    assert _names(result) == ["output-rule"]
    assert "lost partial answer" in result.violations[0].message


def test_output_rule_finds_the_seed_000_bug_in_exploration(
    default_world: scenario.Scenario,
) -> None:
    # Issue 3's done criterion: within a few hundred seeds of the default world, on its own.
    found = None
    for seed in range(1, 301):
        result = world.run(default_world, seed=seed, mutants=["last-assistant-message"])
        if any(v.invariant == "output-rule" for v in result.violations):
            found = seed
            break
    assert found is not None
    clean = world.run(default_world, seed=found)
    assert clean.violations == ()


def test_consumers_agree_catches_a_diverging_sdk_observer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = actors.child.consumers.observe_sdk

    def last_message_sdk(*args: Any, **kwargs: Any) -> actors.child.consumers.SubagentResult:
        result = original(*args, **kwargs)
        return attrs.evolve(result, output=[])  # an SDK backend that lost the output

    monkeypatch.setattr(actors.child.consumers.views, "observe_sdk", last_message_sdk)
    result = _run("seed-000-max-tokens-partial.toml")
    # The SDK's foreground tool result lost its partial text with the output (OUT-7).
    assert _names(result) == ["consumers-agree", "foreground-result"]
    assert "SDK observer" in result.violations[0].message


def test_consumers_agree_catches_an_empty_last_assistant_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def always_present(output: Any, stop_reason: str) -> dict[str, Any]:
        return {"stopReason": stop_reason, "lastAssistantMessage": list(output or [])}

    monkeypatch.setattr(actors.child.consumers.activation, "end_data", always_present)
    result = _run("aborted-child.toml")  # the child is aborted before it streams anything
    messages = [v.message for v in result.violations if v.invariant == "consumers-agree"]
    assert any("must be absent" in m for m in messages)


def test_stop_reason_kept_catches_a_reader_that_reports_completed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(actors.child.consumers.in_process, "in_process_stop_reason",
                        lambda reason, owner_cancelled=False: "completed")
    result = _run("seed-000-max-tokens-partial.toml")
    assert "stop-reason-kept" in _names(result)
    assert any("ended max-tokens" in v.message for v in result.violations)


# -- FMT ------------------------------------------------------------------------------------------

import actors.announce  # noqa: E402
import actors.announce.block  # noqa: E402
import actors.announce.layout  # noqa: E402
import actors.history  # noqa: E402
import actors.history.sessions  # noqa: E402


def test_announce_block_catches_missing_escaping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.announce.layout, "escape_data", lambda text: text)
    result = _run("announce-escaping.toml")
    # The forged framing also changes what the requester reads as the result.
    assert _names(result) == ["announce-block", "result-intact"]
    block = [v for v in result.violations if v.invariant == "announce-block"]
    assert "does not parse back" in block[0].message


def test_announce_block_catches_a_blown_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    original = actors.announce.format_announce

    def uncapped(*args: Any, **kwargs: Any) -> actors.announce.FormattedPayload:
        return original(*args, **{**kwargs, "cap": 10_000_000})

    monkeypatch.setattr(actors.announce, "format_announce", uncapped)
    result = _run("oversized-reply.toml")
    assert any(v.invariant == "announce-block" and "over the 160000 cap" in v.message
               for v in result.violations)


def test_announce_block_catches_silence_shown_as_a_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(actors.announce.layout, "visible_text", lambda text: text)
    result = _run("no-output.toml")
    assert "announce-block" in _names(result)


def test_stats_line_catches_invented_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    original = actors.announce.format_stats_line

    def zero_usage(child: actors.announce.ChildResult) -> str:
        return original(attrs.evolve(child, usage=child.usage or actors.announce.Usage(0, 0)))

    monkeypatch.setattr(actors.announce.block, "format_stats_line", zero_usage)
    result = _run("stats-line.toml")
    assert _names(result) == ["stats-line"]
    assert "tokens" in result.violations[0].message


def test_history_bounds_catches_uncut_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.history.sessions, "TEXT_FIELD_LIMIT", 10_000_000)
    loaded = scenario.loads(
        '[[sessions]]\nkey = "agent:main:main"\n'
        '[[children]]\nid = "c1"\nrun_for = 5\nreply_chars = 10000\n'
        '[[timeline]]\nat = 60\nevent = "history-read"\nchild = "c1"\n')
    result = world.run(loaded)
    assert _names(result) == ["history-bounds"]
    assert "UTF-16 units" in result.violations[0].message


def test_history_bounds_catches_tool_messages_leaking(monkeypatch: pytest.MonkeyPatch) -> None:
    import actors.requester.reads

    original = actors.requester.reads.sessions_history

    def with_tools(*args: Any, **kwargs: Any) -> actors.history.HistoryResult:
        return original(*args, **{**kwargs, "include_tools": True})

    monkeypatch.setattr(actors.requester.reads, "sessions_history", with_tools)
    result = _run("sessions-history.toml")
    assert any("tool message without includeTools" in v.message for v in result.violations)


def test_at_most_once_counts_each_extra_delivery() -> None:
    from sim.invariants.delivery.reached import at_most_once
    from sim.trace import Record

    accept = {"run_id": "run-1", "ended_at": 0}
    trace = [Record(seq, 1000 * seq, "requester:agent:main:main", "requester.accept", accept)
             for seq in range(4)]
    messages = [v.message for v in at_most_once(trace)]
    assert messages == [
        "run-1 reached requester:agent:main:main twice: first at 0 ms, delivery 2 at 1000 ms",
        "run-1 reached requester:agent:main:main 3 times: first at 0 ms, delivery 3 at 2000 ms",
        "run-1 reached requester:agent:main:main 4 times: first at 0 ms, delivery 4 at 3000 ms",
    ]


def test_stats_line_catches_a_duration_in_hours_instead_of_days(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import actors.announce.stats

    def hours_only(ms: float | None) -> str:
        seconds = round((ms or 0) / 1000)
        return f"{seconds // 3600}h" if seconds >= 86_400 else original(ms)

    original = actors.announce.stats.format_duration
    monkeypatch.setattr(actors.announce.stats, "format_duration", hours_only)
    result = _run("stats-line.toml")
    assert "stats-line" in _names(result)
    assert any("'runtime 25h'" in v.message and "'runtime 1d1h'" in v.message
               for v in result.violations)


def test_announce_block_catches_an_invented_timeout_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import actors.announce.labels

    # The block's status line is made by labels.status_line, which calls status_label there.
    original = actors.announce.labels.status_label

    def invented(status: Any, error: str | None) -> str:
        return original(status, error or ("subagent run timed out" if status == "timeout"
                                          else "unknown error"))

    monkeypatch.setattr(actors.announce.labels, "status_label", invented)
    result = _run("stats-line.toml")
    assert any(v.invariant == "announce-block" and "'status: timed out'" in v.message
               for v in result.violations)
