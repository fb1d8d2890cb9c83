"""Memory bounded by the documented limits (issue 39): readers check sizes and counts as they
go and build line positions only for an error; a packed log row is expanded as it is read; a
sweep keeps counts, failing outcomes and 8-byte digests, never every seed's outcome; under a
memory limit a command that runs out is one line, never a MemoryError traceback."""

from __future__ import annotations

import json
import resource
import tracemalloc
from pathlib import Path

import pytest

from actors.inputs import json_document
from actors.inputs.lines import MAX_PLACED
from sim.bench.inputs import _log_row, _schedule, input_memory
from sim.explore.seed import SeedOutcome
from sim.explore.sweeps import probe_table, sweep_digest
from sim.explore.tally import Tally
from sim.invariants.base import Violation
from sim.textout import Streamed, dump_json
from tests.hostile.proc import handoff

GIB = 2**30


def _outcome(seed: int, failing: bool = False) -> SeedOutcome:
    violations = (Violation("at-most-once", "DEL-1", "twice", ()),) if failing else ()
    return SeedOutcome(seed, None, 100, violations, f"{seed:016x}"[-16:],
                       ("announce.escaped",) if seed % 3 else ())


def test_a_tally_gives_what_the_outcomes_gave() -> None:
    outcomes = [_outcome(seed, failing=seed % 7 == 0) for seed in range(5, 305)]
    # A crash's outcome has no run digest ("").
    outcomes[10] = SeedOutcome(15, None, 0, (Violation("crash", "SIM-10", "boom", ()),))
    tally = Tally(range(5, 305))
    tally.add_all(outcomes)
    assert tally.digest() == sweep_digest(outcomes)
    assert tally.probes == probe_table(outcomes)
    assert dict(tally.seed_digests()) == {str(o.seed): o.run_digest for o in outcomes}
    assert tally.failing == [o for o in outcomes if o.violations]
    assert not tally.interrupted


def test_a_tally_keeps_a_few_bytes_a_passing_seed() -> None:
    tally = Tally(range(1, 200_001))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for seed in range(1, 200_001):
            tally.add(_outcome(seed))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown / 200_000 < 16, grown  # 8 bytes of digest a seed, and the bytearray's slack


def test_dump_json_writes_what_json_dumps_writes() -> None:
    doc = {"seeds": 3, "violations": [{"seed": 1, "message": "a\nb \u00e9 \ud800"}],
           "empty": {}, "list": [], "seed_digests": {"1": "ab", "2": "cd"},
           "nested": {"x": {"y": [1, 2, {"z": None}]}}}
    parts: list[str] = []
    dump_json({**doc, "seed_digests": Streamed(lambda: iter(doc["seed_digests"].items()))},
              parts.append)
    assert "".join(parts) == json.dumps(doc, indent=2)
    parts.clear()
    dump_json({"seed_digests": Streamed(lambda: iter(()))}, parts.append)
    assert "".join(parts) == json.dumps({"seed_digests": {}}, indent=2)


def test_line_positions_are_built_only_for_an_error_and_capped() -> None:
    text = json.dumps({"choices": [[0, 2, 0]] * 50_000, "bad": "x"}, indent=1)
    tracemalloc.start()
    try:
        _, root = json_document("s.json", text)
        assert root.data["bad"] == "x"
        parsed = tracemalloc.get_traced_memory()[1]
        line = root.doc.line(("bad",))
        placed = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The scan stopped at MAX_PLACED paths, before "bad": its line falls back to the
    # document's, and the index cost far less than an entry per element.
    assert line == 1
    assert placed - parsed < MAX_PLACED * 400, (parsed, placed)
    small = json.dumps({"choices": [[0, 2, 0]] * 3, "bad": "x"}, indent=1)
    assert json_document("s.json", small)[0].line(("bad",)) == \
        small.splitlines().index(' "bad": "x"') + 1


def test_a_schedule_of_a_million_choices_reads_in_a_few_hundred_mib(tmp_path: Path) -> None:
    args = _schedule(tmp_path / "s.json", 1_000_000)
    done = handoff(args, limits={resource.RLIMIT_AS: GIB}, timeout=600)
    assert done.returncode == 1, done.stderr  # read whole, then its replay diverges
    assert "schedule diverged at step" in done.stderr


def test_a_packed_log_row_of_a_million_texts_reads_in_a_few_hundred_mib(tmp_path: Path) -> None:
    args = _log_row(tmp_path / "log.jsonl", 1_000_000)
    done = handoff(args, limits={resource.RLIMIT_AS: GIB}, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("stop reason: ") and "output blocks: text" in done.stdout


def test_running_out_of_memory_is_one_line(tmp_path: Path) -> None:
    args = _log_row(tmp_path / "log.jsonl", 3_000_000)
    done = handoff(args, limits={resource.RLIMIT_AS: 300 * 2**20}, timeout=600)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("handoff: out of memory: this input needs more memory than the "
                           "process may use (ulimit -v?); see docs/inputs.md#size-limits\n")


def test_peak_memory_grows_linearly_with_the_input() -> None:
    rows = input_memory((20_000, 200_000))
    for row in rows[1::2]:
        # 10,000,000 choices (the schedule limit) and the 64 MiB row limit (about 9.5 million
        # texts) then fit in 2 GiB with room for the interpreter.
        assert row["mib_per_million"] < 180, rows


@pytest.mark.slow
def test_the_largest_documented_schedule_reads_under_2_gib(tmp_path: Path) -> None:
    args = _schedule(tmp_path / "s.json", 10_000_000)
    done = handoff(args, limits={resource.RLIMIT_AS: 2 * GIB}, timeout=3600)
    assert done.returncode == 1 and "schedule diverged" in done.stderr, done.stderr
    over = _schedule(tmp_path / "s1.json", 10_000_001)
    done = handoff(over, limits={resource.RLIMIT_AS: 2 * GIB}, timeout=3600)
    assert done.returncode == 2
    assert done.stderr.endswith("choices: must hold at most 10,000,000 entries (the limit)\n")


@pytest.mark.slow
def test_a_17_mib_packed_log_row_reads_under_1_gib(tmp_path: Path) -> None:
    args = _log_row(tmp_path / "log.jsonl", 17 * 2**20 // 7)
    assert (tmp_path / "log.jsonl").stat().st_size > 17 * 2**20
    done = handoff(args, limits={resource.RLIMIT_AS: GIB}, timeout=3600)
    assert done.returncode == 0, done.stderr
