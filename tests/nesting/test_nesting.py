"""Nested requesters (DEL-4, DEL-6): the oracles catch broken variants and are quiet without them;
the scenario key ``parent`` is validated."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from actors.errors import InputError
from actors.store.durable import RunStore
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def test_a_tree_delivers_each_level_to_its_parent_after_its_descendants() -> None:
    result = _run("nested-children.toml")
    assert result.violations == ()
    accepts = {r.data["run_id"]: r for r in result.trace.records if r.kind == "requester.accept"}
    runs = {r.child_id: r for r in result.runs}
    assert accepts[runs["g1"].run_id].actor == "requester:agent:main:subagent:c1"
    assert "short internal update" in accepts[runs["g1"].run_id].data["text"]
    assert "give the user" in accepts[runs["c1"].run_id].data["text"]
    # c1 waited (deferrals, no attempt spent) until g2 and its grandchild settled.
    assert accepts[runs["c1"].run_id].t_ms > accepts[runs["g2"].run_id].t_ms
    assert accepts[runs["g2"].run_id].t_ms >= accepts[runs["gg1"].run_id].t_ms
    assert runs["c1"].attempt_count == 1
    assert any(r.kind == "delivery.defer" for r in result.trace.records)


def test_nested_instruction_catches_the_top_level_form_for_a_nested_requester() -> None:
    result = _run("nested-children.toml", mutants=["nested-user-instruction"])
    assert _names(result) == ["nested-instruction"]
    assert "without the internal-update instruction" in result.violations[0].message


def test_descendants_first_catches_an_announcement_before_its_descendants() -> None:
    result = _run("nested-children.toml", mutants=["no-descendant-gating"])
    # (findings-scoped too: the registry says it froze the findings before the children settled.)
    assert _names(result) == ["descendants-first", "findings-scoped"]
    assert any("still pending" in v.message for v in result.violations)


def test_descendants_first_catches_a_gate_that_sees_only_direct_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A shallow gate: only direct children count, so a child that is done waits no longer for
    # its own pending child (g2 is done only once gg1 settled; c1 would not wait for gg1).
    def shallow(self: RunStore, record: Any) -> int:
        return sum(1 for r in self.all_runs() if r.requester == record.child_session_key
                   and r.cleaned_up_at_ms is None and r.ended_at_ms is None)

    monkeypatch.setattr(RunStore, "pending_descendants", shallow)
    assert "descendants-first" in _names(_run("nested-children.toml"))


def _load(tmp_path: Path, body: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    try:
        scenario.load(path)
    except InputError as err:
        return str(err)
    return ""


HEAD = """\
    name = "n"
    [[sessions]]
    key = "agent:main:main"
    [[children]]
    id = "c1"
    run_for = 30
    [[children]]
    id = "g1"
"""


@pytest.mark.parametrize(("extra", "message"), [
    ('parent = "zz"\n', "parent: 'zz' is not a child defined above this one"),
    ('parent = "c1"\nrequester = "agent:main:main"\n', "parent: give either requester"),
    ('parent = "c1"\nspawn_at = 30\n', "spawn_at: a nested child is spawned while its parent"),
])
def test_parent_is_validated(tmp_path: Path, extra: str, message: str) -> None:
    assert message in _load(tmp_path, HEAD + textwrap.indent(extra, "    "))


def test_a_nested_child_s_requester_is_its_parent_s_session(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(HEAD) + 'parent = "c1"\nspawn_at = 5\n', encoding="utf-8")
    child = scenario.load(path).children[1]
    assert (child.parent, child.requester) == ("c1", "agent:main:subagent:c1")
