"""Output a person reads is summarised (issue 26): probes in one line unless asked for the
table, long trace fields cut with their length shown, repeated failure messages counted; and the
smaller newcomer items (an empty ``--faults``, "at least 1 second")."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from sim.cli.root import main
from sim.export import to_text
from sim.textout import FIELD_CHARS, counted, cut, listed
from sim.trace import Record


def test_cut_listed_and_counted() -> None:
    assert cut("short") == "short"
    long = "x" * 3_000
    assert cut(long) == "x" * FIELD_CHARS + "… (3,000 characters)"
    names = [f"probe.number-{i}" for i in range(100)]
    line = listed(names)
    assert line.startswith("probe.number-0, probe.number-1, ")
    assert line.endswith(f", … and {100 - line.count(',')} more") and len(line) < FIELD_CHARS + 40
    assert counted(["a", "b", "a", "a"]) == ["a (×3)", "b"]


def test_a_long_trace_field_is_cut_in_text_and_whole_in_jsonl() -> None:
    record = Record(seq=0, t_ms=0, actor="delivery", kind="route.change",
                    data={"reason": "moved " * 500, "n": 1})
    text = to_text([record])
    assert "… (3,002 characters)" in text and len(text) < 2 * FIELD_CHARS + 100
    assert ("moved " * 500) in record.jsonl()


def test_explore_prints_probes_in_one_line_unless_asked() -> None:
    short = CliRunner().invoke(main, ["explore", "--seeds", "2", "--jobs", "1"])
    lines = [line for line in short.stdout.splitlines() if line.startswith("probes:")]
    assert len(lines) == 1 and "(--probes for seeds per probe)" in lines[0], short.stdout
    assert len(short.stdout.splitlines()) < 5
    table = CliRunner().invoke(main, ["explore", "--seeds", "2", "--jobs", "1", "--probes"])
    assert len(table.stdout.splitlines()) > 100  # one row per probe


def test_replay_cuts_its_probes_line() -> None:
    result = CliRunner().invoke(main, ["replay", "--seed", "7"])
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("probes hit:")]
    assert len(line) < FIELD_CHARS + 60 and line.endswith(" more"), line
    assert max(map(len, result.stdout.splitlines())) < 8 * (FIELD_CHARS + 30)


def test_run_counts_a_repeated_failure(tmp_path: Path) -> None:
    # The same expected violation, named four times and never found: one message, counted (an
    # invariant that reports one problem at several records does the same).
    path = tmp_path / "repeated.toml"
    path.write_text('[[sessions]]\nkey = "agent:main:main"\n\n[[children]]\nid = "c1"\n'
                    'run_for = 5\nreply = "done"\n\n[expect]\n'
                    f'violations = [{", ".join(4 * [chr(34) + "at-most-once" + chr(34)])}]\n',
                    encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 1, result.output
    assert "expected a violation of at-most-once, found none (×4)" in result.stdout, result.stdout
    assert result.stdout.count("expected a violation") == 1


def test_an_empty_fault_list_is_an_error() -> None:
    result = CliRunner().invoke(main, ["explore", "--faults", "", "--seeds", "1"])
    assert result.exit_code == 2
    assert result.stderr == ("handoff: --faults: names no fault kind (give kinds, 'all', or "
                             "'none' for no faults)\n")
    none = CliRunner().invoke(main, ["explore", "--faults", "none", "--seeds", "1", "--jobs", "1",
                                     "--json"])
    assert none.exit_code == 0, none.output


def test_at_least_one_second(tmp_path: Path) -> None:
    path = tmp_path / "until.toml"
    path.write_text('until = 0.5\n[[sessions]]\nkey = "agent:main:main"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert result.stderr.endswith("until: must be at least 1 second\n"), result.stderr
