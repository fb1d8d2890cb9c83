"""Parallel sweeps (SIM-9): local workers and a Dask cluster report exactly what a serial sweep
does, seed for seed; the outcome does not depend on the hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources

import pytest
from click.testing import CliRunner

from sim.cli.root import main
from sim.explore import pool
from sim.explore import sweeps as explore
from sim.scenario import Scenario, load


@pytest.fixture(scope="module")
def default_world() -> Scenario:
    return load(str(resources.files("sim").joinpath("default_world.toml")))


def test_batches_cover_the_seeds_in_order_and_last_long_enough() -> None:
    seeds = list(range(1, 2001))
    parts = pool.batches(seeds, 2)
    assert [s for part in parts for s in part] == seeds
    assert len(parts) == 2 * pool.BATCHES_PER_WORKER
    assert min(map(len, parts)) >= pool.MIN_BATCH
    small = pool.batches(list(range(100)), 2)
    assert [len(p) for p in small] == [50, 50]  # one per worker, even
    assert pool.batches([7], 4) == [[7]]


def test_local_workers_match_a_serial_sweep(default_world: Scenario) -> None:
    spec = explore.Sweep(default_world, None, ("fresh-key-after-restart",), None)
    seeds = list(range(1, 121))
    serial = explore.sweep(spec, seeds, jobs=1)
    parallel = explore.sweep(spec, seeds, jobs=2)
    assert parallel == serial
    assert explore.sweep_digest(parallel) == explore.sweep_digest(serial)


def test_the_progress_hears_of_every_seed_from_the_workers(
        default_world: Scenario, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = explore.Sweep(default_world, None, None, None)
    seeds = list(range(1, 41))
    told: list[int] = []
    assert pool.local(spec, seeds, 2, told.append) == explore.sweep(spec, seeds, jobs=1)
    assert sum(told) == len(seeds)
    # A worker counts each seed as it finishes it, not each batch (what the bar reads).
    from multiprocessing import get_context

    done = get_context("fork").Value("q", 0)
    monkeypatch.setattr(pool, "_done", done)
    pool.run_batch(spec, seeds[:5])
    assert done.value == 5  # one count per seed: _count_seed adds one at a time


def _sweep_digest_with_hash_seed(hash_seed: str) -> str:
    code = ("from importlib import resources\n"
            "from sim.explore import sweeps as explore\nfrom sim.scenario import load\n"
            "w = load(str(resources.files('sim').joinpath('default_world.toml')))\n"
            "print(explore.sweep_digest(explore.sweep(explore.Sweep(w, None, None, None, "
            "digests=True), list(range(1, 31)))))\n")
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_outcomes_do_not_depend_on_the_hash_seed() -> None:
    # Dask workers (and any other process) draw their own hash seeds.
    assert _sweep_digest_with_hash_seed("0") == _sweep_digest_with_hash_seed("4242")


def test_dask_cluster_matches_a_serial_sweep(default_world: Scenario) -> None:
    distributed = pytest.importorskip(
        "dask.distributed", reason="dask[distributed] is not installed (pip install "
        "'handoff-sim[dask]')")
    spec = explore.Sweep(default_world, None, ("fresh-key-after-restart",), None, digests=True)
    seeds = list(range(1, 81))
    serial = explore.sweep(spec, seeds, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        remote = explore.sweep(spec, seeds, dask=cluster.scheduler_address)
        via_cli = CliRunner().invoke(main, ["explore", "--seeds", "60", "--mutant",
                                            "fresh-key-after-restart", "--json",
                                            "--dask", cluster.scheduler_address])
    local = CliRunner().invoke(main, ["explore", "--seeds", "60", "--mutant",
                                      "fresh-key-after-restart", "--json", "--jobs", "1"])
    assert via_cli.exit_code == local.exit_code == 1
    assert json.loads(via_cli.stdout)["digest"] == json.loads(local.stdout)["digest"]
    assert [o.seed for o in remote] == seeds
    assert [o.violations for o in remote] == [o.violations for o in serial]
    assert [o.digest for o in remote] == [o.digest for o in serial]
    assert remote == serial
    assert any(o.violations for o in serial)  # the mutant is found, so violations are compared


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found += [int(child) for child in handle.read().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux's /proc")
@pytest.mark.parametrize("signal_number", [15, 9])  # SIGTERM, SIGKILL
def test_workers_end_when_the_sweep_is_killed(signal_number: int) -> None:
    sweep = subprocess.Popen(
        [sys.executable, "-m", "sim", "explore", "--seeds", "100000", "--jobs", "2", "--force"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        workers: list[int] = []
        for _ in range(600):  # until both workers are forked (polls, not a time limit)
            workers = [w for w in _children(sweep.pid) if _alive(w)]
            if len(workers) >= 2:
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert len(workers) >= 2, "the sweep started no workers"
    finally:
        os.kill(sweep.pid, signal_number)
        sweep.wait()
    for _ in range(600):
        if not any(_alive(w) for w in workers):
            break
        subprocess.run(["sleep", "0.1"], check=True)
    assert [w for w in workers if _alive(w)] == []
