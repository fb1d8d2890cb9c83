"""SIM-1: no wall-clock reads and no global randomness in the model or the simulator."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(
    r"\btime\.(time|monotonic|perf_counter|sleep|time_ns|monotonic_ns|perf_counter_ns)\("
    r"|datetime\.(now|utcnow|today)\(|\bdate\.today\("
    r"|\brandom\.(random|randint|randrange|choice|choices|shuffle|seed|uniform|sample|gauss)\("
    r"|uuid\.uuid[14]\(|os\.urandom\(|secrets\.|trio\.sleep\("
)
# A deliberate exception says why on its own line.
ALLOWED = "# wall-clock ok"


def _sources() -> list[Path]:
    return sorted([*ROOT.joinpath("actors").rglob("*.py"), *ROOT.joinpath("sim").rglob("*.py")])


def test_no_wall_clock_or_global_random_calls() -> None:
    offenders = []
    for path in _sources():
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if FORBIDDEN.search(line) and ALLOWED not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_random_module_is_only_instantiated_never_called_globally() -> None:
    for path in _sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "random":
                names = [alias.name for alias in node.names]
                assert names == ["Random"], f"{path}: from random import {names}"


# Names that read a clock, sleep for real or draw entropy, by the module they come from.
FORBIDDEN_FROM = {
    "time": {"time", "monotonic", "perf_counter", "sleep", "time_ns", "monotonic_ns",
             "perf_counter_ns", "process_time", "thread_time"},
    "datetime": {"datetime", "date"},  # their now()/today() would then read bare
    "os": {"urandom", "getrandom"},
    "uuid": {"uuid1", "uuid4"},
    "secrets": None,  # anything
    "trio": {"sleep", "sleep_until", "current_time"},
}


def _forbidden_from_imports(source: str) -> list[str]:
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or node.module not in FORBIDDEN_FROM:
            continue
        if ALLOWED in lines[node.lineno - 1]:
            continue
        names = FORBIDDEN_FROM[node.module]
        bad = [a.name for a in node.names if names is None or a.name in names or a.name == "*"]
        if bad:
            found.append(f"{node.lineno}: from {node.module} import {', '.join(bad)}")
    return found


def test_no_clock_or_entropy_is_imported_by_name() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{hit}" for path in _sources()
                 for hit in _forbidden_from_imports(path.read_text())]
    assert offenders == []


def test_the_from_import_checker_catches_what_it_should() -> None:
    for bad in ("from time import monotonic", "from time import sleep as nap",
                "from datetime import datetime", "from os import urandom", "from secrets import x",
                "from trio import sleep", "from time import *"):
        assert _forbidden_from_imports(bad), bad
    for fine in ("from os import path", "from trio import CancelScope", "import time",
                 "from time import monotonic  # wall-clock ok: a benchmark"):
        assert not _forbidden_from_imports(fine), fine


def test_the_checker_catches_what_it_should() -> None:
    for bad in ("t = time.time()", "x = random.random()", "datetime.now()", "await trio.sleep(1)",
                "u = uuid.uuid4()"):
        assert FORBIDDEN.search(bad), bad
    assert not FORBIDDEN.search("self._rng.random()")
