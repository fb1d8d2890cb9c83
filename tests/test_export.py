"""Trace exports: every format renders the same run, and each is well formed."""

from __future__ import annotations

import json
import re

from sim import export, scenario
from sim.world import core as world
from tests.conftest import SCENARIOS


def _result() -> world.RunResult:
    return world.run(scenario.load(SCENARIOS / "crash-between-send-and-record.toml"))


def test_jsonl_round_trips_every_record() -> None:
    result = _result()
    lines = export.render(result.trace.records, "jsonl").splitlines()
    assert [json.loads(line) for line in lines] == [r.to_json() for r in result.trace]


def test_text_has_one_line_per_record_in_time_order() -> None:
    result = _result()
    lines = export.render(result.trace.records, "text").splitlines()
    assert len(lines) == len(result.trace)
    assert lines[0].startswith("00:00:00.000  harness")
    assert "crash" in lines[[r.kind for r in result.trace].index("crash")]


def test_perfetto_is_trace_event_json_with_balanced_child_spans() -> None:
    result = _result()
    doc = json.loads(export.render(result.trace.records, "perfetto"))
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {r.actor for r in result.trace} == names
    begins = [e for e in events if e["ph"] == "B"]
    ends = [e for e in events if e["ph"] == "E"]
    assert len(begins) == len(ends) == 1
    assert begins[0]["ts"] == 0
    assert ends[0]["ts"] == 45_000_000  # the child ran 45 virtual seconds
    instants = [e for e in events if e["ph"] == "i"]
    assert len(instants) == len(result.trace)


def test_mermaid_declares_every_participant_it_uses() -> None:
    text = export.render(_result().trace.records, "mermaid")
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    declared = set(re.findall(r"participant (A\d+) as ", text))
    used = set(re.findall(r"(A\d+)(?:->>|-\))", text)) | set(re.findall(r"-[>)]+(A\d+):", text))
    used |= set(re.findall(r"Note over (A\d+):", text))
    assert used <= declared
    assert any("CRASH at before-record-delivered" in line for line in lines)
    # The restart finds the evidence saved (DEL-13): it records delivered and sends nothing.
    assert sum("completion run-1" in line for line in lines) == 1
