"""Nesting, part 2 (docs/nesting.md): findings of direct children (DEL-6), spawn limits and the
lane (reference §c15), the vanished nested requester (DEL-4), the abort cascade. Each oracle is
quiet on its scenario and catches the broken variant; the pure cores and the new scenario keys
are checked directly."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from actors.errors import InputError
from actors.nesting.findings import select
from actors.nesting.lane import Lane
from actors.nesting.spawn_limits import SpawnLimits, refusal, session_depth
from actors.records.run_record import RunRecord
from actors.states import OutcomeStatus
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _run(name: str, **kwargs: Any) -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / name), **kwargs)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


def _accepts(result: world.RunResult) -> dict[str, Any]:
    runs = {r.run_id: r.child_id for r in result.runs}
    return {runs[r.data["run_id"]]: r for r in result.trace.records
            if r.kind == "requester.accept"}


def test_findings_show_the_latest_row_of_each_child_session_of_this_run_only() -> None:
    result = _run("nested-findings.toml")
    assert result.violations == ()
    text = _accepts(result)["c1"].data["text"]
    body = text[text.index("Child completion results:"):]
    # Creation order; g4 (ANNOUNCE_SKIP) and g1's stale rows left out; g5's older row replaced.
    keys = [line.split(": ", 1)[1] for line in body.splitlines() if line.startswith("session_key")]
    assert [k.rsplit(":", 1)[1] for k in keys] == ["g2", "g3", "g5"]
    assert "status: error: tool sandbox exited with status 137" in body
    assert "status: timeout" in body
    assert "g5 second pass" in body and "g5 first pass" not in body and "g1 " not in body
    assert "g1 third pass" in _accepts(result)["c1again"].data["text"]
    for probe in ("delivery.findings-stale-row", "delivery.findings-older-row",
                  "delivery.findings-failed-child", "delivery.restart-during-deferral"):
        assert probe in result.probes


def test_findings_scoped_catches_a_stale_or_older_row() -> None:
    result = _run("nested-findings.toml", mutants=["stale-findings"])
    assert "findings-scoped" in _names(result)
    assert any("leaked in" in v.message or "not its latest" in v.message
               for v in result.violations)


def test_findings_are_frozen_at_the_first_rendering_and_a_restart_resends_them() -> None:
    result = _run("findings-frozen.toml")
    assert result.violations == ()
    accepts = [r for r in result.trace.records if r.kind == "requester.accept"]
    parent = next(r for r in accepts if r.actor == "requester:agent:main:main")
    # Rendered before g1's correction, sent after it (a restart between): g1's finding as it was.
    assert "three tables lack an index." in parent.data["text"]
    assert "Correction:" not in parent.data["text"]
    # The correction reached c1's session on its own, as g1's next generation.
    corrected = [r for r in accepts if r.data["generation"] == 2]
    assert [r.actor for r in corrected] == ["requester:agent:main:subagent:c1"]
    assert "Correction:" in corrected[0].data["text"]


def test_findings_scoped_catches_findings_rendered_again_after_a_restart() -> None:
    result = _run("findings-frozen.toml", mutants=["findings-rerendered"])
    assert _names(result) == ["findings-scoped"]
    assert "as of the announcement's first rendering" in result.violations[0].message


def test_findings_select_drops_stale_rows_and_keeps_the_latest_row() -> None:
    def row(run_id: str, key: str, created: int, owner: str = "p") -> RunRecord:
        return RunRecord(run_id, run_id, key, "s", "t", True, created, ended_at_ms=created + 1,
                         outcome_status=OutcomeStatus.OK, result_text=run_id,
                         requester_run_id=owner)

    rows = [row("a1", "A", 1), row("b1", "B", 2), row("a2", "A", 3), row("c1", "C", 4)]
    latest = {"A": rows[2], "B": row("b9", "B", 9, owner="other"), "C": rows[3]}
    chosen = select("p", rows, latest.get)
    assert [r.run_id for r in chosen.rows] == ["a2", "c1"]
    assert (chosen.stale, chosen.superseded) == (1, 1)


def test_spawn_limits_refuse_past_depth_and_active_children_and_queue_past_the_lane() -> None:
    result = _run("spawn-limits.toml")
    assert result.violations == ()
    refused = {r.data["child"]: r.data["reason"] for r in result.trace.records
               if r.kind == "spawn.refused"}
    assert refused == {
        "g3": "sessions_spawn has reached max active children for this session (3/3)",
        "gg1": "sessions_spawn is not allowed at this depth (current depth: 2, max: 2)"}
    assert not any(r.data.get("child") in refused for r in result.trace.records
                   if r.kind in ("spawn", "child.start"))
    queued = [r.data["run_id"] for r in result.trace.records if r.kind == "lane.queued"]
    started = [r.data["run_id"] for r in result.trace.records if r.kind == "lane.started"]
    assert queued == started  # first queued, first started
    cascade = [r for r in result.trace.records if r.kind == "abort.cascade"]
    assert cascade and cascade[0].data["children"] == ["g2", "g2b", "g4"]


def test_spawn_limits_catches_one_child_too_many() -> None:
    result = _run("spawn-limits.toml", mutants=["child-limit-off-by-one"])
    assert "spawn-limits" in _names(result)


def test_refusal_and_depth() -> None:
    limits = SpawnLimits(2, 3, None)
    assert session_depth("agent:main:main") == 0
    assert session_depth("agent:main:subagent:a:subagent:b") == 2
    assert refusal(limits, "agent:main:subagent:a", True, 2) is None
    assert "max active children" in (refusal(limits, "agent:main:subagent:a", True, 3) or "")
    assert "depth" in (refusal(limits, "agent:main:subagent:a:subagent:b", True, 0) or "")
    assert "active run" in (refusal(limits, "agent:main:subagent:a", False, 0) or "")
    assert refusal(SpawnLimits(), "agent:main:main", True, 10_000) is None


def test_the_lane_hands_slots_over_in_spawn_order() -> None:
    lane = Lane(2)
    assert [lane.enter(f"r{i}", f"child:{i}") for i in range(4)] == [True, True, False, False]
    assert lane.leave("r3") is None  # aborted while it waited
    assert lane.leave("r0") == "child:2"
    assert lane.leave("r1") is None
    assert list(lane.running) == ["r2"]


def test_a_vanished_requester_falls_back_one_level_or_stays_retryable() -> None:
    result = _run("vanished-requester.toml")
    assert result.violations == ()
    accepts = _accepts(result)
    assert accepts["g3"].actor == "requester:agent:main:main"
    assert "give the user" in accepts["g3"].data["text"]
    # g1 was still running when c1's session was deleted: killed, nothing handed over (§c17).
    assert "g1" not in accepts and "g2" not in accepts
    statuses = {r.child_id: r.delivery_status for r in result.runs}
    assert (statuses["g1"], statuses["g2"]) == ("not_required", "suspended")
    assert "requester.nested-delete-kills-child" in result.probes
    for probe in ("delivery.requester-fallback", "delivery.requester-unavailable",
                  "requester.session-gone"):
        assert probe in result.probes
    # The blocked-completion warning (DEL-9) carries the deleted session's refusal, and keeps
    # it on each retry while g2 (refused once by c2's deleted session) has nowhere to go.
    runs = {r.run_id: r.child_id for r in result.runs}
    warnings = [(runs[r.data["run_id"]], r.data["error"]) for r in result.trace.records
                if r.kind == "delivery.warning"]
    assert ("g3", "session not found: agent:main:subagent:c1") in warnings
    assert {error for child, error in warnings if child == "g2"} == {
        "session not found: agent:main:subagent:b1:subagent:c2"}


def test_requester_fallback_catches_a_dropped_completion() -> None:
    result = _run("vanished-requester.toml", mutants=["fallback-dropped"])
    assert "requester-fallback" in _names(result)
    assert any("no session ever read it" in v.message for v in result.violations)


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
"""


@pytest.mark.parametrize(("extra", "message"), [
    ("[limits]\nmax_spawn_depth = 6\n", "max_spawn_depth"),
    ("[limits]\nmax_children_per_agent = 0\n", "max_children_per_agent"),
    ("[limits]\nmax_children_per_agent = 21\n", "max_children_per_agent"),
    ("[limits]\nmax_concurrent = 0\n", "max_concurrent"),
    ("[limits]\ndraw = true\n", "draw: needs a [workload]"),
    ("[limits]\nmaxdepth = 1\n", "maxdepth"),
    ('[[timeline]]\nat = 1\nevent = "delete-session"\n', "a session deletion names the child"),
])
def test_limits_and_deletions_are_validated(tmp_path: Path, extra: str, message: str) -> None:
    error = _load(tmp_path, HEAD + extra)
    assert message in error and ":" in error.split(" ")[0]


def test_abort_cascades_catches_an_abort_that_leaves_the_children_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import actors.requester.spawning

    assert "abort-cascades" not in _names(_run("spawn-limits.toml"))
    monkeypatch.setattr(actors.requester.spawning, "_cascade", lambda *args, **kwargs: None)
    result = _run("spawn-limits.toml")
    assert "abort-cascades" in _names(result)
