"""``[expect] reaches``: the moments (code probes) a scenario's run must hit, so a saved run whose
replay a later change moved off its timeline fails ("stale") instead of passing vacuously."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner, Result

from actors.errors import InputError
from actors.probes import PROBES
from sim import scenario
from sim.cli.root import main
from sim.expect import failures, unreached
from sim.scenario.write import dumps
from sim.world import core as world
from tests.conftest import ROOT, SCENARIOS

REGRESSIONS = SCENARIOS / "regressions"
ONE_CHILD = textwrap.dedent("""\
    [[sessions]]
    key = "agent:main:main"
    [[children]]
    id = "a"
    reply = "done"
    [expect]
    """)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# -- loading ---------------------------------------------------------------------------------------


def test_reaches_loads_in_the_files_order_with_its_line() -> None:
    text = ONE_CHILD + 'violations = []\nreaches = ["wave.wake", "delivery.expiry"]\n'
    loaded = scenario.loads(text, "r.toml")
    assert loaded.expect.reaches == ("wave.wake", "delivery.expiry")
    assert loaded.expect.reaches_line == 8
    assert scenario.loads(ONE_CHILD, "r.toml").expect.reaches == ()


@pytest.mark.parametrize(("value", "message"), [
    ('["wave.restart-while-dispatchin"]',
     "expect.reaches[0]: unknown probe 'wave.restart-while-dispatchin' (the probes are declared "
     "in actors/probes.py; did you mean 'wave.restart-while-dispatching'?)"),
    ('["meteor"]', "expect.reaches[0]: unknown probe 'meteor' (the probes are declared in "
                   "actors/probes.py)"),
    ('["wave.wake", "wave.wake"]', "expect.reaches[1]: probe 'wave.wake' is named twice"),
    ('["wave.wake", 3]', "expect.reaches[1]: must be a string, not an integer"),
    ('"wave.wake"', "expect.reaches: must be an array, not a string"),
    ("[]", "expect.reaches: must not be empty"),
], ids=["near-miss", "unknown", "twice", "not-a-string", "not-an-array", "empty"])
def test_a_bad_reaches_is_one_located_line(value: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        scenario.loads(ONE_CHILD + f"reaches = {value}\n", "r.toml")
    assert str(caught.value) == f"r.toml:7: {message}"


def test_run_refuses_a_bad_reaches_with_exit_2_and_runs_nothing(tmp_path: Path) -> None:
    good = tmp_path / "a-good.toml"
    good.write_text(ONE_CHILD, encoding="utf-8")
    bad = tmp_path / "b-bad.toml"
    bad.write_text(ONE_CHILD + 'reaches = ["delivery.expiri"]\n', encoding="utf-8")
    result = invoke("run", str(tmp_path))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"handoff: {bad}:7: expect.reaches[0]: unknown probe "
                             "'delivery.expiri' (the probes are declared in actors/probes.py; "
                             "did you mean 'delivery.expiry'?)\n")


def test_reaches_survives_being_written_back() -> None:
    loaded = scenario.load(REGRESSIONS / "wave-frozen-before-crash-seed-1119.toml")
    assert loaded.expect.reaches == ("wave.restart-while-dispatching", "wave.joined-late")
    assert scenario.loads(dumps(loaded), loaded.path) == loaded


# -- judging a run ---------------------------------------------------------------------------------


def test_a_hand_written_scenario_fails_when_its_run_misses_a_moment(tmp_path: Path) -> None:
    path = tmp_path / "one.toml"
    path.write_text(ONE_CHILD + 'reaches = ["route.internal", "delivery.expiry"]\n',
                    encoding="utf-8")
    assert "route.internal" in world.run(scenario.load(path)).probes
    result = invoke("run", str(path), "--json")
    assert result.exit_code == 1
    row = json.loads(result.stdout)["scenarios"][0]
    assert row["unreached"] == ["delivery.expiry"]
    assert row["failure"].startswith(f"{path}:7: expect.reaches: stale: the run never reached "
                                     "delivery.expiry. ")
    path.write_text(ONE_CHILD + 'reaches = ["route.internal"]\n', encoding="utf-8")
    result = invoke("run", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["scenarios"][0]["unreached"] == []


def test_every_regression_file_states_the_moments_its_run_reaches() -> None:
    files = sorted(REGRESSIONS.glob("*.toml"))
    # 4, then 13 from issue 38, 13 of its wake / batch / blocked family past seed 2,000, 1 from
    # issue 36, then 10 from issue 38's second round, 2 from its third, 1 from issue 35 (seed 743),
    # 29 from stop 43's sweep past seed 20,000 (84662; 30564, 28414, 85684, 59278; 49388,
    # 50495, 47522, 67601, 83741; 11 of the retries family; 8 of the retention / archive /
    # redrive family), less 13065's (now a recorded trace: tests/invariants/traces), 2 of
    # stop 44's workload edges (a yield batch's wake held by its members, issue 38 item 5), and
    # 6 of stop 44's sweep past seed 2,000 (11263; 6241: a wake taken visibly, its replay
    # refused; 28862, 35745, 34975: waves and released wakes; 20305: an older receipt carried),
    # less 49067's (stop 45: a private try's refusal is answered now; a recorded trace), and
    # 5 of stop 45's sweep past 20,000 (77937: a lone wave whose first answer no live process
    # heard; 82528: a key confirmed twice, its mirror recorded once; 95668, 59432, 46346: a
    # replay refused for good, a batch closed by its deferral limit, a redriven public sibling)
    assert len(files) == 85
    result = invoke("run", *map(str, files), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    for path, row in zip(files, doc["scenarios"], strict=True):
        assert scenario.load(path).expect.reaches, path
        assert row["passed"] and row["unreached"] == [], row


# One draw more at the front of one subsystem's choices (as a new draw in the world would add):
# the saved run then leaves the timeline its file keeps. Measured against the oracles as they
# were before each fix (see the report in scenarios/regressions/README.md): with these shifts
# the old oracle no longer misreads the run, so the file would pass without testing anything.
STALE = {
    "wave-frozen-before-crash-seed-1119.toml": (
        "workload", ["wave.restart-while-dispatching", "wave.joined-late"], []),
    "batch-owns-correction-seed-2362.toml": (
        "workload:wide", ["delivery.correction-handed-to-batch",
                          "batch.gave-up-corrected-member"], []),
    # The mutant files expect their violations; a shifted crash still breaks at-most-once but
    # no longer after the restart the file was saved for.
    "fresh-key-after-restart-seed-4-at-most-once.toml": (
        "fault:crash", ["delivery.restart-before-first-attempt"], []),
    "last-assistant-message-seed-251-output-rule.toml": (
        "workload", ["child.token-limit-empty-message", "child.no-output"],
        ["expected a violation of output-rule, found none"]),
}


@pytest.mark.parametrize("name", sorted(STALE))
def test_a_regression_file_moved_off_its_timeline_fails_as_stale(tmp_path: Path,
                                                                  name: str) -> None:
    stream, missing, other = STALE[name]
    saved = scenario.load(REGRESSIONS / name)
    assert saved.replay is not None
    shifted = tuple((subsystem, (0, *values) if subsystem == stream else values)
                    for subsystem, values in saved.replay)
    assert shifted != saved.replay
    path = tmp_path / name
    path.write_text(dumps(attrs.evolve(saved, replay=shifted)), encoding="utf-8")
    result = invoke("run", str(path), "--json")
    assert result.exit_code == 1, result.output
    row = json.loads(result.stdout)["scenarios"][0]
    assert row["unreached"] == missing
    line = next(n for n, text in enumerate(path.read_text().split("\n"), start=1)
                if text.startswith("reaches = "))
    refresh = " ".join(["handoff shrink --seed", str(saved.seed),
                        *(f"--mutant {m}" for m in saved.mutants), "--save", str(path)])
    stale = (f"{path}:{line}: expect.reaches: stale: the run never reached {', '.join(missing)}. "
             "A change to the world's draws or to the model has moved its replay off the "
             "timeline this file keeps, so it no longer tests it. Refresh it: "
             f"{refresh} (in the world it was found in, see its description), or re-aim its "
             "[replay.choices]")
    assert row["failure"].split("; ")[:len(other)] == other
    assert stale in row["failure"]
    # The table names it too.
    table = invoke("run", str(path))
    assert table.exit_code == 1
    assert "stale" in table.stdout


def test_every_declared_probe_is_a_valid_reach() -> None:
    names = list(PROBES)
    text = ONE_CHILD + "reaches = [" + ", ".join(f'"{n}"' for n in names) + "]\n"
    assert scenario.loads(text).expect.reaches == tuple(names)


# -- every saved run keeps its moments (issue 38 item 4) -------------------------------------------


def _saved_runs() -> list[Path]:
    """The files of scenarios/ and findings/ that replay recorded choices (``[replay.choices]``,
    as ``handoff shrink --save`` and ``explore --save-failures`` write them from a seed's
    choices), whatever they expect: one that expects no violation would pass vacuously once a
    change moved its replay off its timeline, and one that expects a violation (a mutant's)
    could still find it there, on another timeline than the one it keeps."""
    found = []
    for path in sorted([*SCENARIOS.rglob("*.toml"), *(ROOT / "findings").rglob("*.toml")]):
        replay = scenario.load(path).replay
        # A hand-written file whose every replayed choice is 0 (``jitter = [0]``: the backoffs
        # without jitter, issue 34) keeps the default timeline itself, not a recorded one.
        if replay is not None and any(any(values) for _, values in replay):
            found.append(path)
    return found


def test_every_saved_run_names_the_moments_it_keeps() -> None:
    missing = [str(p.relative_to(ROOT)) for p in _saved_runs()
               if not scenario.load(p).expect.reaches]
    assert missing == []
    assert len(_saved_runs()) >= 30
    assert any(scenario.load(p).expect.violations for p in _saved_runs())


@pytest.mark.parametrize("path", _saved_runs(), ids=lambda p: p.name)
def test_every_saved_run_fails_as_stale_off_its_timeline(path: Path) -> None:
    """Its replay with every choice back to the default (as a change that moved every draw
    would leave it) misses one of its moments: ``handoff run`` then fails it as stale (also a
    file that expects a violation, whether or not the default timeline still shows one)."""
    saved = scenario.load(path)
    assert saved.replay is not None
    moved = attrs.evolve(saved, replay=tuple((subsystem, ()) for subsystem, _ in saved.replay))
    result = world.run(moved)
    assert unreached(result), f"{path.name}: the default timeline still reaches all its moments"
    assert any("expect.reaches: stale" in problem for problem in failures(result))
