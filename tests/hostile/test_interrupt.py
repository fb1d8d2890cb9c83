"""Ctrl-C stops a sweep within a second or two in every mode, with the partial summary and
exit status 130; SIGTERM and SIGKILL of a parallel sweep leave no worker behind; a Dask sweep
whose cluster goes away says so (issue 39)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from sim.explore import pool
from tests.hostile.proc import env, session_processes, start

# Long enough never to finish in a test, short enough to be a legal sweep.
MANY = ["--seeds", "1000000"]


def _started(process: subprocess.Popen[str], seconds: float) -> None:
    """Give the sweep time to start its workers and run some seeds."""
    time.sleep(seconds)
    assert process.poll() is None, process.communicate()


def _stop(args: Sequence[str], sig: int, *, group: bool, wait: float = 4.0
          ) -> tuple[int, str, str, float, list[int]]:
    process = start(args)
    _started(process, wait)
    sent = time.monotonic()
    if group:  # a terminal's Ctrl-C: the whole foreground group
        os.killpg(process.pid, sig)
    else:
        os.kill(process.pid, sig)
    out, err = process.communicate(timeout=30)
    took = time.monotonic() - sent
    time.sleep(0.3)  # workers killed by the kernel with their parent are reaped by now
    left = session_processes(process.pid)
    for pid in left:  # never leave a stray worker to the next test
        os.kill(pid, signal.SIGKILL)
    return process.returncode, out, err, took, left


@pytest.mark.parametrize("mode", [["--jobs", "2"], ["--jobs", "1"], ["--guided", "--jobs", "2"]],
                         ids=["jobs", "serial", "guided"])
@pytest.mark.parametrize("group", [True, False], ids=["group", "parent"])
def test_ctrl_c_stops_a_sweep_with_its_partial_summary(mode: list[str], group: bool) -> None:
    code, out, err, took, left = _stop(
        ["explore", *MANY, *mode, "--mutant", "last-assistant-message"], signal.SIGINT,
        group=group, wait=6.0)
    assert code == 130, err
    assert took < 3.0, took
    assert left == []
    assert "Traceback" not in err
    assert "handoff: interrupted after " in err and " of 1,000,000 seeds" in err, err
    done = int(err.split("interrupted after ")[1].split(" ")[0].replace(",", ""))
    assert out.startswith(f"explored {done} seeds"), out
    if done:  # every violation found so far comes with its repro
        assert "reproduce: handoff replay --seed" in out, out


def test_ctrl_c_json_reports_the_seeds_done() -> None:
    import json

    code, out, _, _, left = _stop(["explore", *MANY, "--jobs", "2", "--json"], signal.SIGINT,
                                    group=True, wait=6.0)
    assert code == 130 and left == []
    doc = json.loads(out)
    assert doc["interrupted"] == {"seeds_done": doc["seeds"], "of": 1_000_000}
    assert len(doc["seed_digests"]) == doc["seeds"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
@pytest.mark.parametrize("mode", [["--jobs", "2"], ["--guided", "--jobs", "2"]],
                         ids=["jobs", "guided"])
def test_killing_a_parallel_sweep_leaves_no_worker(sig: int, mode: list[str]) -> None:
    code, _, _, took, left = _stop(["explore", *MANY, *mode], sig, group=False)
    assert code == -sig
    assert left == [], f"workers outlived their sweep: {left}"
    assert took < 3.0


def test_ctrl_c_stops_shrink_with_exit_130() -> None:
    # A shrink that takes many runs (receipt-by-arrival's first failing seed spends thousands):
    # a quick one could end before the signal and prove nothing.
    process = start(["shrink", "--seed", "39", "--mutant", "receipt-by-arrival",
                     "--max-runs", "100000"])
    try:
        _started(process, 5.0)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "handoff: interrupted"


def test_a_stop_request_ends_a_batch_after_the_seed_in_hand() -> None:
    from sim.cli.args import default_world_path
    from sim.explore.seed import Sweep, run_seeds
    from sim.scenario import load

    spec = Sweep(load(default_world_path()), None, None, None)
    asked = iter([False, False, True])
    done = run_seeds(spec, range(1, 50), stop=lambda: next(asked))
    assert [o.seed for o in done] == [1, 2, 3]


def test_stop_on_interrupt_turns_a_first_sigint_into_a_request() -> None:
    before = signal.getsignal(signal.SIGINT)
    with pool.stop_on_interrupt():
        assert not pool.stop_requested()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert pool.stop_requested()
        with pytest.raises(KeyboardInterrupt):  # a second one: stop now
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) == before


def _dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _dask_available(), reason="dask.distributed is not installed")
def test_a_dask_sweep_that_loses_its_only_worker_says_so(tmp_path: Path) -> None:
    port = 18000 + os.getpid() % 1000
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", str(port),
         "--no-dashboard"], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
         "--no-dashboard"], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    try:
        sweep = start(["explore", "--seeds", "100000", "--dask", address, "--dask-timeout",
                       "3"])
        _started(sweep, 15.0)
        os.killpg(worker.pid, signal.SIGKILL)
        _, err = sweep.communicate(timeout=30)
        assert sweep.returncode == 3, err
        assert "the cluster has had no worker for 3 s after " in err, err
    finally:
        for process in (worker, scheduler):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=10)


@pytest.mark.parametrize("address", ["not-an-address", "tcp://", "http://x:1", "tcp://:8786"])
@pytest.mark.skipif(not _dask_available(), reason="dask.distributed is not installed")
def test_a_malformed_dask_address_is_one_line(address: str) -> None:
    from tests.hostile.proc import handoff

    done = handoff(["explore", "--seeds", "10", "--dask", address], timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a scheduler address" in done.stderr, \
        done.stderr


def test_dask_and_jobs_are_one_or_the_other() -> None:
    from tests.hostile.proc import handoff

    done = handoff(["explore", "--seeds", "10", "--dask", "tcp://127.0.0.1:1", "--jobs", "1000"])
    assert done.returncode == 2
    assert done.stderr == ("handoff: --jobs cannot be used with --dask (the cluster's worker "
                           "threads run the batches)\n")
