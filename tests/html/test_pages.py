"""What the timeline page is built from, checked without a browser (issue 37): the choices made
before each record (a branch from there repeats the run up to it), the bars of runs and
attempts, the ends of one instant's hand-offs, two runs aligned with their first difference,
and the sweep report's fault rates, grouped messages and unshrunk pages."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim import scenario
from sim.cli.root import main
from sim.html import runs
from sim.html.compare import first_difference
from sim.html.timeline import decode, embedded
from sim.world import core as world
from sim.world.branch_points import run_with_branch_points
from tests.conftest import DEFAULT_WORLD
from tests.html.test_export_html import check_self_contained


def _observed(records: list) -> list:  # world.start names the seed; the rest is what happened
    return [(r.t_ms, r.actor, r.kind, r.data) for r in records[1:]]


def test_a_branch_at_a_records_count_repeats_the_run_up_to_that_record() -> None:
    sc = scenario.load(DEFAULT_WORLD)
    plain = world.run(sc, seed=7)
    result, steps = run_with_branch_points(sc, seed=7)
    assert result.trace.digest() == plain.trace.digest()  # counting changes nothing
    assert len(steps) == len(result.trace) and steps == sorted(steps)
    assert steps[-1] <= len(result.schedule.choices)
    for n in (40, 150, len(steps) - 5):
        for other in (1, 99):
            branch = world.run(sc, seed=other, replay=result.schedule, replay_steps=steps[n])
            assert _observed(branch.trace.records[:n + 1]) == _observed(
                result.trace.records[:n + 1])


def test_bars_run_from_start_to_end_and_attempts_to_their_answer() -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    records = result.trace.records
    doc = embedded(_page(result))
    lanes = [doc["S"][name] for name, _ in doc["lanes"]]
    bars = runs.bars(records, {actor: i for i, actor in enumerate(lanes)})
    starts = {r.seq: r for r in records if r.kind == "child.start"}
    ends = {r.data["run_id"]: r for r in records if r.kind == "child.end"}
    for lane, t0, t1, first, last, what, how in bars:
        start = records[first]
        assert t0 == start.t_ms <= t1
        if what == runs.RUN:
            assert first in starts and lanes[lane] == start.actor
            end = ends.get(start.data["run_id"])
            assert (last, how == runs.OK) == ((end.seq, end.data["status"] == "ok") if end
                                              else (-1, False))
        else:
            assert start.kind == "delivery.attempt" and lanes[lane].startswith("child:")
            answer = records[last].kind if last >= 0 else None
            assert answer in (("delivery.delivered",) if how == runs.OK else
                              ("delivery.send_failed", "delivery.give_up", "delivery.stale")
                              if how == runs.FAILED else
                              ("delivery.attempt", "crash", None))
    assert sum(b[5] == runs.RUN for b in bars) == len(starts)
    assert sum(b[5] == runs.ATTEMPT for b in bars) == sum(
        r.kind == "delivery.attempt" for r in records)


def _page(result: world.RunResult) -> str:
    from sim.html.timeline import to_html

    return to_html(result.trace.records, title="t")


def test_arrows_name_the_records_at_their_two_ends() -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    doc = embedded(_page(result))
    for _src, _dst, t0, t1, seq, _style, first, last in doc["arrows"]:
        assert result.trace[first].t_ms == t0 and result.trace[last].t_ms <= t1
        assert first <= seq and first <= last
    sends = [a for a in doc["arrows"] if result.trace[a[4]].kind == "delivery.attempt"]
    # An attempt's arrow ends at its send, or at itself when the process died before the send
    # (seed 7: a crash at before-send).
    unsent = [a for a in sends if result.trace[a[7]].kind != "gateway.send"]
    assert sends and len(unsent) < len(sends)
    assert all(a[7] == a[4] and result.trace[a[4] + 1].kind == "crash" for a in unsent)


def test_first_difference_ignores_the_configuration_and_finds_the_fork() -> None:
    sc = scenario.load(DEFAULT_WORLD)
    a = world.run(sc, seed=3, mutants=["dedupe-off"]).trace.records
    b = world.run(sc, seed=3).trace.records
    assert first_difference(a, a) is None
    first = first_difference(a, b)
    assert first is not None and first > 0  # world.start differs only in its configuration
    assert _observed(a[:first]) == _observed(b[:first]) and a[first] != b[first]
    assert first_difference(a, a[:10]) == 10


def test_replay_compare_takes_a_seed_a_mutant_a_scenario_or_a_schedule(tmp_path: Path) -> None:
    schedule = tmp_path / "s.json"
    done = CliRunner().invoke(main, ["replay", "--seed", "4", "--schedule-out", str(schedule),
                                     "--trace-out", str(tmp_path / "t.txt")])
    assert done.exit_code == 0, done.output
    for other in ("5", "mutant:dedupe-off", "plain", str(schedule), DEFAULT_WORLD):
        page = tmp_path / "c.html"
        done = CliRunner().invoke(main, ["replay", "--seed", "4", "--compare", other,
                                         "--format", "html", "--trace-out", str(page),
                                         "--force"])  # one page, written again for each other
        assert done.exit_code in (0, 1), (other, done.output)
        text = page.read_text(encoding="utf-8")
        check_self_contained(text)
        doc = embedded(text)
        assert [s["label"] for s in doc["compare"]["sides"]] == ["A", "B"]
        if other in (str(schedule), "plain"):  # the same run (seed 4 had no mutant)
            assert doc["compare"]["first"] is None and doc["compare"]["records"] == [], other
        else:
            assert doc["compare"]["first"] is not None, other
    for bad, why in (("nonsense", "is none of"), ("mutant:no-such", "unknown mutant")):
        done = CliRunner().invoke(main, ["replay", "--seed", "4", "--compare", bad, "--format",
                                         "html", "--trace-out", str(tmp_path / "x.html")])
        assert done.exit_code == 2 and why in done.output and "Traceback" not in done.output
    done = CliRunner().invoke(main, ["replay", "--seed", "4", "--compare", "plain"])
    assert done.exit_code == 2 and "--compare: needs --format html" in done.output


def test_the_report_compares_fault_rates_groups_messages_and_links_unshrunk_pages(
        tmp_path: Path) -> None:
    report = tmp_path / "sweep.html"
    done = CliRunner().invoke(main, ["explore", "--seeds", "12", "--mutant", "dedupe-off",
                                     "--jobs", "1", "--report", str(report), "--json"])
    assert done.exit_code == 1, done.output
    text = report.read_text(encoding="utf-8")
    check_self_contained(text)
    found = json.loads(done.stdout)
    failing_seeds = set(found["failing_seeds"])
    rates = text.split("<h2>Fault kinds among passing and failing seeds</h2>")[1].split("<h2>")[0]
    rows = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)(?: \(\d+%\))?</td>"
                      r"<td>(\d+)(?: \(\d+%\))?</td>", rates)
    assert rows
    passing = 12 - len(failing_seeds)
    assert all(int(p) <= passing and int(f) <= len(failing_seeds) for _, p, f in rows)
    assert max(int(f) for _, _, f in rows) > 0
    # Each distinct message once, with how many seeds gave it; each first seed's unshrunk page.
    groups: dict[tuple[str, str], set[int]] = {}
    for v in found["violations"]:
        groups.setdefault((v["invariant"], v["message"]), set()).add(v["seed"])
    failing = text.split("<h2>Failing seeds</h2>")[1].split("<h2>")[0]
    counts = [int(n) for n in re.findall(r'<tr><td class="n">(\d+)</td>', failing)]
    assert sorted(counts) == sorted(len(seeds) for seeds in groups.values())
    pages = re.findall(r'href="sweep-seeds/seed-(\d+).html"', failing)
    assert pages and {int(p) for p in pages} <= failing_seeds
    for seed in pages:
        page = tmp_path / "sweep-seeds" / f"seed-{seed}.html"
        doc = embedded(page.read_text(encoding="utf-8"))
        assert doc["V"] and doc["K"]  # the run as swept, failing, each record branchable


def test_a_pages_branch_commands_run_and_repeat_the_run_up_to_the_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["replay", "--seed", "7", "--format", "html", "--trace-out",
                                     "seed7.html"])
    assert done.exit_code == 0, done.output
    doc = embedded(Path("seed7.html").read_text(encoding="utf-8"))
    [side] = doc["branch"]
    assert side["schedule"] == "seed7.schedule.json"
    save = shlex.split(side["save"].removesuffix(" > /dev/null"))
    assert save[:2] == ["handoff", "replay"]
    done = CliRunner().invoke(main, save[1:])  # what the page says to run first
    assert done.exit_code == 0, done.output
    n = 150
    branch = tmp_path / "branch.jsonl"
    done = CliRunner().invoke(main, ["replay", "--from", side["schedule"], "--at",
                                     str(doc["K"][n]), "--seed", "1", "--format", "jsonl",
                                     "--trace-out", str(branch)])
    assert done.exit_code in (0, 1), done.output
    original = decode(doc)
    lines = [json.loads(line) for line in branch.read_text(encoding="utf-8").splitlines()]
    assert lines[1:n + 1] == original[1:n + 1]  # world.start names the seed
