"""Determinism both ways: the same seed gives the same bytes in separate processes with different
PYTHONHASHSEED; different seeds differ; Trio's scheduler is only deterministic once seeded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from sim import determinism
from sim.scenario import Scenario
from sim.world import core as world


def _python(code: str, hashseed: str, extra_env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, **(extra_env or {})}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout


def _handoff(args: list[str], hashseed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    done = subprocess.run([sys.executable, "-m", "sim", *args], env=env, capture_output=True,
                          check=False)
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.stdout


def test_replay_is_byte_identical_across_processes_and_hash_seeds() -> None:
    a = _handoff(["replay", "--seed", "7", "--format", "jsonl"], "1")
    b = _handoff(["replay", "--seed", "7", "--format", "jsonl"], "4242")
    assert a == b
    assert len(a.splitlines()) > 20
    c = _handoff(["replay", "--seed", "8", "--format", "jsonl"], "1")
    assert c != a


def test_different_seeds_give_different_traces(default_world: Scenario) -> None:
    digests = {world.run(default_world, seed=s).trace.digest() for s in range(1, 21)}
    assert len(digests) == 20


def test_same_seed_same_trace_in_one_process(default_world: Scenario) -> None:
    first = world.run(default_world, seed=31)
    second = world.run(default_world, seed=31)
    assert first.trace.records == second.trace.records


# A Trio program whose output depends on the scheduler's batch order: 20 tasks that each record
# their id at 30 checkpoints, plus a cancellation of many tasks at once (which walks a set).
RACY = """
import hashlib, trio
order = []
async def worker(i):
    for _ in range(30):
        order.append(i)
        await trio.lowlevel.checkpoint()
async def sleeper(i):
    try:
        await trio.sleep_forever()
    finally:
        order.append(100 + i)
async def main():
    async with trio.open_nursery() as n:
        for i in range(20):
            n.start_soon(worker, i)
    async with trio.open_nursery() as n:
        for i in range(50):
            n.start_soon(sleeper, i)
        await trio.testing.wait_all_tasks_blocked()
        n.cancel_scope.cancel()
import trio.testing
{setup}
trio.run(main)
print(hashlib.sha256(repr(order).encode()).hexdigest())
"""


def test_seeded_trio_scheduler_is_deterministic_across_processes() -> None:
    code = RACY.format(setup="from sim.determinism import seed_trio_scheduler\n"
                             "seed_trio_scheduler(5)")
    hashes = {_python(code, str(h), {"HYPOTHESIS_NO_PLUGINS": "1"}) for h in (1, 2, 3)}
    assert len(hashes) == 1
    other = RACY.format(setup="from sim.determinism import seed_trio_scheduler\n"
                              "seed_trio_scheduler(6)")
    assert _python(other, "1", {"HYPOTHESIS_NO_PLUGINS": "1"}) not in hashes


def test_unseeded_trio_scheduler_is_not_deterministic() -> None:
    # Without the module, Trio reverses half its batches at random: the same program gives
    # different orders in different processes (this is why the module exists).
    code = RACY.format(setup="")
    hashes = {_python(code, str(h), {"HYPOTHESIS_NO_PLUGINS": "1"}) for h in range(1, 5)}
    assert len(hashes) > 1


def test_an_unchecked_trio_version_is_refused() -> None:
    with pytest.raises(determinism.UnsupportedTrioVersion, match=r"0\.99\.0"):
        determinism.check_trio_version("0.99.0")
    determinism.check_trio_version("0.35.0")


def test_subsystem_generators_are_independent() -> None:
    a = [determinism.rng_for(1, "fault:crash").random() for _ in range(3)]
    b = [determinism.rng_for(1, "fault:crash").random() for _ in range(3)]
    c = [determinism.rng_for(1, "fault:delay").random() for _ in range(3)]
    assert a == b
    assert a != c


def test_the_kernels_trio_peeks_agree_with_trio() -> None:
    """sim.determinism.cancelled and others_runnable read Trio's private state for the kernel's
    hand-off; they must say what Trio's public API says."""
    import math

    import trio

    from sim.determinism import cancelled, others_runnable

    async def main() -> None:
        assert not cancelled()
        with trio.CancelScope() as scope:  # noqa: ASYNC100 (no checkpoint wanted)
            scope.cancel()
            assert cancelled() == (trio.current_effective_deadline() == -math.inf)
            assert cancelled()
            with trio.CancelScope(shield=True):  # noqa: ASYNC100
                assert not cancelled()
        assert not others_runnable()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep_forever)
            assert others_runnable()  # started, not yet run
            nursery.cancel_scope.cancel()

    trio.run(main)
