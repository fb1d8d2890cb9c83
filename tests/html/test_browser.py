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

from sim import scenario
from sim.bench.scale import world_with
from sim.html.timeline import embedded, to_html
from sim.world import core as world
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


def test_seed_7_draws_lanes_and_arrows(tmp_path: Path) -> None:
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    page = tmp_path / "seed7.html"
    page.write_text(to_html(result.trace.records, title="seed 7"), encoding="utf-8")
    doc = embedded(page.read_text(encoding="utf-8"))
    dom = _dom(page, tmp_path)
    # The window is tall enough for every lane of seed 7: each is drawn, with its name.
    lanes = re.findall(r'<g class="lane g\d" data-lane="(\d+)">', dom)
    assert sorted(map(int, lanes)) == list(range(len(doc["lanes"])))
    for name, _ in doc["lanes"]:
        assert f">{doc['S'][name]}</text>" in dom
    arrows = re.findall(r'<line class="arrow s\d" data-seq="(\d+)"', dom)
    assert len(arrows) == len(doc["arrows"])  # the whole run is in view: every arrow drawn
    # Every record is drawn, as its own dot or in a numbered stack of those a dot's width apart.
    dots = len(re.findall(r'<circle class="rec[^"]*" data-seq=', dom))
    stacks = [len(s.split(",")) for s in re.findall(r'<g class="stack" data-seq="\d+" '
                                                      r'data-stack="([\d,]+)"', dom)]
    assert dots + sum(stacks) == len(doc["R"]) and dots > 0
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
