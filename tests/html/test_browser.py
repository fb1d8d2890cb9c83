"""The HTML timeline in a real headless Chromium (``pytest -m browser``; .ci/run installs Debian's
``chromium`` when it is missing and sets HANDOFF_REQUIRE_BROWSER, so there a missing browser fails
instead of skipping).

Each page is opened offline with a fresh profile: its script must run without a console message,
draw the lanes and the arrows into the DOM, and a screenshot must come out at the window's size
with something drawn in it.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sim import scenario
from sim.bench.scale import world_with
from sim.cli.root import main
from sim.html.compare import first_difference
from sim.html.timeline import embedded, to_html
from sim.world import core as world
from sim.world.branch_points import run_with_branch_points
from tests.conftest import DEFAULT_WORLD

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = Path("/usr/bin/chromium")
REQUIRED = os.environ.get("HANDOFF_REQUIRE_BROWSER", "") not in ("", "0")
WIDTH, HEIGHT = 1400, 1000


def _chromium(page: Path, profile: Path, *extra: str,
              fragment: str = "") -> subprocess.CompletedProcess[str]:
    if not CHROMIUM.exists():
        if REQUIRED:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", *extra,
         page.as_uri() + fragment],
        capture_output=True, text=True, timeout=180, check=False)


def _console(stderr: str) -> list[str]:
    """What the page wrote to its console (Chromium logs each message as INFO:CONSOLE)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _dom(page: Path, tmp_path: Path) -> str:
    done = _chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _console(done.stderr) == []
    return done.stdout


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _window(dom: str) -> tuple[float, float]:
    """The time window the page shows (the controls' span carries it)."""
    found = re.search(r'id="window" data-t0="([\d.e+-]+)" data-t1="([\d.e+-]+)"', dom)
    assert found, "no window in the DOM"
    return float(found.group(1)), float(found.group(2))


def _drawn_records(dom: str) -> list[int]:
    seqs = [int(seq) for seq in re.findall(r'<circle class="rec[^"]*" data-seq="(\d+)"', dom)]
    return seqs + [int(seq) for stack in re.findall(r'data-stack="([\d,]+)"', dom)
                   for seq in stack.split(",")]


def test_seed_7_opens_on_its_activity_and_draws_lanes_bars_and_arrows(tmp_path: Path) -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    page = tmp_path / "seed7.html"
    page.write_text(to_html(result.trace.records, title="seed 7"), encoding="utf-8")
    doc = embedded(page.read_text(encoding="utf-8"))
    dom = _dom(page, tmp_path)
    # It opens on the span that holds the run's activity (at least 95 % of its records), not on
    # the whole run: seed 7's last records are a long quiet tail of timers.
    t0, t1 = _window(dom)
    times = [r.t_ms for r in result.trace]
    inside = [r.seq for r in result.trace if t0 <= r.t_ms <= t1]
    assert len(inside) >= 0.95 * len(times) and t1 - t0 < 0.5 * (max(times) - min(times))
    # The window is tall enough for every lane of seed 7: each is drawn, with its name.
    lanes = re.findall(r'<g class="lane g\d" data-lane="(\d+)">', dom)
    assert sorted(map(int, lanes)) == list(range(len(doc["lanes"])))
    for name, _ in doc["lanes"]:
        assert f">{doc['S'][name]}</text>" in dom
    arrows = re.findall(r'<line class="arrow s\d" data-seq="(\d+)"', dom)
    assert len(arrows) == sum(1 for a in doc["arrows"] if a[2] <= t1 and a[3] >= t0)
    # Every record in the window is drawn, as its own dot or in a numbered stack of those a dot's
    # width apart; each child run is a bar, each delivery attempt another.
    assert sorted(_drawn_records(dom)) == inside
    runs = re.findall(r'<rect class="bar run (?:ok|failed|open)" data-seq="(\d+)"', dom)
    attempts = re.findall(r'<rect class="bar attempt (?:ok|failed|open)" data-seq="(\d+)"', dom)
    assert {int(q) for q in runs} == {r.seq for r in result.trace if r.kind == "child.start"}
    assert {int(q) for q in attempts} == {r.seq for r in result.trace if r.kind ==
                                          "delivery.attempt" and t0 <= r.t_ms <= t1}
    # The legend and the event list: the list draws the rows it shows, in record order.
    assert '<details id="legend" open="">' in dom and "delivery attempt, send to ack" in dom
    listed = [int(q) for q in re.findall(r'<a class="ev[^"]*" href="#r-(\d+)"', dom)]
    assert listed[:5] == [0, 1, 2, 3, 4] and len(listed) < len(result.trace)
    kinds = set(re.findall(r'<option value="([\w.-]+)">', dom))
    assert kinds == {r.kind for r in result.trace}
    shot = tmp_path / "seed7.png"
    done = _chromium(page, tmp_path / "profile-shot", f"--screenshot={shot}")
    assert done.returncode == 0 and _console(done.stderr) == []
    assert _png_size(shot) == (WIDTH, HEIGHT)
    assert shot.stat().st_size > 20_000  # a blank page of this size is a few kilobytes


def test_the_filter_keeps_the_lanes_of_one_run(tmp_path: Path) -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    page = tmp_path / "seed7.html"
    page.write_text(to_html(result.trace.records, title="seed 7"), encoding="utf-8")
    doc = embedded(page.read_text(encoding="utf-8"))
    done = _chromium(page, tmp_path / "profile", "--dump-dom", fragment="#filter=run-3")
    assert done.returncode == 0 and _console(done.stderr) == []
    lanes = {doc["S"][doc["lanes"][int(n)][0]]
             for n in re.findall(r'<g class="lane g\d" data-lane="(\d+)">', done.stdout)}
    mentions = {r.actor for r in result.trace if r.data.get("run_id") == "run-3"}
    spawn = next(r for r in result.trace if r.kind == "spawn" and r.data["run_id"] == "run-3")
    assert f"child:{spawn.data['child']}" in lanes and "delivery" in lanes
    assert mentions <= lanes < {doc["S"][name] for name, _ in doc["lanes"]}
    # ... zoomed to the span of the records it keeps.
    kept = [r.t_ms for r in result.trace if r.data.get("run_id") == "run-3"]
    t0, t1 = _window(done.stdout)
    assert t0 <= min(kept) and max(kept) <= t1 and t1 - t0 <= 1.2 * (max(kept) - min(kept)) + 500
    drawn = [int(seq) for seq in re.findall(r'<circle class="rec[^"]*" data-seq="(\d+)"',
                                             done.stdout)]
    drawn += [int(seq) for stack in re.findall(r'data-stack="([\d,]+)"', done.stdout)
              for seq in stack.split(",")]
    assert drawn
    for seq in drawn:
        record = result.trace[seq]
        assert "run-3" in record.actor or "run-3" in " ".join(
            str(record.data.get(k)) for k in ("run_id", "key", "turn_run_id"))


def test_a_violation_is_shown_with_links_to_its_records(tmp_path: Path) -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=3, mutants=["dedupe-off"])
    assert result.violations
    page = tmp_path / "failing.html"
    page.write_text(to_html(result.trace.records, title="failing", violations=result.violations,
                            repro="handoff replay --seed 3 --mutant dedupe-off --format text"),
                    encoding="utf-8")
    dom = _dom(page, tmp_path)
    assert '<section id="violations">' in dom  # no longer hidden
    cited = {int(s) for s in re.findall(r'<a class="cite" href="#r-(\d+)"', dom)}
    assert cited == {seq for v in result.violations for seq in v.records}
    assert "at-most-once" in dom and "handoff replay --seed 3 --mutant dedupe-off" in dom
    # The first cited record is selected: its fields are in the details pane.
    first = result.violations[0].records[0]
    assert f"<h2>#{first} {result.trace[first].kind}</h2>" in dom


def test_a_thousand_child_run_opens_and_draws_only_what_is_in_view(tmp_path: Path) -> None:
    result = world.run(world_with(1000, trees=True), seed=1)
    page = tmp_path / "big.html"
    page.write_text(to_html(result.trace.records, title="big"), encoding="utf-8")
    doc = embedded(page.read_text(encoding="utf-8"))
    assert len(doc["lanes"]) > 1000
    dom = _dom(page, tmp_path)
    lanes = re.findall(r'<g class="lane', dom)
    # Only the rows a 1000-pixel window shows are in the DOM, however many lanes the run has.
    assert 0 < len(lanes) <= HEIGHT // 22 + 2
    drawn = len(re.findall(r"<(?:circle|rect|line|path) ", dom))
    assert drawn < 20_000 < len(result.trace)
    # The event list, too, holds only the rows it shows.
    assert 0 < len(re.findall(r'<a class="ev', dom)) <= HEIGHT // 18 + 5


def test_a_failure_page_opens_on_its_first_violations_records(tmp_path: Path) -> None:
    sc = scenario.load(DEFAULT_WORLD)
    result, steps = run_with_branch_points(sc, seed=3, mutants=["dedupe-off"])
    cited = result.violations[0].records
    page = tmp_path / "failing.html"
    page.write_text(to_html(result.trace.records, title="failing", violations=result.violations,
                            steps=steps, schedule="s.json", save="handoff replay ... > x"),
                    encoding="utf-8")
    dom = _dom(page, tmp_path)
    t0, t1 = _window(dom)
    lo, hi = (min(result.trace[q].t_ms for q in cited), max(result.trace[q].t_ms for q in cited))
    assert t0 <= lo and hi <= t1  # the cited records are in view ...
    assert t1 - t0 <= 1.5 * (hi - lo) + 500 < result.end_ms / 10  # ... in a window their size
    assert set(cited) <= set(_drawn_records(dom))
    # The first is selected: its fields, its run's summary and the branch-here commands; its
    # row in the event list is marked.
    first = result.trace[cited[0]]
    assert f"<h2>#{first.seq} {first.kind}</h2>" in dom
    assert f"<h3>Run {first.data['run_id']}" in dom and "<th>attempts</th>" in dom
    assert f"handoff explore --from s.json --at {steps[first.seq]} --seeds 200" in dom
    assert re.search(rf'<a class="ev [^"]*sel[^"]*" href="#r-{first.seq}"', dom)
    # The registry row of its run at that moment, as the trace shows it (the cursor moves it).
    row = re.search(r'<div id="registry">(.*?)</div>', dom, re.S)
    assert row and f"{first.data['run_id']} at " in row.group(1) and "delivery " in row.group(1)


def test_a_link_to_a_record_zooms_to_it(tmp_path: Path) -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    page = tmp_path / "seed7.html"
    page.write_text(to_html(result.trace.records, title="seed 7"), encoding="utf-8")
    target = next(r for r in result.trace if r.kind == "delivery.delivered")
    done = _chromium(page, tmp_path / "profile", "--dump-dom", fragment=f"#r-{target.seq}")
    assert done.returncode == 0 and _console(done.stderr) == []
    t0, t1 = _window(done.stdout)
    assert t0 <= target.t_ms <= t1 and t1 - t0 < result.end_ms / 10
    assert f"<h2>#{target.seq} delivery.delivered</h2>" in done.stdout


def test_a_compare_page_marks_the_first_difference(tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    done = CliRunner().invoke(main, ["replay", "--seed", "3", "--mutant", "dedupe-off",
                                     "--compare", "plain", "--format", "html", "--trace-out",
                                     str(page)])
    assert done.exit_code == 1, done.output  # the mutant's run fails
    sc = scenario.load(DEFAULT_WORLD)
    mutant = world.run(sc, seed=3, mutants=["dedupe-off"]).trace.records
    plain = world.run(sc, seed=3).trace.records
    first = first_difference(mutant, plain)
    assert first is not None and mutant[first] != plain[first]
    dom = _dom(page, tmp_path)
    assert '<section id="compare">' in dom and f"First difference at record {first}" in dom
    marked = {int(q) for q in re.findall(r'<circle class="rec[^"]* diff[^"]*" data-seq="(\d+)"',
                                         dom)}
    assert marked == {first, len(mutant) + first}  # the record in both runs, A's and B's
    assert '<line class="diff-line"' in dom
    t0, t1 = _window(dom)
    assert t0 <= mutant[first].t_ms <= t1
    # Each actor's lane of B right under A's.
    doc = embedded(page.read_text(encoding="utf-8"))
    names = [doc["S"][name] for name, _ in doc["lanes"]]
    assert names[:2] == ["A requester:agent:main:main", "B requester:agent:main:main"]
