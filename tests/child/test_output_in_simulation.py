"""OUT-2, OUT-3, OUT-7, OUT-10 in simulation: each oracle catches a broken variant of the model.

The breakages are monkeypatches of the model, never of the oracles; each reintroduces the kind of
bug its oracle exists for, and the run's trace must show it. The same scenarios pass unbroken.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

import actors.child.consumers.turn
import actors.child.output
import actors.child.shell
from actors.child.agent_loop import Encoding
from actors.child.logs import SessionHeader
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS

FORKS = "fork-and-continued-epoch.toml"
FOREGROUND = "foreground-tool-result.toml"


def _run(name: str) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name))


def _found(result: world.RunResult, invariant: str) -> list[str]:
    return [v.message for v in result.violations if v.invariant == invariant]


@pytest.mark.parametrize("name", [FORKS, FOREGROUND, "seed-000-max-tokens-partial.toml"])
def test_the_scenarios_pass_unbroken(name: str) -> None:
    assert _run(name).violations == ()


def test_fold_agrees_catches_a_whole_suffix_function_that_takes_the_last_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def last_message(events: Iterable[Any]) -> list[Any] | None:
        content = None
        for event in events:
            if event.get("type") == "assistant/message":
                content = list(event["data"]["message"]["content"])
        return content or None

    monkeypatch.setattr(actors.child.shell, "final_output", last_message)
    result = _run("seed-000-max-tokens-partial.toml")
    assert {v.invariant for v in result.violations} == {"fold-agrees"}
    assert "whole-suffix function None" in _found(result, "fold-agrees")[0]


def test_own_output_catches_a_reader_that_ignores_the_fork_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def everything(events: Iterable[Any], header: SessionHeader) -> Iterator[Any]:
        return iter(events)

    monkeypatch.setattr(actors.child.shell, "child_owned", everything)
    messages = _found(_run(FORKS), "own-output")
    assert any("PARENT-ANSWER of the silent fork" in m and "fork events" in m for m in messages)


def test_own_output_catches_a_reader_that_keeps_the_earlier_epoch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(actors.child.shell, "last_epoch", list)
    messages = _found(_run(FORKS), "own-output")
    assert any("EARLIER-EPOCH answer of the aborted activation" in m for m in messages)
    assert not any("PARENT-ANSWER" in m for m in messages)


def test_foreground_result_catches_a_wrong_headline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors.child.output, "headline", lambda stop_reason: "subagent run failed")
    messages = _found(_run(FOREGROUND), "foreground-result")
    assert any("'Error: subagent run failed\\nPartial output before the run ended:\\npartial one'"
               in m for m in messages)


def test_foreground_result_catches_partial_text_before_the_diagnostic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def swapped(output: Any, stop_reason: str, diagnostic: str | None = None) -> Any:
        result = actors.child.output.tool_result(output, stop_reason, None)
        if diagnostic is not None and result.is_error:
            result = actors.child.output.ToolResult(
                True, result.text + "\nDiagnostic: " + diagnostic)
        return result

    monkeypatch.setattr(actors.child.consumers.turn, "tool_result", swapped)
    messages = _found(_run(FOREGROUND), "foreground-result")
    assert messages and all("SDK foreground tool result" in m for m in messages)
    assert any("child-disposed" in m for m in messages)


def test_log_encoding_catches_a_child_that_ignores_its_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(actors.child.shell, "Encoding", lambda value: Encoding.V2)
    messages = _found(_run("seed-000-max-tokens-partial.toml"), "log-encoding")
    assert messages == [m for m in messages if "spawned to log V1" in m]
    assert len(messages) == 1


def test_the_default_world_reaches_forks_epochs_encodings_and_unfinished_runs(
    default_world: scenario.Scenario,
) -> None:
    seen: set[str] = set()
    for seed in range(1, 21):
        for r in world.run(default_world, seed=seed).trace.records:
            if r.kind == "child.inherited":
                seen.add(r.data["origin"])
            elif r.kind == "child.start":
                seen.add(r.data["encoding"])
            elif r.kind == "child.consumers":
                seen.add(r.data["foreground"]["stopReason"])
                seen.add("fold" if r.data["fold"]["whole"] == r.data["fold"]["incremental"]
                         else "fold disagrees")
    assert {"fork", "earlier-epoch", "v1", "v2", "fold", "completed", "max-tokens", "aborted",
            "error"} <= seen
