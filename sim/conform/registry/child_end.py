"""A child's end: a lifecycle event (``end``, or ``error`` for a failed run; a timeout carries
``status: timeout``) with the child's final reply, as OpenClaw's agent runtime emits it. The
row then holds the run's outcome and its frozen result: the trace's ``result`` under the
frozen-result cap (the cap itself is the ``frozen-cap`` function check's)."""

from __future__ import annotations

from actors.child.frozen import cap_frozen_result
from sim.conform.registry.model import Expect, Replay
from sim.trace import Record

# The model's end status -> the registry's outcome status.
OUTCOME = {"ok": "ok", "error": "error", "timeout": "timeout", "killed": "error"}


def final_text(messages: list[Record]) -> str | None:
    """The child's last visible text (its last message's text blocks), as written."""
    for message in reversed(messages):
        blocks = message.data.get("blocks") or []
        texts = [str(b.get("text", "")) for b in blocks
                 if isinstance(b, dict) and b.get("type") == "text"]
        if texts:
            return "".join(texts)
    return None


def translate(record: Record, replay: Replay, messages: list[Record],
              lost: bool = False) -> None:
    """``messages``: the run's ``child.message`` records so far (its final reply's source when
    the model kept no result, e.g. a silent ``NO_REPLY``). ``lost``: the world made the capture
    miss the child's answer (``answer_lost``, DEL-2's lost answer): the end carries no terminal
    reply and the capture finds none, as when OpenClaw's runtime loses it."""
    data = record.data
    run_id = str(data["run_id"])
    status = str(data["status"])
    result = data.get("result")
    reply = result if isinstance(result, str) else None if lost else final_text(messages)
    replay.steps.append({"t": record.t_ms, "kind": "end", "run": run_id, "status": status,
                         "error": data.get("error"), "reply": reply, "endedAt": record.t_ms})
    frozen = cap_frozen_result(result) if isinstance(result, str) else None
    replay.check(Expect(run_id, record.seq, record.t_ms, record.kind, {
        "row": True, "ended": True, "outcome": OUTCOME.get(status, status), "frozen": frozen}))


def delivered_late(fault: Record, replay: Replay) -> bool:
    """A scripted fault on the child's end message right after it (the model's message faults):
    ``delay`` makes the registry hear of the end ``delay_ms`` later (the end time it carries is
    still the child's), ``duplicate`` makes it hear twice. True when ``fault`` was one."""
    data = fault.data
    if data.get("message") != "ChildEnded" or data.get("dst") != "delivery":
        return False
    ends = [step for step in replay.steps if step["kind"] == "end"]
    if not ends or ends[-1]["t"] > fault.t_ms:
        return False
    end = ends[-1]
    if data.get("kind") == "delay":
        late = fault.t_ms + int(data.get("delay_ms", 0))
        run = end["run"]
        end["t"] = late
        for step in replay.steps:
            if step["kind"] == "check" and step["run"] == run and step["t"] == fault.t_ms:
                step["t"] = late
        return True
    if data.get("kind") == "duplicate":
        replay.steps.append({**end, "t": fault.t_ms})
        replay.duplicated_ends.add(end["run"])
        return True
    return False
