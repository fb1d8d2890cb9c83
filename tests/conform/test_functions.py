"""The model against the released openclaw package, function by function (``pytest -m
conform``; skipped with one line when Node 24 or the package is not installed, required in
.ci/run). Each check draws at least 2,000 inputs and must end with no undocumented difference."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sim.conform import checks, differences, install
from sim.conform.driver import Driver, DriverError, manifest_path
from sim.conform.functions import CHECKS

pytestmark = pytest.mark.conform


@pytest.fixture(scope="module")
def driver() -> Iterator[Driver]:
    installed = install.find_installed(install.PINNED_OPENCLAW)
    if installed is None:
        pytest.fail(f"openclaw {install.PINNED_OPENCLAW} and Node >= 24.16 are not installed "
                    f"in {install.cache_root()} (run `handoff conform` once)")
    manifest = manifest_path(install.PINNED_OPENCLAW)
    assert manifest is not None
    with Driver(installed, manifest) as running:
        yield running


def test_every_function_of_the_manifest_is_found(driver: Driver) -> None:
    assert driver.request("missing") == []


@pytest.mark.parametrize("check", CHECKS, ids=[check.name for check in CHECKS])
def test_no_undocumented_difference(driver: Driver, check: checks.Check) -> None:
    outcome = checks.run(check, driver, differences.load(), checks.DEFAULT_INPUTS)
    assert outcome.inputs >= checks.DEFAULT_INPUTS
    assert outcome.undocumented == 0, outcome.example


def test_a_function_missing_in_a_version_is_one_line_naming_it(tmp_path: Path) -> None:
    installed = install.find_installed(install.PINNED_OPENCLAW)
    assert installed is not None
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"openclaw": "test", "functions": {
        "formatDurationCompact": {"chunk": "format-duration", "takes": "(ms) -> string"},
        "noSuchFunction": {"chunk": "format-duration", "takes": "()"}}}))
    with Driver(installed, manifest) as running:
        assert running.request("missing") == [
            "openclaw test: function noSuchFunction not found (chunk format-duration-*.mjs)"]
        assert running.request("call", name="formatDurationCompact", args=[61_000]) == "1m1s"
        with pytest.raises(DriverError, match="function noSuchFunction not found"):
            running.request("call", name="noSuchFunction", args=[])


def test_the_command_prints_json_for_machines() -> None:
    done = subprocess.run([sys.executable, "-m", "sim", "conform", "--json", "--inputs", "50",
                           "--check", "backoff", "--check", "idempotency-key"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["openclaw"] == install.PINNED_OPENCLAW
    assert [c["check"] for c in report["checks"]] == ["backoff", "idempotency-key"]
    assert report["undocumented"] == 0 and report["round_trip_ms"] > 0
    from sim.conform.registry import explain

    assert {row["id"] for row in report["differences"]} == {*differences.EXPLAINERS,
                                                            *explain.EXPLAINERS}
    assert report["registry"] is None  # not asked for
