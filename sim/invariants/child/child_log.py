"""OUT-2, OUT-3, OUT-10: the child's session log, and which part of it the consumers read.

A child's log may begin with events that are not its own (``child.inherited``: a fork's seeded
parent turn, or an earlier epoch of a continued session); its own events are traced one by one
(``child.message``, ``child.attempt``, ``child.delta``). These oracles read those records, the
encoding the child was spawned with (``child.start``), and what it and its consumers reported
(``child.consumers`` with the fold traced both ways, ``child.end``); they never run the model's
fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.invariants.child.output import child_runs, expected_text, text_of
from sim.trace import Record


def fold_agrees(trace: Sequence[Record]) -> list[Violation]:
    """OUT-2: the fold fed event by event as the child ran equals the whole-suffix function."""
    violations = []
    for run_id, run in child_runs(trace).items():
        if run.consumers is None:
            continue
        fold = run.consumers.data["fold"]
        if fold["incremental"] != fold["whole"]:
            violations.append(Violation(
                "fold-agrees", "OUT-2",
                f"{run_id}: the incremental fold collected {fold['incremental']!r}, the "
                f"whole-suffix function {fold['whole']!r}", (run.consumers.seq,)))
    return violations


def own_output(trace: Sequence[Record]) -> list[Violation]:
    """OUT-3: only the child's own events count, wherever its log came from."""
    violations = []
    for run_id, run in child_runs(trace).items():
        if run.consumers is None:
            continue
        views = run.consumers.data
        outputs: dict[str, list[dict[str, Any]]] = {
            "in-process reader": views["in_process"]["output"],
            "activation capture": views["activation"].get("lastAssistantMessage", []),
            "SDK observer": views["sdk"]["output"],
            "ACP observer": views["acp"]["output"],
            "whole-suffix function": views["fold"]["whole"] or [],
        }
        proof = (*(r.seq for r in run.inherited), run.consumers.seq)
        for inherited in run.inherited:
            foreign = inherited.data["text"]
            for name, output in outputs.items():
                if foreign in text_of(output):
                    violations.append(Violation(
                        "own-output", "OUT-3",
                        f"{run_id}: the {name} reports text of the {inherited.data['origin']} "
                        f"events ({foreign!r}), which are not the child's own", proof))
        # The suffix the consumers read from the log is exactly the child's own events.
        expected, source = expected_text(run)
        got = text_of(outputs["in-process reader"])
        if got != expected:
            violations.append(Violation(
                "own-output", "OUT-3",
                f"{run_id}: read from its log, the child's output is {got!r}, but {source} of "
                f"its own events gives {expected!r}", proof))
    return violations


def log_encoding(trace: Sequence[Record]) -> list[Violation]:
    """OUT-10: a child writes the encoding it was spawned with, and only that one."""
    violations = []
    for run_id, run in child_runs(trace).items():
        if run.start is None:
            continue
        encoding = run.start.data["encoding"]
        for r in run.records:
            wrong = None
            if encoding == "v1" and r.kind == "child.attempt":
                wrong = "an assistant/attempt event (V1 has none)"
            elif encoding == "v1" and r.kind == "child.message" and r.data["embedded"]:
                wrong = "an assistant/message with an embedded stream"
            elif encoding == "v2" and r.kind == "child.delta":
                wrong = "a top-level assistant/chunk event"
            elif encoding == "v2" and r.kind == "child.message" and not r.data["embedded"]:
                wrong = "an assistant/message without its stream"
            if wrong is not None:
                violations.append(Violation(
                    "log-encoding", "OUT-10",
                    f"{run_id} was spawned to log {encoding.upper()} but wrote {wrong}",
                    (run.start.seq, r.seq)))
                break
    return violations


INVARIANTS = (
    Invariant("fold-agrees", "OUT-2", "safety",
              "The incremental fold and the whole-suffix function agree on every child.",
              fold_agrees),
    Invariant("own-output", "OUT-3", "safety",
              "No consumer's output holds text of a fork's seeded parent events or of an "
              "earlier epoch; read from the log it is the rule over the child's own events.",
              own_output),
    Invariant("log-encoding", "OUT-10", "safety",
              "Each child writes its log in the encoding it was spawned with (V1 chunk events "
              "or V2 embedded streams), never a mix.", log_encoding),
)
