"""``handoff bench`` runs end to end at tiny sizes (figures are reported, never asserted)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sim.bench import command as bench
from sim.bench.micro import kernel_messages_per_second, trio_messages_per_second
from sim.bench.shrinks import QUICK_SHRINKS
from sim.cli.root import main
from sim.explore.shrinking.shrink import DEFAULT_MAX_RUNS


def test_message_loops_count_what_they_claim() -> None:
    assert trio_messages_per_second(100) > 0
    # The function itself checks one kernel step per message.
    assert kernel_messages_per_second(400) > 0


def test_spread_is_median_min_max() -> None:
    assert bench.spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0}


def test_scale_rows_come_from_clean_runs_in_fresh_processes() -> None:
    rows = bench.scale((10, 20))
    assert [row["children"] for row in rows] == [10, 20]
    for row in rows:
        assert row["violations"] == 0
        assert row["seconds"] > 0
        assert row["peak_mib"] > 0
        # A floor that says the rows come from real runs, not a per-child budget: a child that
        # runs records about eight lines at least (spawn, start, a message, end, send, accept,
        # delivered, cleanup), but a drawn nested spawn whose parent's run already ended is
        # refused and records one (docs/nesting.md). Measured: 10.1 and 12.2 per child for 10
        # and 20 children; ten would sit on the edge of the draws.
        assert row["records"] > 5 * row["children"]
    assert "time_growth" in rows[1]


def test_formatter_rows_make_the_formatter_work() -> None:
    rows = {row["case"]: row for row in bench.formatter(quick=True)}
    assert rows["whole"]["truncated"] == 0 and rows["whole"]["summarized"] == 0
    assert rows["whole"]["output_chars"] > 100_000  # it escaped and copied every result
    assert rows["truncated"]["truncated"] == rows["truncated"]["children"]
    assert rows["summarized"]["summarized"] > 0


def test_quick_json_has_the_spec_keys() -> None:
    result = CliRunner().invoke(main, ["bench", "--quick", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    for key in ("seeds_per_second_per_core", "world_steps_vs_trio_messages",
                "kernel_message_cost_vs_trio", "parallel_efficiency",
                "kernel_only_seeds_per_second", "trio_only_seeds_per_second"):
        figure = doc[key]
        assert isinstance(figure, float) or set(figure) == {"median", "min", "max"}, key
    assert {"children", "seconds", "peak_mib"} <= set(doc["scale"][0])
    assert doc["formatter"]
    assert set(doc["startup"]["help_cpu_seconds"]) == {"median", "min", "max"}
    assert "max_ratio" not in json.dumps(doc)
    # Time to find a bug (SPEC §5), on explore's default world: per mutant, its first failing
    # seed and the kernel steps up to it, counted as the sweep counts them.
    assert doc["detection"]
    for name, row in doc["detection"].items():
        assert set(row) >= {"first_seed", "steps", "cpu_seconds"}, name
        assert row["first_seed"] is not None and row["steps"] > 0, name
    steps = sorted(row["steps"] for row in doc["detection"].values())
    assert doc["detection_steps_max"] == steps[-1]
    assert steps[0] <= doc["detection_steps_median"] <= steps[-1]
    assert doc["steps_per_cpu_second"] > 0
    for key in ("steps_per_seed", "records_per_seed", "choices_per_seed",
                "sql_statements_per_seed"):
        assert doc[key] > 0, key
    # How small a found bug becomes: a few of those first seeds shrunk, each row consistent.
    assert set(doc["shrink"]) == set(QUICK_SHRINKS)
    for name, row in doc["shrink"].items():
        assert row["first_seed"] == doc["detection"][name]["first_seed"], name
        assert 0 < row["records_after"] <= row["records_before"], name
        assert row["ratio"] == round(row["records_after"] / row["records_before"], 3), name
        assert 0 < row["runs"] <= DEFAULT_MAX_RUNS, name
    assert doc["shrink_rows"] == len(QUICK_SHRINKS)
    assert doc["shrink_within_tenth"] == sum(row["ratio"] <= 0.1
                                             for row in doc["shrink"].values())


def test_detection_counts_the_steps_explore_runs() -> None:
    """The steps of a mutant's detection are those of seeds 1..first_seed of a plain sweep."""
    from actors.mutant_catalogue import MUTANTS
    from sim.bench.detect import default_world, detect
    from sim.explore.sweeps import Sweep, run_seed

    mutant = next(iter(MUTANTS))
    row = detect(mutant, cap=3_000)
    spec = Sweep(default_world(), None, (mutant,), None)
    last = row["first_seed"] or row["seeds"]
    outcomes = [run_seed(spec, seed) for seed in range(1, last + 1)]
    assert row["steps"] == sum(o.steps for o in outcomes)
    if row["first_seed"] is not None:
        assert outcomes[-1].violations and not any(o.violations for o in outcomes[:-1])
