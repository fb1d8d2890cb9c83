"""The HTML timeline and sweep report, checked structurally: each page parses, embeds every record
and every violation exactly, cites records that exist, and names nothing outside itself.

tests/html/test_browser.py opens the same pages in a real headless Chromium (``pytest -m browser``).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from click.testing import CliRunner

from actors.probes import PROBES
from sim import export, scenario
from sim.bench.scale import world_with
from sim.cli.root import main
from sim.html import timeline as export_html
from sim.html.timeline import CRASH, FAULT, decode, embedded
from sim.world import core as world
from tests.conftest import DEFAULT_WORLD

# Elements and attributes through which a page could fetch something.
_FETCHING = {("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src"),
             ("object", "data"), ("embed", "src"), ("source", "src"), ("audio", "src"),
             ("video", "src"), ("form", "action"), ("use", "href"), ("image", "href")}


_VOID = frozenset({"meta", "br", "input", "link", "img", "hr", "source"})


class _Page(HTMLParser):
    """Every start tag with its attributes; the elements still open at the end."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()


def check_self_contained(text: str) -> _Page:
    """The page parses into balanced elements and fetches nothing: no URL scheme anywhere, no
    element that loads a resource, every link a fragment of the page or a relative file."""
    page = _Page()
    page.feed(text)
    page.close()
    assert page.open == []
    assert "http://" not in text and "https://" not in text
    assert text.count("url(") == text.count("url(#")  # CSS and SVG refer only to the page
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert (tag, name) not in _FETCHING or value is None, (tag, name, value)
            if name in ("href", "src") and value is not None:
                assert "://" not in value and not value.startswith("//"), value
    return page


def _replay(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "run.html"
    done = CliRunner().invoke(main, ["replay", *args, "--format", "html", "--trace-out",
                                     str(out)])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, out.read_text(encoding="utf-8")


def test_replay_html_embeds_every_record_of_seed_7(tmp_path: Path) -> None:
    status, text = _replay(tmp_path, "--seed", "7")
    assert status == 0
    check_self_contained(text)
    doc = embedded(text)
    result = world.run(scenario.load(DEFAULT_WORLD), seed=7)
    assert decode(doc) == [r.to_json() for r in result.trace]
    assert doc["V"] == [] and doc["repro"] == "handoff replay --seed 7 --format text"
    lanes = [doc["S"][name] for name, _ in doc["lanes"]]
    assert sorted(lanes) == sorted({r.actor for r in result.trace})
    # Requester sessions first, then children (each nested session after its child), then
    # delivery and gateway.
    assert lanes[0] == "requester:agent:main:main"
    assert lanes.index("delivery") < lanes.index("gateway") < lanes.index("harness")
    assert lanes.index("child:c1") < lanes.index("requester:agent:main:subagent:c1")
    # Each spawn is an arrow from its requester to its child; each fault and crash is marked.
    spawns = [r for r in result.trace if r.kind == "spawn"]
    by_seq = {a[4]: a for a in doc["arrows"]}
    for r in spawns:
        arrow = by_seq[r.seq]
        assert (lanes[arrow[0]], lanes[arrow[1]]) == (r.actor, f"child:{r.data['child']}")
        assert arrow[2] == arrow[3] == r.t_ms
    marks = {m[2]: m[3] for m in doc["marks"]}
    assert {seq for seq, m in marks.items() if m == CRASH} == {
        r.seq for r in result.trace if r.kind == "crash"}
    assert {seq for seq, m in marks.items() if m == FAULT} == {
        r.seq for r in result.trace if r.kind == "fault"}
    for arrow in doc["arrows"]:  # an arrow never runs back in time
        assert arrow[2] <= arrow[3]


def test_a_failing_run_shows_its_violations_linked_to_records(tmp_path: Path) -> None:
    status, text = _replay(tmp_path, "--seed", "3", "--mutant", "dedupe-off")
    assert status == 1
    check_self_contained(text)
    doc = embedded(text)
    result = world.run(scenario.load(DEFAULT_WORLD), seed=3, mutants=["dedupe-off"])
    assert result.violations
    assert doc["V"] == [v.to_json() for v in result.violations]
    seqs = {r[0] for r in doc["R"]}
    for v in doc["V"]:
        assert v["records"] and set(v["records"]) <= seqs
    assert doc["repro"] == "handoff replay --seed 3 --mutant dedupe-off --format text"


def test_save_failures_writes_each_shrunk_timeline_and_the_report_links_it(
        tmp_path: Path) -> None:
    folder, report = tmp_path / "failures", tmp_path / "report.html"
    done = CliRunner().invoke(main, ["explore", "--seed", "3", "--mutant", "dedupe-off",
                                     "--jobs", "1", "--save-failures", str(folder),
                                     "--max-runs", "30", "--report", str(report), "--json"])
    assert done.exit_code == 1, done.output
    saved = json.loads(done.stdout)["saved"]
    assert saved
    report_text = report.read_text(encoding="utf-8")
    check_self_contained(report_text)
    for entry in saved:
        page_path = Path(entry["timeline"])
        assert page_path == Path(entry["path"]).with_suffix(".html") and page_path.is_file()
        text = page_path.read_text(encoding="utf-8")
        check_self_contained(text)
        doc = embedded(text)
        shrunk = scenario.load(entry["path"])
        result = world.run(shrunk, seed=shrunk.seed)
        assert decode(doc) == [r.to_json() for r in result.trace]
        assert entry["invariant"] in {v["invariant"] for v in doc["V"]}
        seqs = {r[0] for r in doc["R"]}
        assert all(v["records"] and set(v["records"]) <= seqs for v in doc["V"])
        assert doc["repro"] == f"handoff replay --scenario {entry['path']} --format text"
        assert f'href="failures/{page_path.name}"' in report_text
    for heading in ("Detection", "Violations by invariant and fault kind", "Failing seeds",
                    "Probe hits"):
        assert f"<h2>{heading}</h2>" in report_text
    assert "handoff replay --seed 3 --mutant dedupe-off --format text" in report_text


def test_report_lists_probes_rare_first(tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    done = CliRunner().invoke(main, ["explore", "--seeds", "3", "--jobs", "1", "--report",
                                     str(report)])
    assert done.exit_code == 0, done.output
    page = check_self_contained(report.read_text(encoding="utf-8"))
    assert not any(tag == "script" for tag, _ in page.tags)
    text = report.read_text(encoding="utf-8")
    probes = text.split("<h2>Probe hits</h2>")[1]
    counts = [int(n) for n in re.findall(r'<td class="n(?: zero)?">(\d+)</td>', probes)]
    assert len(counts) == len(PROBES) and counts == sorted(counts)


def test_hostile_strings_stay_data(tmp_path: Path) -> None:
    """Record text that looks like markup, a URL or a lone surrogate is embedded as data."""
    from sim.trace import Trace

    trace = Trace()
    trace.append(0, "child:c1", "child.message",
                 {"text": "</script><script>alert(1)</script> https://example.com/x \ud800",
                  "n": 12345678901234567890, "f": 0.25, "nested": {"k": [1, "two", None, True]}})
    text = export.render(trace.records, "html")
    check_self_contained(text)
    assert text.count("</script>") == 2  # the data's and the page script's own
    assert decode(embedded(text)) == [r.to_json() for r in trace]


def test_html_size_grows_with_records_not_faster() -> None:
    """Each page is smaller than its JSONL plus the fixed page (script and style), also for a
    run of a thousand-odd records: the string table keeps the size linear in the records."""
    fixed = len(export_html.page(export_html.payload([], title="x")).encode())
    for run in (world.run(scenario.load(DEFAULT_WORLD), seed=7),
                world.run(world_with(60, trees=True), seed=1)):
        html_bytes = len(export_html.to_html(run.trace.records, title="x").encode())
        jsonl_bytes = len(export.to_jsonl(run.trace.records).encode())
        assert html_bytes < jsonl_bytes + fixed
