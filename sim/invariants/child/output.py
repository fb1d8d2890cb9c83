"""OUT invariants: what the child streamed and committed, against what it reported and what each
consumer saw.

They read the child's own trace records (``child.message`` with its blocks and the text its stream
carried, ``child.attempt``, V1 ``child.delta``, ``child.tool_result``, ``child.turn_end``,
``child.abort``, ``child.consumers``, ``child.end``) and restate the rule from them; they never run
the model's fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.frozen import frozen
from sim.invariants.index import of_kind_prefix, of_kinds, shared
from sim.invariants.nesting.findings import own_part, visible
from sim.invariants.observations import asked_runs, shown_block
from sim.trace import Record


@attrs.define
class ChildRun:
    """What the trace shows of one child run: its own events, and what it reported."""

    records: list[Record] = attrs.field(factory=list)
    start: Record | None = None
    last_nonempty_message: Record | None = None
    streamed: list[str] = attrs.field(factory=list)
    tool_texts: list[str] = attrs.field(factory=list)
    turn_end: str | None = None
    turn_cause: str | None = None
    aborted: bool = False
    consumers: Record | None = None
    end: Record | None = None
    inherited: list[Record] = attrs.field(factory=list)
    # :func:`expected_text`, kept once asked (three oracles ask; the run is complete by then).
    expected: tuple[str, str] | None = None


def child_runs(trace: Sequence[Record]) -> dict[str, ChildRun]:
    """Each child run's records, by run id (seven oracles read it: computed once per trace,
    ``index.shared``; read, never change)."""
    return shared(trace, "child.runs", _group)


def _group(trace: Sequence[Record]) -> dict[str, ChildRun]:
    runs: dict[str, ChildRun] = {}
    for r in of_kind_prefix(trace, "child."):
        if not r.kind.startswith("child."):
            continue
        run = runs.get(r.data["run_id"])
        if run is None:
            run = runs[r.data["run_id"]] = ChildRun()
        run.records.append(r)
        kind = r.kind
        if kind == "child.message":
            if r.data["blocks"]:
                run.last_nonempty_message = r
            run.streamed.append(r.data["streamed"])
        elif kind == "child.attempt":
            run.streamed.append(r.data["streamed"])
        elif kind == "child.delta":
            run.streamed.append(r.data["text"])
        elif kind == "child.tool_result":
            run.tool_texts.append(r.data["text"])
        elif kind == "child.turn_end":
            run.turn_end = r.data["reason"]
            run.turn_cause = r.data["cause"]
        elif kind == "child.abort":
            run.aborted = True
        elif kind == "child.consumers":
            run.consumers = r
        elif kind == "child.end":
            run.end = r
        elif kind == "child.start":
            run.start = r
        elif kind == "child.inherited":
            run.inherited.append(r)
    return runs


def expected_text(run: ChildRun) -> tuple[str, str]:
    """OUT-1 restated: (the text a text reader must get, where it comes from)."""
    if run.expected is None:
        run.expected = _expected_text(run)
    return run.expected


def _expected_text(run: ChildRun) -> tuple[str, str]:
    """What :func:`expected_text` keeps."""
    if run.last_nonempty_message is not None:
        blocks = run.last_nonempty_message.data["blocks"]
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        return text, "the last non-empty message"
    streamed = "".join(run.streamed)
    if streamed:
        return streamed, "the streamed text deltas"
    return "", "nothing (no output)"


def text_of(output: list[dict[str, Any]]) -> str:
    return "".join(block.get("text") or "" for block in output if block.get("type") == "text")


def answers_lost(trace: Sequence[Record]) -> set[str]:
    """The runs asked with the answer-lost fault (the capture of their reply is lost)."""
    return {run_id for run_id, asked in asked_runs(trace).items()
            if asked.request.data.get("answer_lost")}


def output_rule(trace: Sequence[Record]) -> list[Violation]:
    violations = []
    lost = answers_lost(trace)
    for run_id, run in child_runs(trace).items():
        end = run.end
        if end is None or end.data["status"] not in ("ok", "timeout"):
            continue  # a failed run reports no text (DEL-14)
        result = end.data["result"] or ""
        expected, source = expected_text(run)
        if run_id in lost and end.data["status"] == "ok" and end.data["result"] is None:
            continue  # the scripted fault: the capture lost the answer (DEL-2 recovers it)
        proof = (*(r.seq for r in run.records
                   if r.kind in ("child.message", "child.attempt", "child.delta")), end.seq)
        if result != expected:
            symptom = ("the child streamed visible text, yet its result is empty (the lost "
                       "partial answer of the specification's case 000); "
                       if not result and expected.strip() else "")
            violations.append(Violation(
                "output-rule", "OUT-1",
                f"{symptom}{run_id} reported {result!r} but {source} gives {expected!r}", proof))
        for tool_text in run.tool_texts:
            if tool_text and tool_text in result:
                violations.append(Violation(
                    "output-rule", "OUT-8",
                    f"{run_id}: tool result text {tool_text!r} entered the child's result",
                    (end.seq,)))
    return violations


def consumers_agree(trace: Sequence[Record]) -> list[Violation]:
    violations = []
    for run_id, run in child_runs(trace).items():
        seen = run.consumers
        if seen is None:
            continue
        views = seen.data
        in_process = views["in_process"]["output"]
        activation = views["activation"]
        if "lastAssistantMessage" in activation and not activation["lastAssistantMessage"]:
            violations.append(Violation(
                "consumers-agree", "OUT-5",
                f"{run_id}: subagent/end.lastAssistantMessage is an empty list; with no output "
                "the field must be absent", (seen.seq,)))
        captured = activation.get("lastAssistantMessage", [])
        for name, output in (("activation capture", captured),
                             ("SDK observer", views["sdk"]["output"])):
            if output != in_process:
                violations.append(Violation(
                    "consumers-agree", "OUT-4",
                    f"{run_id}: the {name} reports {output!r}, the in-process result reader "
                    f"{in_process!r}", (seen.seq,)))
        streamed = "".join(run.streamed)
        acp = text_of(views["acp"]["output"])
        if acp != streamed:
            violations.append(Violation(
                "consumers-agree", "OUT-4",
                f"{run_id}: the ACP observer reports {acp!r}, but the chunk text it received "
                f"was {streamed!r}", (seen.seq,)))
    return violations


# The in-process reader's and the SDK backend's mapping of the turn's end (reference §1.6).
_IN_PROCESS = {"completed": "completed", "max-tokens": "max-tokens", "aborted": "aborted",
               "blocked": "refusal", "error": "error"}
_SDK = {"completed": "completed", "max-tokens": "max-tokens", "aborted": "aborted",
        "blocked": "refusal", "error": "error"}


def stop_reason_kept(trace: Sequence[Record]) -> list[Violation]:
    violations = []
    for run_id, run in child_runs(trace).items():
        if run.end is None or run.consumers is None:
            continue
        turn_end = run.turn_end or "none"
        expected = "aborted" if run.aborted else _IN_PROCESS.get(turn_end, "error")
        reported = {"result": run.end.data["stop_reason"],
                    "in-process reader": run.consumers.data["in_process"]["stopReason"]}
        if not run.aborted:
            reported["SDK observer"] = run.consumers.data["sdk"]["stopReason"]
            expected_sdk = _SDK.get(turn_end, "error")
            if reported["SDK observer"] != expected_sdk:
                violations.append(Violation(
                    "stop-reason-kept", "OUT-6",
                    f"{run_id}: the turn ended {turn_end}, the SDK observer says "
                    f"{reported['SDK observer']}", (run.consumers.seq,)))
            del reported["SDK observer"]
        for name, value in reported.items():
            if value != expected:
                violations.append(Violation(
                    "stop-reason-kept", "OUT-6",
                    f"{run_id}: the turn ended {turn_end}"
                    f"{' after the requester aborted it' if run.aborted else ''}; the {name} "
                    f"says {value}, expected {expected}", (run.end.seq,)))
    return violations


def _shown_result(text: str) -> str | None:
    """The result the requester read: its announce block's data section, un-escaped (None when
    the block carries no result)."""
    block = shown_block(text)
    return None if block is None else block[2]


# OUT-7 (reference/output-selection.md §4), restated: the foreground tool's exact error layout.
_HEADLINES = {"aborted": "subagent run was cancelled", "error": "subagent run failed",
              "max-tokens": "subagent run hit its token limit before finishing",
              "refusal": "subagent declined the task"}


def _sdk_diagnostic(turn_end: str, cause: str | None) -> str | None:
    """The SDK backend's safe diagnostic for how the child's turn ended (reference §3, V2)."""
    category = {"error": "child-error", "none": "missing-terminal"}.get(turn_end)
    if turn_end == "aborted":
        category = "child-disposed" if cause == "disposed" else None
    elif turn_end not in ("completed", "max-tokens", "blocked", "error", "interrupted", "none"):
        category = "child-unknown"
    if category is None:
        return None
    return f"Subagent failure (provider: DSH SDK; stage: session-run; category: {category})"


def _tool_text(stop: str, diagnostic: str | None, partial: str) -> tuple[bool, str]:
    if stop == "completed":
        return False, partial
    text = "Error: " + _HEADLINES.get(stop, f"subagent run ended abnormally ({stop})")
    if diagnostic is not None:
        text += "\nDiagnostic: " + diagnostic
    if partial:
        text += "\nPartial output before the run ended:\n" + partial
    return True, text


def foreground_result(trace: Sequence[Record]) -> list[Violation]:
    violations = []
    for run_id, run in child_runs(trace).items():
        seen = run.consumers
        if seen is None:
            continue
        turn_end = run.turn_end or "none"
        partial, _ = expected_text(run)
        stop = "aborted" if run.aborted else _IN_PROCESS.get(turn_end, "error")
        shown, sdk = seen.data["foreground"], seen.data["sdk"]["toolResult"]
        want = {"in-process": (shown["isError"], shown["text"], _tool_text(stop, None, partial)),
                "SDK": (sdk["isError"], sdk["text"],
                        _tool_text(_SDK.get(turn_end, "error"),
                                   _sdk_diagnostic(turn_end, run.turn_cause), partial))}
        for name, (is_error, text, (want_error, want_text)) in want.items():
            if (is_error, text) != (want_error, want_text):
                violations.append(Violation(
                    "foreground-result", "OUT-7",
                    f"{run_id}: the turn ended {turn_end}; the {name} foreground tool result is "
                    f"{'an error' if is_error else 'ok'} {text!r}, expected "
                    f"{'an error' if want_error else 'ok'} {want_text!r}", (seen.seq,)))
    return violations


def result_intact(trace: Sequence[Record]) -> list[Violation]:
    """DEL-15: the requester gets the child's own result for that run, unchanged.

    Read from what the requester really saw (the announce text in its transcript) against the
    child's own end record. A result cut at the announce cap must be a head of the result (the
    announce-block invariant checks the truncation marker itself).
    """
    # Each receipt by (run, producer end time): the end, then any correction (DEL-12).
    results: dict[tuple[str, int], Record] = {}
    ended: set[str] = set()
    violations = []
    for r in of_kinds(trace, ("child.end", "child.correction", "requester.accept")):
        if r.kind == "child.end":
            results[(r.data["run_id"], r.t_ms)] = r
            ended.add(r.data["run_id"])
        elif r.kind == "child.correction":
            results[(r.data["run_id"], r.data["ended_at"])] = r
        elif r.kind == "requester.accept" and r.data.get("key", "").startswith(
                "announce:requester-settle:"):
            continue  # a batch wake's findings: the wake-message invariant reads them
        elif r.kind == "requester.accept":
            end = results.get((r.data["run_id"], r.data["ended_at"]))
            if end is None:
                if r.data["run_id"] in ended:
                    continue  # a receipt it never produced: newest-receipt-owns reports it
                violations.append(Violation(
                    "result-intact", "DEL-15",
                    f"{r.actor} received a result for {r.data['run_id']} before that run ended",
                    (r.seq,)))
                continue
            # The result as the registry froze it (over 102,400 bytes: a prefix plus a notice,
            # reference §c14).
            frozen_result = frozen(end.data["result"])
            want = frozen_result or ""
            block = shown_block(r.data["text"])
            if block is None:
                continue  # no result block: whether that is right is announce-block's to judge
            _, close, shown = block
            truncated = r.data["text"].find("\n[truncated: ", close) >= 0  # after the block
            # A run that spawned children carries their findings after its own result (DEL-6;
            # findings-scoped judges them): only its own part is compared here.
            shown, findings = own_part(shown, frozen_result)
            if findings is not None:
                if not visible(want):
                    continue  # the findings stand in for a missing own answer (§c8)
                truncated = False
            elif truncated and want and shown.startswith(want + "\n\n"):
                continue  # cut inside the findings that follow the whole own result
            if shown != want and not (truncated and want.startswith(shown)):
                violations.append(Violation(
                    "result-intact", "DEL-15",
                    f"{r.actor} received {shown!r} for {r.data['run_id']}, but the "
                    f"child's result was {want!r}", (end.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("output-rule", "OUT-1", "safety",
              "A child's result is the text of its last non-empty assistant message, else all "
              "the text its streams carried, else nothing; tool results never enter it.",
              output_rule),
    Invariant("consumers-agree", "OUT-4", "safety",
              "The in-process reader, activation capture and SDK observer report the same "
              "output; the ACP observer reports the chunk text it received; no output leaves "
              "lastAssistantMessage absent.", consumers_agree),
    Invariant("stop-reason-kept", "OUT-6", "safety",
              "Every consumer keeps the run's real stop reason through its own mapping.",
              stop_reason_kept),
    Invariant("foreground-result", "OUT-7", "safety",
              "The foreground tool result of a run that did not complete is 'Error: ' plus the "
              "exact headline, the diagnostic line if any, then the partial text; a completed "
              "run shows its text.", foreground_result),
    Invariant("result-intact", "DEL-15", "safety",
              "What reaches the requester is that run's own result, unchanged.", result_intact),
)
