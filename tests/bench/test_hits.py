"""The expected-detection measurement (sim/bench/hits.py): its rows are the runs ``detect``
pays for, its arithmetic is steps per hit, and its what-if reweighting keeps or drops seeds
as their draws say."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from sim.bench import hits
from sim.bench.detect import detect
from sim.world.draws.features import FEATURE_SHARE


def test_a_mutants_row_holds_the_runs_detection_pays_for() -> None:
    found = detect("silent-no-reply")
    assert found["first_seed"] is not None
    row = hits.mutant_seeds("silent-no-reply", range(1, found["seeds"] + 1))
    assert min(row["failing"]) == found["first_seed"]
    assert sum(row["steps"]) == found["steps"]
    assert row["failing"][found["first_seed"]] == found["invariant"]


def _data() -> dict[str, Any]:
    """Four seeds: 1 and 2 with the feature "forks" and fault "delay" on, 3 and 4 without."""
    draw = {"children": 8, "spawns": 8, "probes": []}
    draws = {1: {**draw, "steps": 100, "features": ["forks"], "faults": {"delay": 0.25}},
             2: {**draw, "steps": 100, "features": ["forks"], "faults": {"delay": 0.02}},
             3: {**draw, "steps": 300, "features": [], "faults": {}},
             4: {**draw, "steps": 300, "features": [], "faults": {}}}
    table = {"a": {"steps": [100, 100, 300, 300], "failing": {1: "x", 3: "x"}},
             "b": {"steps": [100, 100, 300, 300], "failing": {2: "y"}},
             "c": {"steps": [100, 100, 300, 300], "failing": {}}}
    return {"seeds": [1, 2, 3, 4], "draws": draws, "table": table}


def test_expected_steps_are_steps_per_failing_seed() -> None:
    data = _data()
    got = hits.summary(data["table"], data["seeds"])
    assert got["expected"] == {"a": 400.0, "b": 800.0, "c": math.inf}
    assert got["median"] == 800.0 and got["max"] == math.inf and got["not_hit"] == ["c"]
    only_on = hits.summary(data["table"], data["seeds"], lambda seed: seed <= 2)
    assert only_on["expected"] == {"a": 200.0, "b": 200.0, "c": math.inf}


def test_what_if_reweights_seeds_by_their_draws() -> None:
    data = _data()
    same = hits.what_if(data, feature_share={"forks": FEATURE_SHARE},
                        kind_share={"delay": hits.KIND_SHARE})
    assert same["expected"] == hits.summary(data["table"], data["seeds"])["expected"]
    assert same["effective_seeds"] == pytest.approx(4.0)
    # Every run with forks: only seeds 1 and 2 count.
    forks = hits.what_if(data, feature_share={"forks": 1.0})
    assert forks["expected"]["a"] == 200.0 and forks["steps_per_seed"] == 100.0
    # The delay kind at 0.25 only: seed 2 (0.02) drops out, seeds 3 and 4 keep their weight.
    rates = hits.what_if(data, rates={"delay": {0.25: 1.0}})
    assert rates["expected"]["b"] == math.inf
    assert rates["expected"]["a"] == pytest.approx((4 * 100 + 300 + 300) / (4 + 1))
    by = hits.by_draw(data["table"], data["draws"], data["seeds"])
    assert by["feature:forks"]["median_on"] == 200.0
    assert by["fault:delay"]["mean_steps_off"] == 300.0


def test_the_command_saves_a_measurement_it_can_report(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hits.json"
    assert hits.main(["--seeds", "2", "--mutant", "silent-no-reply", "--out", str(out)]) == 0
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(saved["draws"]) == ["1", "2"]
    assert saved["table"]["silent-no-reply"]["failing"]
    assert hits.main(["--load", str(out), "--compare", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "silent-no-reply | " in printed and "expected median" in printed
