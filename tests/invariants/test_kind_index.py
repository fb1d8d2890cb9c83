"""The oracles' per-kind index of a trace (sim/invariants/index.py): what it hands out, that it
follows the trace it is asked about, and that no oracle reads a kind it does not ask for."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import invariants, scenario
from sim.invariants import observations
from sim.invariants.index import (
    KindIndex,
    judged,
    judging,
    last_of_kind,
    of_kind_prefix,
    of_kinds,
    shared,
)
from sim.scenario import Scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

KINDS = ("fault", "spawn", "child.end", "child.start", "gateway.send")


def _trace(kinds: Sequence[str]) -> list[Record]:
    return [Record(i, i, "someone", kind, {}) for i, kind in enumerate(kinds)]


def _seqs(records: Sequence[Record]) -> list[int]:
    return [r.seq for r in records]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(KINDS), max_size=30),
       st.lists(st.sampled_from((*KINDS, "absent")), max_size=4))
def test_it_hands_out_the_records_of_the_kinds_asked_in_trace_order(
        kinds: list[str], asked: list[str]) -> None:
    trace = _trace(kinds)
    assert _seqs(of_kinds(trace, tuple(asked))) == [r.seq for r in trace if r.kind in asked]
    assert _seqs(of_kind_prefix(trace, "child.")) == [
        r.seq for r in trace if r.kind.startswith("child.")]
    last = [r for r in trace if r.kind == "spawn"]
    assert last_of_kind(trace, "spawn") is (last[-1] if last else None)


def test_a_trace_that_grew_or_another_trace_is_indexed_afresh() -> None:
    trace = _trace(["fault", "spawn"])
    with judging(trace):
        assert _seqs(of_kinds(trace, ("fault",))) == [0]
        trace.append(Record(2, 2, "someone", "fault", {}))
        assert _seqs(of_kinds(trace, ("fault",))) == [0, 2]
        trace[1] = Record(1, 1, "someone", "fault", {})  # replaced in place, as a forged trace is
        assert _seqs(of_kinds(trace, ("fault",))) == [0, 1, 2]
    reads: list[int] = []

    def count(t: Sequence[Record]) -> int:
        reads.append(len(t))
        return len(t)

    other = _trace(["spawn"])
    run = tuple(other)  # what a run hands its oracles: it cannot change, so it is not compared
    with judging(run) as index:
        assert shared(run, "count", count) == shared(run, "count", count) == 1
        assert reads == [1]  # once per run
        assert shared(other, "count", count) == 1  # another sequence: read for the call
        assert reads == [1, 1]
        assert index.readings == {"count": 1}
    assert shared(run, "count", count) == 1  # the run is judged: nothing of it is kept
    assert reads == [1, 1, 1]


def test_no_oracle_keeps_anything_of_a_run_once_it_is_judged(default_world: Scenario) -> None:
    result = world.run(default_world, seed=3)
    records = result.trace.records
    assert judged() is None
    grouped: list[KindIndex | None] = []
    with judging(records) as index:
        grouped.append(judged())
        assert observations.rejections(records) is observations.rejections(records)  # once
    assert grouped == [index]
    assert judged() is None
    assert observations.rejections(records) is not observations.rejections(records)
    assert list(invariants.check(records)) == list(result.violations)
    assert judged() is None


def _verdicts(trace: list[Record]) -> list[tuple[str, ...]]:
    """Every oracle's findings on ``trace`` (or the exception it raised: a stripped trace may
    break an oracle's premises, the same way however it is read)."""
    found: list[tuple[str, ...]] = []
    with judging(trace):
        observations.rejections(trace)
        for invariant in invariants.ALL:
            try:
                found += [(v.invariant, v.message, repr(v.records))
                          for v in invariant.check(trace)]
            except Exception as exc:
                found.append((invariant.name, "raised", type(exc).__name__))
    return found


class _Unread(dict[str, object]):
    """The data of a record of a kind the oracle did not ask for: not to be looked into."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def _refuse(self, *_: object) -> object:
        raise AssertionError(f"read the data of a {self.kind} record, a kind it did not ask for")

    __getitem__ = get = __contains__ = __iter__ = _refuse


class _NotAsked:
    """A record of a kind the oracle did not ask for: it may look at its kind (and take its
    data without looking into it), nothing else."""

    __slots__ = ("data", "kind")

    def __init__(self, record: Record) -> None:
        self.kind = record.kind
        self.data = _Unread(record.kind)

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"read {name} of a {self.kind} record, a kind it did not ask for")


def _everything(self: KindIndex, kinds: tuple[str, ...]) -> list[object]:
    return [r if r.kind in kinds else _NotAsked(r) for r in self.trace]


def _everything_with_prefix(self: KindIndex, prefix: str) -> list[object]:
    return [r if r.kind.startswith(prefix) else _NotAsked(r) for r in self.trace]


def test_no_oracle_reads_a_kind_it_does_not_ask_for(
        monkeypatch: pytest.MonkeyPatch, default_world: Scenario) -> None:
    # Each oracle walks only the kinds it names. Handed every record instead, the others as
    # stand-ins that show their kind and nothing else, it must find exactly the same: its own
    # kind tests skip them before reading anything more. A kind it reads but left out of its
    # list (which the index would skip silently: a lost detection) fails here as soon as one
    # record of that kind passes the oracle's test. The traces of default-world seeds and of
    # every scenario (their rare paths), whole and with every seventh record dropped (which
    # makes the oracles speak).
    runs = [world.run(default_world, seed=seed) for seed in range(1, 16)]
    runs += [world.run(scenario.load(path)) for path in sorted(SCENARIOS.rglob("*.toml"))]
    traces = []
    for run in runs:
        records = list(run.trace.records)
        traces += [records, [r for r in records if r.seq % 7 != 0],
                   [r for r in records if r.seq % 7 != 3]]
    indexed = [_verdicts(list(t)) for t in traces]
    monkeypatch.setattr(KindIndex, "of", _everything)
    monkeypatch.setattr(KindIndex, "of_prefix", _everything_with_prefix)
    whole = [_verdicts(list(t)) for t in traces]
    assert whole == indexed
    assert sum(map(len, indexed)) > 1000  # the oracles had much to say
