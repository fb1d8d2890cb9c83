"""The model's observable vocabulary and what the oracles read agree.

Invariants read the trace's JSON form and never import the model, so nothing but this test ties
the two: every kind an invariant names must be one the model (``actors.events.KINDS``) or the
harness (``sim.trace.HARNESS_KINDS``) emits, and every field an invariant reads of a record must
be one that kind carries. Kinds are found statically (string literals compared with a record's
kind); fields dynamically, by running the invariants over real traces whose records log each
top-level field read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from actors.events import EVENT_TYPES, KINDS
from sim import invariants, scenario
from sim.trace import HARNESS_KINDS, Record
from sim.world import core as world
from tests.conftest import ROOT, SCENARIOS

EMITTED = {**KINDS, **HARNESS_KINDS}


def _kind_literals(tree: ast.AST) -> Iterator[tuple[str, bool]]:
    """(literal, is_prefix) for strings compared with ``<x>.kind`` or a name ``kind``."""

    def is_kind(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "kind") or (
            isinstance(node, ast.Name) and node.id == "kind")

    def strings(node: ast.expr) -> Iterator[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            for element in node.elts:
                yield from strings(element)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and is_kind(node.left):
            for right in node.comparators:
                yield from ((s, False) for s in strings(right))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "startswith" and is_kind(node.func.value)):
            for arg in node.args:
                yield from ((s, True) for s in strings(arg))


def test_every_kind_an_invariant_names_is_emitted() -> None:
    found = []
    for path in sorted((ROOT / "sim" / "invariants").glob("*.py")):
        for literal, prefix in _kind_literals(ast.parse(path.read_text())):
            found.append(literal)
            if prefix:
                assert any(k.startswith(literal) for k in KINDS), (path.name, literal)
            else:
                assert literal in EMITTED, f"{path.name} reads kind {literal!r}, never emitted"
    assert "requester.accept" in found and "child.end" in found  # the scan sees the checks


def test_the_scan_catches_a_made_up_kind() -> None:
    code = 'if r.kind == "delivery.teleported" or r.kind in ("spawn",): pass'
    assert [s for s, _ in _kind_literals(ast.parse(code))] == ["delivery.teleported", "spawn"]


class _Logged(Mapping[str, Any]):
    """A record's data that notes every top-level field an invariant reads."""

    def __init__(self, kind: str, data: Mapping[str, Any], log: set[tuple[str, str]]) -> None:
        self._kind, self._data, self._log = kind, data, log

    def __getitem__(self, key: str) -> Any:
        self._log.add((self._kind, key))
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _traces() -> Iterator[tuple[str, tuple[Record, ...]]]:
    for path in sorted(SCENARIOS.glob("*.toml")):
        yield path.name, world.run(scenario.load(path)).trace.records
    default = scenario.load(ROOT / "sim" / "default_world.toml")
    for seed in range(1, 16):
        yield f"seed {seed}", world.run(default, seed=seed).trace.records


@pytest.fixture(scope="module")
def traces() -> list[tuple[str, tuple[Record, ...]]]:
    return list(_traces())


def test_every_field_an_invariant_reads_is_one_its_kind_carries(
    traces: list[tuple[str, tuple[Record, ...]]],
) -> None:
    reads: set[tuple[str, str]] = set()
    for _, records in traces:
        logged = [Record(r.seq, r.t_ms, r.actor, r.kind, _Logged(r.kind, r.data, reads))
                  for r in records]
        invariants.check(logged)
    assert ("requester.accept", "text") in reads  # the oracles did read through the log
    unknown = sorted((kind, name) for kind, name in reads if name not in EMITTED.get(kind, ()))
    assert unknown == []


def test_every_record_is_of_a_registered_kind_with_its_fields(
    traces: list[tuple[str, tuple[Record, ...]]],
) -> None:
    seen = set()
    for name, records in traces:
        for r in records:
            assert r.kind in EMITTED, f"{name}: unregistered kind {r.kind}"
            assert set(r.data) <= set(EMITTED[r.kind]), (name, r.kind, sorted(r.data))
            seen.add(r.kind)
    assert {cls.kind for cls in EVENT_TYPES} - seen <= {"delivery.stale"}  # rare, but reachable


def test_the_field_log_catches_a_field_the_model_no_longer_emits(
    traces: list[tuple[str, tuple[Record, ...]]],
) -> None:
    # An oracle keying on ``attempt``, a field the model does not emit on an acceptance.
    reads: set[tuple[str, str]] = set()
    _, records = traces[0]
    for r in records:
        data = _Logged(r.kind, r.data, reads)
        if r.kind == "requester.accept":
            data.get("attempt")
    assert ("requester.accept", "attempt") in reads
    assert "attempt" not in EMITTED["requester.accept"]
