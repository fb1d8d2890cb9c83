"""``redrive-only-suspended`` (issue 34): an operator's redrive takes only a suspended
completion; a failed one, or one pending in its backoff, is refused (OpenClaw 2026.9.6's
``retrySubagentCompletionDelivery``: ``completion delivery is not blocked``). The model does it,
the oracle catches the built-in mutant and a forged near variant, and it reads no registry
record to do so."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sim import scenario
from sim.invariants.delivery.redrive import redrive_only_suspended
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

SCENARIO = SCENARIOS / "redrive-new-generation.toml"


def _run(mutants: Sequence[str] = ()) -> world.RunResult:
    return world.run(scenario.load(SCENARIO), mutants=list(mutants))


def _messages(records: Sequence[Record]) -> list[str]:
    return [v.message for v in redrive_only_suspended(records)]


def _run_of(result: world.RunResult, child: str) -> str:
    return next(r.run_id for r in result.runs if r.child_id == child)


def test_the_model_refuses_a_failed_and_a_paused_run_and_takes_a_suspended_one() -> None:
    result = _run()
    assert result.violations == ()
    records = result.trace.records
    refused = {r.data["run_id"]: r.data["reason"] for r in records
               if r.kind == "delivery.operator_refused"}
    for child in ("c2", "c3"):
        assert refused[_run_of(result, child)] == "completion delivery is not blocked"
    keys = {r.data["key"] for r in records if r.kind == "gateway.send"}
    assert any(k.endswith(f"{_run_of(result, 'c1')}:g2") for k in keys)  # suspended: taken
    assert not any(k.endswith(":g2") and _run_of(result, c) in k for k in keys
                   for c in ("c2", "c3"))
    assert _messages(records) == []


def test_the_oracle_catches_the_mutant_that_takes_failed_and_paused_runs() -> None:
    result = _run(["redrive-not-suspended"])
    messages = [v.message for v in result.violations if v.invariant == "redrive-only-suspended"]
    c2, c3 = _run_of(result, "c2"), _run_of(result, "c3")
    assert any(c2 in m and "still pending" in m for m in messages), messages
    assert any(c3 in m and "ended error" in m for m in messages), messages


def test_the_oracle_catches_a_forged_new_generation_of_the_failed_run() -> None:
    # The near variant: the clean trace, with the failed run's refused redrive followed by a
    # send of its next generation (what taking it would hand the gateway), no registry record.
    result = _run()
    records = list(result.trace.records)
    c3 = _run_of(result, "c3")
    request = next(r for r in records if r.kind == "world.operator"
                   and r.data["run_id"] == c3)
    send = next(r for r in records if r.kind == "gateway.send" and r.data["run_id"] == c3)
    forged = attrs.evolve(send, seq=len(records), t_ms=request.t_ms,
                          data={**send.data, "key": f"{send.data['key']}:g2"})
    at = records.index(request) + 1
    stripped = [r for r in records[:at] if not r.kind.startswith("delivery.")]
    trace = [*stripped, forged, *records[at:]]
    assert any(c3 in m and "must be refused" in m for m in _messages(trace))
    # A correction between the request and the send would explain a new generation (a
    # delivered run reopens by itself): the oracle then says nothing of it.
    correction = attrs.evolve(send, kind="child.correction", seq=len(records) + 1,
                              t_ms=request.t_ms, data={"run_id": c3, "ended_at": request.t_ms,
                                                       "result": "corrected"})
    assert not any(c3 in m for m in _messages([*stripped, correction, forged,
                                               *records[at:]]))
