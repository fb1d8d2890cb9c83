"""The shapes a translation is made of: the steps the Node end drives, and what the trace
says each checked row holds (an expectation), field by field."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Expect:
    """After the trace's record ``seq`` (``kind``, at ``t_ms``), the run's row holds ``fields``.

    Only the fields the trace states are compared (a retry states the attempt count and the
    next attempt's time; a delivery states only the status)."""

    run: str
    seq: int
    t_ms: int
    kind: str
    fields: dict[str, Any]


@attrs.define
class RunScript:
    """One run as the Node end registers it, with its announce attempts' answers in order."""

    child_session_key: str
    requester_session_key: str
    task: str
    required: bool
    attempts: list[dict[str, Any]] = attrs.field(factory=list)
    # The jitter Math.random hands the backoff after each of this run's retryable attempts
    # (per run: two runs retrying in one instant may back off in either order).
    random: list[float] = attrs.field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"childSessionKey": self.child_session_key,
                "requesterSessionKey": self.requester_session_key, "task": self.task,
                "required": self.required, "attempts": self.attempts, "random": self.random}


@attrs.define
class Replay:
    """A run's translation: steps (spawn, end, check) in trace order, the jitter Math.random
    hands the backoff, one expectation per check step, and the runs left out with why."""

    runs: dict[str, RunScript] = attrs.field(factory=dict)
    steps: list[dict[str, Any]] = attrs.field(factory=list)
    random: list[float] = attrs.field(factory=list)
    expects: list[Expect] = attrs.field(factory=list)
    skipped: dict[str, str] = attrs.field(factory=dict)
    duplicated_ends: set[str] = attrs.field(factory=set)  # runs whose end message came twice

    def check(self, expect: Expect) -> None:
        self.steps.append({"t": expect.t_ms, "kind": "check", "run": expect.run,
                           "expect": len(self.expects)})
        self.expects.append(expect)

    def in_time_order(self) -> None:
        """Steps sorted by time (stable: trace order within an instant), the expectations in
        their check steps' order (a delayed message moves its steps later)."""
        self.steps.sort(key=lambda step: step["t"])
        order = [step["expect"] for step in self.steps if step["kind"] == "check"]
        self.expects = [self.expects[index] for index in order]
        for position, step in enumerate(s for s in self.steps if s["kind"] == "check"):
            step["expect"] = position

    def request(self) -> dict[str, Any]:
        return {"runs": {run_id: run.to_json() for run_id, run in self.runs.items()},
                "steps": self.steps, "random": self.random}
