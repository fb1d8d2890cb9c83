"""SPEC §4 command line: ``run``, ``explore`` and ``replay``, their JSON documents and exit status.

0: nothing found / all passed; 1: a violation or a failed scenario; 2: bad input, with a clear
one-line message and never a traceback. Most tests drive ``sim.cli.root.main`` in-process with
``CliRunner``; where a separate process matters (a repro command pasted into a shell, replay in a
fresh interpreter with another hash seed) they run ``python -m sim``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from actors.mutant_catalogue import MUTANTS
from sim import scenario
from sim.cli.root import main
from sim.export import FORMATS
from sim.faults.plan import FAULT_KINDS
from sim.world import core as world
from tests.conftest import ROOT, SCENARIOS

# A crash between clearing the claim and saving the evidence makes the restart send again.
MUTANT = "claim-cleared-first"
MUTANT_FAULTS = "crash"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def handoff(args: Sequence[str], hashseed: str = "0") -> subprocess.CompletedProcess[str]:
    """``handoff ARGS`` in a fresh process, from the project root."""
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    return subprocess.run([sys.executable, "-m", "sim", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=120)


def scenario_files() -> list[Path]:
    return sorted(SCENARIOS.rglob("*.toml"))


def line_of(path: Path, text: str) -> int:
    lines = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if line == text]
    assert len(lines) == 1, (path, text, lines)
    return lines[0]


def no_traceback(result: Result) -> None:
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit), result.exception


# -- run -----------------------------------------------------------------------------------------


def test_run_the_suite_passes_and_reports_coverage() -> None:
    result = invoke("run", str(SCENARIOS), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    files = scenario_files()
    assert doc["passed"] == len(files)
    assert doc["failed"] == 0
    assert [row["path"] for row in doc["scenarios"]] == [str(f) for f in files]
    for row, path in zip(doc["scenarios"], files, strict=True):
        loaded = scenario.load(path)
        assert {"path", "name", "passed", "covers", "failure"} <= set(row)
        assert row["name"] == loaded.name
        assert row["passed"] is True
        assert row["failure"] is None
        assert row["covers"] == list(loaded.covers)
        assert row["covers"]


def test_run_in_a_real_process_prints_a_table() -> None:
    done = handoff(["run", "scenarios/"])
    assert done.returncode == 0, done.stderr
    assert f"{len(scenario_files())} passed, 0 failed" in done.stdout
    assert "scenarios/expiry.toml" in done.stdout


def copy_scenarios(folder: Path, names: Sequence[str]) -> list[Path]:
    folder.mkdir(exist_ok=True)
    copies = []
    for name in names:
        copy = folder / name
        shutil.copy(SCENARIOS / name, copy)
        copies.append(copy)
    return copies


BAD_CHILD = """[[sessions]]
key = "agent:main:main"

[[children]]
id = "c1"
outcome = "crashed"
"""


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_one_malformed_scenario_means_nothing_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool) -> None:
    copy_scenarios(tmp_path, ["aborted-child.toml", "expiry.toml"])
    bad = tmp_path / "b-bad.toml"  # sorts between the good ones
    bad.write_text(BAD_CHILD, encoding="utf-8")
    ran: list[Any] = []
    monkeypatch.setattr(world, "run", lambda *a, **k: ran.append(a))
    result = invoke("run", str(tmp_path), *(["--json"] if as_json else []))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"handoff: {bad}:6: children[0].outcome: 'crashed' is not one of: "
                             "ok, error, timeout\n")
    assert ran == []
    no_traceback(result)


def test_one_malformed_scenario_in_a_real_process(tmp_path: Path) -> None:
    good = copy_scenarios(tmp_path, ["aborted-child.toml"])
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_CHILD, encoding="utf-8")
    done = handoff(["run", str(good[0]), str(bad)])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"handoff: {bad}:6: children[0].outcome: 'crashed' is not one of: ok, error, timeout"]


def wrong_expectation(tmp_path: Path) -> Path:
    path = tmp_path / "wrong.toml"
    text = (SCENARIOS / "transient-then-success.toml").read_text(encoding="utf-8")
    assert "received = 1\n" in text
    path.write_text(text.replace("received = 1\n", "received = 2\n"), encoding="utf-8")
    return path


def test_a_wrong_expectation_fails_and_says_why(tmp_path: Path) -> None:
    path = wrong_expectation(tmp_path)
    good = copy_scenarios(tmp_path, ["not-required.toml"])[0]
    result = invoke("run", str(good), str(path), "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert (doc["passed"], doc["failed"]) == (1, 1)
    ok, failed = doc["scenarios"]
    assert (ok["path"], ok["passed"], ok["failure"]) == (str(good), True, None)
    header = line_of(path, "[[expect.children]]")
    assert failed["path"] == str(path)
    assert failed["passed"] is False
    assert failed["failure"] == (f"{path}:{header}: child c1: its requester received it "
                                 "1 time(s), expected 2")


def test_a_wrong_expectation_in_the_table(tmp_path: Path) -> None:
    path = wrong_expectation(tmp_path)
    result = invoke("run", str(path))
    assert result.exit_code == 1
    assert "FAIL" in result.stdout
    assert "expected 2" in result.stdout
    assert result.stdout.rstrip().endswith("0 passed, 1 failed")


def test_an_expected_violation_that_does_not_happen_fails(tmp_path: Path) -> None:
    path = tmp_path / "clean.toml"
    text = (SCENARIOS / "aborted-child.toml").read_text(encoding="utf-8")
    path.write_text(text.replace("[expect]\n", '[expect]\nviolations = ["at-most-once"]\n'),
                    encoding="utf-8")
    result = invoke("run", str(path), "--json")
    assert result.exit_code == 1
    [row] = json.loads(result.stdout)["scenarios"]
    assert row["failure"] == "expected a violation of at-most-once, found none"


# -- explore -------------------------------------------------------------------------------------


def test_explore_the_default_world_finds_nothing() -> None:
    result = invoke("explore", "--seeds", "30", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {"seeds", "violations", "seeds_per_second"} <= set(doc)
    assert doc["seeds"] == 30
    assert doc["violations"] == []
    assert isinstance(doc["seeds_per_second"], float)
    assert doc["seeds_per_second"] > 0


def explore_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = invoke("explore", *args, "--json")
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def mutant_sweeps() -> dict[int, tuple[int, dict[str, Any]]]:
    """The same mutant sweep, serial and over two processes."""
    return {jobs: explore_json("--seeds", "60", "--mutant", MUTANT, "--faults", MUTANT_FAULTS,
                               "--jobs", str(jobs))
            for jobs in (1, 2)}


def test_explore_with_a_mutant_finds_its_violations(
        mutant_sweeps: dict[int, tuple[int, dict[str, Any]]]) -> None:
    code, doc = mutant_sweeps[2]
    assert code == 1
    assert doc["seeds"] == 60
    violations = doc["violations"]
    assert any(v["invariant"] == "evidence-before-claim" for v in violations)
    for v in violations:
        assert v["repro"] == (f"handoff replay --seed {v['seed']} --mutant {MUTANT} "
                              f"--faults {MUTANT_FAULTS} --format text")


def test_explore_without_the_mutant_finds_nothing() -> None:
    code, doc = explore_json("--seeds", "60", "--faults", MUTANT_FAULTS)
    assert code == 0
    assert doc["violations"] == []


def test_parallel_sweep_reports_exactly_what_a_serial_one_does(
        mutant_sweeps: dict[int, tuple[int, dict[str, Any]]]) -> None:
    (serial_code, serial), (parallel_code, parallel) = mutant_sweeps[1], mutant_sweeps[2]
    assert serial["jobs"] == 1
    assert parallel["jobs"] == 2
    assert serial_code == parallel_code == 1
    assert serial["violations"] == parallel["violations"]
    assert serial["failing_seeds"] == parallel["failing_seeds"]


def repros(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each distinct repro command with the violations it must reproduce."""
    by_command: dict[str, list[dict[str, Any]]] = {}
    for v in doc["violations"]:
        by_command.setdefault(v["repro"], []).append(v)
    return by_command


def violation_line(v: dict[str, Any]) -> str:
    return f"violation: {v['invariant']} ({v['requirement']}): {v['message']} [records "


def assert_reproduces(code: int, stderr: str, violations: list[dict[str, Any]]) -> None:
    assert code == 1, stderr
    reported = [line for line in stderr.splitlines() if line.startswith("violation: ")]
    assert len(reported) == len(violations)
    for v, line in zip(violations, reported, strict=True):
        assert line.startswith(violation_line(v)), (line, v)


def test_every_repro_command_reproduces_its_violations(
        mutant_sweeps: dict[int, tuple[int, dict[str, Any]]]) -> None:
    for command, violations in repros(mutant_sweeps[2][1]).items():
        argv = shlex.split(command)
        assert argv[0] == "handoff"
        result = invoke(*argv[1:])
        assert_reproduces(result.exit_code, result.stderr, violations)


def test_repro_commands_reproduce_in_a_fresh_process(
        mutant_sweeps: dict[int, tuple[int, dict[str, Any]]]) -> None:
    commands = list(repros(mutant_sweeps[2][1]).items())
    for command, violations in (commands[0], commands[-1]):
        done = handoff(shlex.split(command)[1:], hashseed="12345")
        assert_reproduces(done.returncode, done.stderr, violations)


@pytest.mark.slow
def test_every_repro_command_reproduces_in_a_fresh_process(
        mutant_sweeps: dict[int, tuple[int, dict[str, Any]]]) -> None:
    for command, violations in repros(mutant_sweeps[2][1]).items():
        done = handoff(shlex.split(command)[1:], hashseed="777")
        assert_reproduces(done.returncode, done.stderr, violations)


def test_repro_names_the_explored_scenario() -> None:
    path = SCENARIOS / "mutant-fresh-key-after-restart.toml"
    code, doc = explore_json("--scenario", str(path), "--seeds", "3", "--jobs", "1")
    assert code == 1
    assert doc["violations"]
    for command, violations in repros(doc).items():
        assert command == f"handoff replay --seed {violations[0]['seed']} --scenario {path} " \
                          "--format text"
        result = invoke(*shlex.split(command)[1:])
        assert_reproduces(result.exit_code, result.stderr, violations)


# -- bad input -----------------------------------------------------------------------------------

NOT_JSON = "this is { not json\n"
BAD_ARGS: list[tuple[str, list[str], str]] = [
    ("unknown-mutant", ["explore", "--mutant", "nope"],
     f"handoff: --mutant: unknown mutant 'nope' (known: {', '.join(MUTANTS)})"),
    ("unknown-fault", ["explore", "--faults", "crash,nope"],
     f"handoff: --faults: unknown fault kind 'nope' (known: {', '.join(FAULT_KINDS)}, 'all' or "
     "'none')"),
    ("zero-seeds", ["explore", "--seeds", "0"],
     "handoff: --seeds: 0 is not in the range 1<=x<=10000000."),
    ("too-many-seeds", ["explore", "--seeds", "1000000000000"],
     "handoff: --seeds: 1000000000000 is not in the range 1<=x<=10000000."),
    ("seed-past-the-largest", ["explore", "--start", str(2**63 - 5), "--seeds", "10"],
     f"handoff: --start: the sweep would pass the largest seed, {2**63 - 1}"),
    ("no-such-option", ["explore", "--seedz", "3"],
     "handoff: --seedz: no such option (did you mean --seed, --seeds?)"),
    ("no-such-command", ["explode"],
     "handoff: no such command 'explode' (see handoff --help)"),
    ("seeds-and-seed", ["explore", "--seeds", "5", "--seed", "3"],
     "handoff: --seeds and --seed cannot be used together"),
    ("zero-jobs", ["explore", "--jobs", "0"],
     "handoff: --jobs: 0 is not in the range 1<=x<=1024."),
    ("explore-bad-world", ["explore", "--scenario", "{tmp}/bad.toml"],
     "handoff: {tmp}/bad.toml:6: children[0].outcome: 'crashed' is not one of: ok, error, timeout"),
    ("replay-missing-scenario", ["replay", "--scenario", "{tmp}/missing.toml"],
     "handoff: {tmp}/missing.toml: cannot read: No such file or directory"),
    ("replay-unknown-mutant", ["replay", "--seed", "1", "--mutant", "nope"],
     f"handoff: --mutant: unknown mutant 'nope' (known: {', '.join(MUTANTS)})"),
    ("schedule-not-json", ["replay", "--schedule", "{tmp}/not.json"],
     "handoff: {tmp}/not.json:1: invalid JSON: Expecting value"),
    ("schedule-missing", ["replay", "--schedule", "{tmp}/missing.json"],
     "handoff: {tmp}/missing.json: cannot read: No such file or directory"),
    ("schedule-not-a-schedule", ["replay", "--schedule", "{tmp}/empty.json"],
     "handoff: {tmp}/empty.json:1: subsystems: is missing"),
    ("schedule-short-choice", ["replay", "--schedule", "{tmp}/short.json"],
     "handoff: {tmp}/short.json:1: choices[0]: must be [subsystem, options, index], three "
     "integers, not [0, 2]"),
    ("schedule-unknown-mutant", ["replay", "--schedule", "{tmp}/mutant.json"],
     f"handoff: {{tmp}}/mutant.json:1: mutants[0]: unknown mutant 'nope' "
     f"(known: {', '.join(MUTANTS)})"),
    ("schedule-out-nowhere", ["replay", "--seed", "1", "--schedule-out", "/nonexistent/x.json"],
     "handoff: --schedule-out: /nonexistent/x.json: cannot write: no such folder '/nonexistent'"),
    ("schedule-unknown-strategy", ["replay", "--schedule", "{tmp}/strategy.json"],
     "handoff: {tmp}/strategy.json:1: strategy: 'chaos' is not one of: random, pct, fifo"),
    ("schedule-bad-choice", ["replay", "--schedule", "{tmp}/choice.json"],
     "handoff: {tmp}/choice.json:1: choices[1]: subsystem 1 is not an index into subsystems "
     "(0..0)"),
    ("schedule-not-text", ["replay", "--schedule", "{tmp}/binary.json"],
     "handoff: {tmp}/binary.json:1: not UTF-8 text: invalid start byte"),
    ("schedule-and-seed", ["replay", "--seed", "3", "--schedule", "{tmp}/strategy.json"],
     "handoff: --seed and --schedule cannot be used together (the schedule has its seed)"),
    ("schedule-and-strategy", ["replay", "--strategy", "fifo", "--schedule", "{tmp}/choice.json"],
     "handoff: --strategy and --schedule cannot be used together "
     "(the schedule has its strategy)"),
    ("unwritable-trace-out", ["replay", "--seed", "1", "--trace-out", "{tmp}/no/such/t.txt"],
     "handoff: --trace-out: {tmp}/no/such/t.txt: cannot write: no such folder '{tmp}/no/such'"),
    ("unknown-format", ["replay", "--seed", "1", "--format", "svg"],
     "handoff: --format: 'svg' is not one of "
     f"{', '.join(repr(f) for f in FORMATS)}."),
    ("run-missing-path", ["run", "{tmp}/nowhere"],
     "handoff: {tmp}/nowhere: no such file or folder"),
    ("run-empty-folder", ["run", "{tmp}/empty"],
     "handoff: no scenario files (*.toml) in {tmp}/empty"),
]


@pytest.fixture
def bad_inputs(tmp_path: Path) -> Path:
    (tmp_path / "bad.toml").write_text(BAD_CHILD, encoding="utf-8")
    (tmp_path / "not.json").write_text(NOT_JSON, encoding="utf-8")
    (tmp_path / "empty.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "strategy.json").write_text(json.dumps(
        {"seed": 1, "strategy": "chaos", "versions": {}, "subsystems": [], "choices": []}),
        encoding="utf-8")
    (tmp_path / "choice.json").write_text(json.dumps(
        {"seed": 1, "strategy": "random", "versions": {}, "subsystems": ["schedule"],
         "choices": [[0, 2, 1], [1, 2, 0]]}), encoding="utf-8")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe{}")
    (tmp_path / "short.json").write_text(json.dumps(
        {"seed": 1, "strategy": "random", "versions": {}, "subsystems": ["schedule"],
         "choices": [[0, 2]]}), encoding="utf-8")
    (tmp_path / "mutant.json").write_text(json.dumps(
        {"seed": 1, "strategy": "random", "versions": {}, "mutants": ["nope"], "subsystems": [],
         "choices": []}), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.mark.parametrize(("args", "message"), [(a, m) for _, a, m in BAD_ARGS],
                         ids=[name for name, _, _ in BAD_ARGS])
def test_bad_input_exits_2_with_one_clear_line(
        bad_inputs: Path, args: list[str], message: str) -> None:
    result = invoke(*(a.replace("{tmp}", str(bad_inputs)) for a in args))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    # One style for every error, click's own usage errors included.
    assert result.stderr == message.replace("{tmp}", str(bad_inputs)) + "\n"
    no_traceback(result)


def test_bad_input_in_a_real_process_has_no_traceback() -> None:
    done = handoff(["explore", "--mutant", "nope"])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (f"handoff: --mutant: unknown mutant 'nope' "
                           f"(known: {', '.join(MUTANTS)})\n")


# -- replay --------------------------------------------------------------------------------------


def test_replaying_a_schedule_reproduces_the_trace_byte_for_byte(tmp_path: Path) -> None:
    schedule, first, second = tmp_path / "s.json", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    recorded = handoff(["replay", "--seed", "7", "--schedule-out", str(schedule),
                        "--trace-out", str(first), "--format", "jsonl"], hashseed="1")
    assert recorded.returncode in (0, 1), recorded.stderr
    doc = json.loads(schedule.read_text(encoding="utf-8"))
    assert doc["seed"] == 7
    assert len(doc["choices"]) > 20
    replayed = handoff(["replay", "--schedule", str(schedule), "--trace-out", str(second),
                        "--format", "jsonl"], hashseed="2")
    assert replayed.returncode == recorded.returncode
    assert second.read_bytes() == first.read_bytes()
    assert replayed.stderr == recorded.stderr


def test_replaying_a_schedule_in_process_text_format(tmp_path: Path) -> None:
    schedule = tmp_path / "s.json"
    recorded = invoke("replay", "--seed", "11", "--mutant", MUTANT, "--faults", MUTANT_FAULTS,
                      "--schedule-out", str(schedule))
    # The schedule records its mutants and fault kinds: it replays without repeating them.
    replayed = invoke("replay", "--schedule", str(schedule))
    assert recorded.stdout
    assert replayed.stdout == recorded.stdout
    assert replayed.exit_code == recorded.exit_code == 1
    refused = invoke("replay", "--schedule", str(schedule), "--mutant", MUTANT)
    assert refused.exit_code == 2
    assert "cannot be used with --schedule" in refused.stderr


def recorded_schedule(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "s.json"
    result = invoke("replay", "--seed", "7", "--schedule-out", str(path))
    assert result.exit_code in (0, 1), result.output
    return path, json.loads(path.read_text(encoding="utf-8"))


def replay_tampered(tmp_path: Path, doc: dict[str, Any]) -> tuple[Path, Result]:
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, invoke("replay", "--schedule", str(path))


def test_a_tampered_schedule_diverges(tmp_path: Path) -> None:
    _, doc = recorded_schedule(tmp_path)
    step = 3
    sub, n, _ = doc["choices"][step]
    doc["choices"][step] = [sub, n + 1, 0]
    path, result = replay_tampered(tmp_path, doc)
    assert result.exit_code == 1
    assert result.stdout == ""
    name = doc["subsystems"][sub]
    assert result.stderr == (f"handoff: replay of {path}: schedule diverged at step {step}: "
                             f"recorded a {name} choice among {n + 1}, "
                             f"the run asked for a {name} choice among {n}\n")
    no_traceback(result)


def test_a_truncated_schedule_diverges(tmp_path: Path) -> None:
    _, doc = recorded_schedule(tmp_path)
    sub = doc["choices"][4][0]
    doc["choices"] = doc["choices"][:4]
    path, result = replay_tampered(tmp_path, doc)
    assert result.exit_code == 1
    assert result.stderr == (f"handoff: replay of {path}: schedule diverged at step 4: the "
                             f"recorded schedule ended; wanted a {doc['subsystems'][sub]} "
                             "choice\n")


def test_a_schedule_with_choices_left_over_diverges(tmp_path: Path) -> None:
    _, doc = recorded_schedule(tmp_path)
    steps = len(doc["choices"])
    doc["choices"] += [[0, 2, 1]] * 3
    path, result = replay_tampered(tmp_path, doc)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"handoff: replay of {path}: schedule diverged at step {steps}: the run ended with 3 "
        "recorded choice(s) left")


def test_trace_out_jsonl_is_one_record_per_line(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    result = invoke("replay", "--seed", "5", "--trace-out", str(out), "--format", "jsonl")
    assert result.exit_code in (0, 1), result.output
    assert result.stdout == ""
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) > 20
    assert f"seed 5: {len(lines)} records" in result.stderr
    records = [json.loads(line) for line in lines]
    for seq, record in enumerate(records):
        assert set(record) == {"seq", "t_ms", "actor", "kind", "data"}
        assert record["seq"] == seq
        assert isinstance(record["t_ms"], int)
        assert isinstance(record["actor"], str) and record["actor"]
        assert isinstance(record["kind"], str) and record["kind"]
        assert isinstance(record["data"], dict)
    times = [r["t_ms"] for r in records]
    assert times == sorted(times)
    assert records[0]["kind"] == "world.start"
    assert records[-1]["kind"] == "world.end"


def test_check_determinism_passes_on_the_model() -> None:
    result = invoke("explore", "--seeds", "6", "--jobs", "1", "--check-determinism", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["divergences"] == []


def test_check_determinism_reports_the_first_diverging_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A leak that survives between runs in one process (as a module-level counter would).
    import itertools

    from actors.store.durable import RunStore

    counter = itertools.count(1)
    monkeypatch.setattr(RunStore, "next_run_id", lambda self: f"run-{next(counter)}")
    result = invoke("explore", "--seed", "3", "--jobs", "1", "--check-determinism", "--json")
    assert result.exit_code == 1
    divergence = json.loads(result.stdout)["divergences"][0]
    assert divergence["seed"] == 3
    assert divergence["first"] != divergence["second"]
    assert '"kind":"spawn"' in divergence["first"]


# -- a model exception is a finding, not a dead sweep ---------------------------------------------


def _crash_on_seed(monkeypatch: pytest.MonkeyPatch, bad_seed: int) -> None:
    """A model bug that strikes one seed as its world starts (inherited by forked sweep
    workers; a sweep's seeds share a Trio run, sim/world/batch.py, so not in ``world.run``)."""
    real_main = world.World.main

    async def main(self: Any) -> None:
        if self.seed == bad_seed:
            from actors.delivery.table import DeliveryCore

            raise ZeroDivisionError(f"boom in {DeliveryCore.__name__}")
        await real_main(self)

    monkeypatch.setattr(world.World, "main", main)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_model_exception_is_a_finding_for_its_seed(
        monkeypatch: pytest.MonkeyPatch, jobs: str) -> None:
    _crash_on_seed(monkeypatch, 30)
    result = invoke("explore", "--seeds", "60", "--jobs", jobs, "--json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["seeds"] == 60
    [finding] = doc["violations"]
    assert finding["seed"] == 30
    assert finding["invariant"] == "crash"
    assert finding["message"].startswith("the model raised ZeroDivisionError: boom in "
                                         "DeliveryCore (raised at tests/cli/test_cli.py:")
    assert finding["repro"] == "handoff replay --seed 30 --format text"
    again = invoke(*shlex.split(finding["repro"])[1:])
    assert again.exit_code == 1
    assert again.stderr.startswith("violation: crash (SIM-10): the model raised "
                                   "ZeroDivisionError")
    no_traceback(again)


def test_check_determinism_says_what_it_checked() -> None:
    result = invoke("explore", "--seeds", "4", "--jobs", "1", "--check-determinism")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "4 seeds checked twice, 0 divergences"


def test_repro_lines_are_never_wrapped(tmp_path: Path) -> None:
    # A long path makes the repro line far wider than 80 columns; piped output keeps it whole.
    folder = tmp_path / ("a-rather-long-folder-name-" * 4)
    folder.mkdir()
    path = folder / "mutant-fresh-key-after-restart.toml"
    shutil.copy(SCENARIOS / path.name, path)
    result = invoke("explore", "--scenario", str(path), "--seeds", "3", "--jobs", "1")
    assert result.exit_code == 1
    repros = [line for line in result.stdout.splitlines() if "reproduce:" in line]
    assert repros
    for line in repros:
        assert line.startswith("  reproduce: handoff replay --seed ")
        assert line.endswith(f"--scenario {path} --format text")


def test_run_table_rows_are_never_wrapped(tmp_path: Path) -> None:
    folder = tmp_path / ("another-long-folder-name-" * 4)
    [copy] = copy_scenarios(folder, ["expiry.toml"])
    result = invoke("run", str(copy))
    assert result.exit_code == 0, result.output
    assert any(str(copy) in line for line in result.stdout.splitlines())


# -- schedules are self-contained -----------------------------------------------------------------


def test_a_schedule_replays_its_scenario_with_no_other_flag(tmp_path: Path) -> None:
    path = tmp_path / "mutant.toml"
    shutil.copy(SCENARIOS / "mutant-fresh-key-after-restart.toml", path)
    schedule = tmp_path / "s.json"
    recorded = invoke("replay", "--scenario", str(path), "--schedule-out", str(schedule))
    assert recorded.exit_code == 1, recorded.output
    doc = json.loads(schedule.read_text(encoding="utf-8"))
    assert doc["scenario"]["path"] == str(path)
    assert doc["scenario"]["text"] == path.read_text(encoding="utf-8")
    path.unlink()  # the schedule needs nothing else
    replayed = invoke("replay", "--schedule", str(schedule))
    assert replayed.exit_code == 1
    assert replayed.stdout == recorded.stdout
    assert replayed.stderr == recorded.stderr


def test_a_different_scenario_given_with_a_schedule_is_refused(tmp_path: Path) -> None:
    schedule = tmp_path / "s.json"
    recorded = invoke("replay", "--scenario", str(SCENARIOS / "expiry.toml"),
                      "--schedule-out", str(schedule))
    assert recorded.exit_code == 0, recorded.output
    same = invoke("replay", "--schedule", str(schedule), "--scenario",
                  str(SCENARIOS / "expiry.toml"))
    assert same.exit_code == 0
    other = SCENARIOS / "aborted-child.toml"
    refused = invoke("replay", "--schedule", str(schedule), "--scenario", str(other))
    assert refused.exit_code == 2
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"handoff: --scenario: {other} is not the scenario {schedule} was "
                           f"recorded from ({SCENARIOS / 'expiry.toml'}): line ")
    assert line.endswith("leave out --scenario to replay the recorded one")


def test_an_edited_embedded_scenario_is_refused(tmp_path: Path) -> None:
    _, doc = recorded_schedule(tmp_path)
    doc["scenario"]["text"] = doc["scenario"]["text"].replace("children = 8", "children = 9")
    tampered, result = replay_tampered(tmp_path, doc)
    assert result.exit_code == 2
    assert result.stderr == (f"handoff: {tampered}:1: scenario.sha256: does not match the "
                             "embedded scenario text (the schedule was edited)\n")


def test_a_schedule_without_a_scenario_replays_the_default_world(tmp_path: Path) -> None:
    _, doc = recorded_schedule(tmp_path)
    doc["scenario"] = None
    _, result = replay_tampered(tmp_path, doc)
    assert result.exit_code in (0, 1)
    assert "seed 7:" in result.stderr


def test_schedule_out_to_nowhere_fails_before_running() -> None:
    result = invoke("replay", "--seed", "1", "--schedule-out", "/nonexistent/x.json")
    assert result.exit_code == 2
    assert result.stdout == ""  # no trace printed
    assert result.stderr == ("handoff: --schedule-out: /nonexistent/x.json: cannot write: "
                             "no such folder '/nonexistent'\n")
