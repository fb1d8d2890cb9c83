"""Reference §c9: a yielded batch (or an unfrozen wave) whose every member was killed is consumed
without a wake; `killed-batch-consumed` states it and catches a model that wakes the requester
anyway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actors.states import DeliveryStatus
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS

CONSUMED = "yield-all-members-killed-consumed.toml"


def _run(path: Path, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(path), **kwargs)


def _wakes(result: world.RunResult) -> list[str]:
    return [r.data["key"] for r in result.trace.records if r.kind == "gateway.send"
            and r.data["key"].startswith("announce:requester-settle:")]


def test_a_batch_whose_every_member_was_killed_is_consumed_without_a_wake() -> None:
    result = _run(SCENARIOS / CONSUMED)
    assert result.violations == ()
    assert _wakes(result) == []
    # Killed: never announced, their rows kept pending (issue 34, OpenClaw 2026.9.6).
    assert {r.delivery_status for r in result.runs} == {DeliveryStatus.PENDING}
    assert result.probes.get("batch.consumed-all-killed") == 1


def test_the_oracle_catches_a_wake_of_an_all_killed_batch() -> None:
    result = _run(SCENARIOS / "mutant-killed-batch-woken.toml")
    assert {v.invariant for v in result.violations} == {"killed-batch-consumed"}
    assert _wakes(result) == ["announce:requester-settle:main:agent:main:main:run-1,run-2:yield-1"]
    assert _run(SCENARIOS / "mutant-killed-batch-woken.toml", mutants=[]).violations == ()


def test_a_batch_with_one_member_left_still_wakes(tmp_path: Path) -> None:
    # Only a is killed; b ends ok at 500 s: the batch is not consumed, its wake carries b.
    text = (SCENARIOS / CONSUMED).read_text(encoding="utf-8")
    one = tmp_path / "one-killed.toml"
    one.write_text(text.split("[[timeline]]\nat = 40")[0].rstrip() + "\n\n[expect]\n"
                   'violations = []\n', encoding="utf-8")
    result = _run(one)
    assert result.violations == ()
    assert _wakes(result) == ["announce:requester-settle:main:agent:main:main:run-1,run-2:yield-1"]
    assert "batch.consumed-all-killed" not in result.probes


def test_an_unfrozen_wave_whose_every_member_was_killed_is_consumed_too() -> None:
    # The same settle wake (reference §c9): the mutant's wave wake was missed by the oracle,
    # which read only yielded batches (the mutant was first found at seed 84, not 17).
    wave = SCENARIOS / "wave-all-members-killed-consumed.toml"
    result = _run(wave)
    assert result.violations == ()
    assert _wakes(result) == []
    assert result.probes.get("batch.consumed-all-killed") == 1
    broken = _run(wave, mutants=["killed-batch-woken"])
    assert _wakes(broken) == ["announce:requester-settle:main:agent:main:main:run-1,run-2"]
    assert [v.message for v in broken.violations] == [
        "every member of the wave run-1, run-2 of agent:main:main was killed (the last at "
        "40000 ms), yet its wake announce:requester-settle:main:agent:main:main:run-1,run-2 "
        "was sent at 40000 ms"]
