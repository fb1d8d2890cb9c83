"""Fuzzing every reader through the CLI: mutated scenario files, schedules, session logs, results
files, and argument lists.

The property, for each input: exit status 0, 1 or 2; never a traceback (any exception other
than ``SystemExit`` fails); and for 2, exactly one line on stderr, ``handoff: ...``, naming the
file (with its line where the complaint comes from parsing, which knows it). There is no time limit
per example (no timed tests); a hang would stop the suite, and the documented ranges are what keep
every accepted input small. The CLI runs in-process (click's ``CliRunner``) for speed. The default
run tries a few dozen inputs per reader; ``-m slow`` tries 2,000 per reader.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import scenario
from sim.cli.root import main
from sim.world import core as world
from tests.conftest import DEFAULT_WORLD, EXAMPLES, SCENARIOS

QUICK = 60
SWEEP = 2_000

# Pieces a mutation may splice in: syntax of both formats, extreme numbers, wrong types, bad text.
TOKENS = ['"', "'", "[", "]", "{", "}", ",", "=", ":", "\n", "#", ".", "[[", "]]", '"""', "\\",
          "1e308", "-1", "0", "99999999999999999999", "1.5", "-0", "nan", "inf", "-inf", "NaN",
          "true", "false", "null", "[]", "{}", '""', '"x"', "é", "\u2028", "\x00", " ",
          "1979-05-27", "10000", "2147483648", "9223372036854775808"]
VALUES = ["1e308", "-1", "0", "99999999999999999999", "1.5", "nan", "inf", '"x"', "true",
          "[]", "{}", "null", '""', "2592001", "10001", "-1e308", '"all"', '["crash"]',
          '"nope"', "[1, 2]", '{"a": 1}',
          # ... and as many plausible ones, so mutants also get past the reader and run.
          "1", "2", "3", "5", "7", "30", "600", "3600", "0.5", "86400", "1", "2", "0", "4",
          "12", "100", "1000", "20", "9", "6", "8"]
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


@st.composite
def mutated(draw: st.DrawFn, originals: list[str]) -> bytes:
    """One of ``originals``, changed one to four times."""
    text = draw(st.sampled_from(originals))
    for _ in range(draw(st.integers(1, 4))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    data = text.encode("utf-8", errors="surrogatepass")
    if draw(st.integers(0, 19)) == 0:  # now and then, bytes that are not UTF-8
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\xff\xfe" + data[at:]
    return data


def _span(draw: st.DrawFn, text: str) -> tuple[int, int]:
    i = draw(st.integers(0, len(text)))
    return i, min(len(text), i + draw(st.integers(0, 40)))


def _delete(draw: st.DrawFn, text: str) -> str:
    i, j = _span(draw, text)
    return text[:i] + text[j:]


def _insert(draw: st.DrawFn, text: str) -> str:
    i = draw(st.integers(0, len(text)))
    return text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]


def _replace_token(pattern: re.Pattern[str]) -> Callable[[st.DrawFn, str], str]:
    def replace(draw: st.DrawFn, text: str) -> str:
        found = list(pattern.finditer(text))
        if not found:
            return text
        m = draw(st.sampled_from(found))
        return text[:m.start()] + draw(st.sampled_from(VALUES)) + text[m.end():]
    return replace


def _lines(draw: st.DrawFn, text: str) -> str:
    lines = text.split("\n")
    i = draw(st.integers(0, len(lines) - 1))
    j = draw(st.integers(0, len(lines) - 1))
    action = draw(st.sampled_from(["drop", "duplicate", "swap"]))
    if action == "drop":
        del lines[i]
    elif action == "duplicate":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


MUTATIONS = [_delete, _insert, _replace_token(_NUMBER), _replace_token(_NUMBER),
             _replace_token(_STRING), _lines]


def check(result: Result, path: Path | None) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback: the property fails with it
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        [line] = lines
        assert line.startswith("handoff: "), line
        if path is not None and not line.startswith("handoff: --"):
            assert line.startswith(f"handoff: {path}"), line
            if re.search(r": invalid (JSON|TOML)", line) and "nested too deeply" not in line:
                assert re.match(rf"handoff: {re.escape(str(path))}:\d+: ", line), line


def invoke_on(data: bytes, name: str, args: Callable[[Path], list[str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        check(CliRunner().invoke(main, args(path)), path)


def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


# Inputs the sweeps once found to raise, kept as plain cases.
LONG_INT = "9" * 5000
DEEP = "[" * 3000 + "]" * 3000
FOUND: list[tuple[str, str, list[str], str]] = [
    ("s.toml", f"seed = {LONG_INT}\n", ["run"],
     ":1: invalid TOML: Exceeds the limit (4300 digits) for integer string conversion"),
    ("s.toml", f"seed = {DEEP}\n", ["run"], ": invalid TOML: nested too deeply"),
    ("r.json", f'{{"results": [], "cap": {LONG_INT}}}', ["announce"],
     ":1: invalid JSON: Exceeds the limit (4300 digits) for integer string conversion"),
    ("r.json", DEEP, ["announce"], ": invalid JSON: nested too deeply"),
    ("s.json", DEEP, ["replay", "--schedule"], ": invalid JSON: nested too deeply"),
    ("l.jsonl", DEEP, ["output"], ":1: invalid JSON: nested too deeply"),
    ("r.json", '{"results": [],\n "cap": NaN}', ["announce"],
     ":2: invalid JSON: NaN is not a JSON value"),
    # A key holding a line separator (U+2028) is escaped: the message stays one line.
    ("s.json", '{\n "\u2028seed": 7}', ["replay", "--schedule"],
     ":2: \\u2028seed: unknown field (expected one of: "),
]


@pytest.mark.parametrize(("name", "text", "command", "message"), FOUND)
def test_inputs_the_sweeps_found(tmp_path: Path, name: str, text: str, command: list[str],
                                 message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, [*command, str(path)])
    check(result, path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"handoff: {path}{message}")


# -- scenario files --------------------------------------------------------------------------------

SCENARIO_TEXTS = [p.read_text(encoding="utf-8")
                  for p in [DEFAULT_WORLD, *sorted(SCENARIOS.glob("*.toml"))]]


def _scenario(data: bytes) -> None:
    invoke_on(data, "s.toml", lambda p: ["run", str(p), "--json"])


@fuzz(QUICK)
@given(mutated(SCENARIO_TEXTS))
def test_fuzz_scenario_files(data: bytes) -> None:
    _scenario(data)


@pytest.mark.slow
@fuzz(SWEEP)
@given(mutated(SCENARIO_TEXTS))
def test_fuzz_scenario_files_sweep(data: bytes) -> None:
    _scenario(data)


# -- schedules -------------------------------------------------------------------------------------


def _schedule_texts() -> list[str]:
    default = scenario.load(DEFAULT_WORLD)
    crash = scenario.load(SCENARIOS / "crash-between-send-and-record.toml")
    texts = []
    for loaded, seed in ((default, 7), (crash, 1)):
        doc = world.run(loaded, seed=seed).schedule.to_json()
        # Indented, so line-based mutations reach single fields.
        texts.append(json.dumps(doc, indent=1))
    return texts


SCHEDULE_TEXTS = _schedule_texts()


def _schedule(data: bytes) -> None:
    invoke_on(data, "s.json", lambda p: ["replay", "--schedule", str(p), "--format", "jsonl",
                                         "--trace-out", str(p.with_suffix(".trace"))])


@fuzz(QUICK)
@given(mutated(SCHEDULE_TEXTS))
def test_fuzz_schedules(data: bytes) -> None:
    _schedule(data)


@pytest.mark.slow
@fuzz(SWEEP)
@given(mutated(SCHEDULE_TEXTS))
def test_fuzz_schedules_sweep(data: bytes) -> None:
    _schedule(data)


# -- session logs ----------------------------------------------------------------------------------

LOG_TEXTS = [(EXAMPLES / name).read_text(encoding="utf-8")
             for name in ("child-v2.jsonl", "child-v1.jsonl")]
CONSUMERS = st.sampled_from(["in-process", "activation", "sdk", "acp"])


def _log(data: bytes, consumer: str) -> None:
    invoke_on(data, "log.jsonl", lambda p: ["output", str(p), "--consumer", consumer, "--json"])


@fuzz(QUICK)
@given(mutated(LOG_TEXTS), CONSUMERS)
def test_fuzz_session_logs(data: bytes, consumer: str) -> None:
    _log(data, consumer)


@pytest.mark.slow
@fuzz(SWEEP)
@given(mutated(LOG_TEXTS), CONSUMERS)
def test_fuzz_session_logs_sweep(data: bytes, consumer: str) -> None:
    _log(data, consumer)


# -- results files ---------------------------------------------------------------------------------

RESULTS_TEXTS = [(EXAMPLES / "results.json").read_text(encoding="utf-8")]


def _results(data: bytes) -> None:
    invoke_on(data, "results.json", lambda p: ["announce", str(p), "--json"])


@fuzz(QUICK)
@given(mutated(RESULTS_TEXTS))
def test_fuzz_results_files(data: bytes) -> None:
    _results(data)


@pytest.mark.slow
@fuzz(SWEEP)
@given(mutated(RESULTS_TEXTS))
def test_fuzz_results_files_sweep(data: bytes) -> None:
    _results(data)


# -- argument lists --------------------------------------------------------------------------------

FLAGS = ["--seeds", "--seed", "--start", "--jobs", "--mutant", "--faults", "--strategy",
         "--scenario", "--schedule", "--schedule-out", "--trace-out", "--format", "--consumer",
         "--json", "--check-determinism", "--help", "--version", "--nope", "-h", "--"]
# Files are copies in a scratch folder (a generated --trace-out may overwrite any of them).
FILES = {"world.toml": DEFAULT_WORLD, "expiry.toml": SCENARIOS / "expiry.toml",
         "child.jsonl": EXAMPLES / "child-v2.jsonl", "results.json": EXAMPLES / "results.json"}
ARG_VALUES = ["0", "1", "3", "-1", "1000000000000", "9223372036854775807",
              "9223372036854775808", "abc", "", "all", "crash,nope", "crash", "pct", "fifo",
              "text", "jsonl", "svg", "sdk", "fresh-key-after-restart", "nope",
              "/nonexistent/x.json", ".", "missing.toml", *FILES]
COMMANDS = ["explore", "replay", "run", "output", "announce", "nonsense"]


@st.composite
def argument_lists(draw: st.DrawFn) -> list[str]:
    args = [draw(st.sampled_from(COMMANDS))]
    args += draw(st.lists(st.sampled_from(FLAGS + ARG_VALUES), max_size=6))
    if args[0] == "explore" and "--seeds" not in args:
        args += ["--seeds", "2"]  # the default sweep (200 seeds) is too long for one example
    if args[0] == "explore" and "--seeds" in args:
        i = args.index("--seeds") + 1
        if i < len(args) and args[i].isdigit() and 5 < int(args[i]) <= 10_000_000:
            args[i] = "2"  # a valid but long sweep: keep it short
    return args


def _arguments(args: list[str]) -> None:
    # The argument lists name the sample files relatively, so they run inside a fresh folder
    # (click's isolated_filesystem is deprecated since 8.5).
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        for name, original in FILES.items():
            shutil.copy(original, name)
        check(CliRunner().invoke(main, args), None)


@fuzz(QUICK)
@given(argument_lists())
def test_fuzz_argument_lists(args: list[str]) -> None:
    _arguments(args)


@pytest.mark.slow
@fuzz(SWEEP)
@given(argument_lists())
def test_fuzz_argument_lists_sweep(args: list[str]) -> None:
    _arguments(args)
