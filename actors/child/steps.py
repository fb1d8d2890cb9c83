"""What a child's model streams and its session keeps, as plain data: the raw chunks of one
model attempt for a scripted step, the tool events a step's calls produce, the token usage over
the committed messages, and the transcript ``sessions_history`` reads. Pure: the child's shell
(``actors/child/shell.py``) streams these under virtual time.
"""

from __future__ import annotations

from actors.child.output import JsonObject
from actors.messages import StepSpec
from actors.states import StepFinish

# The error an aborted run ends with (the announcement then reads it as "killed").
KILLED_ERROR = "subagent run terminated"


def step_chunks(step: StepSpec, call_prefix: str) -> list[JsonObject]:
    """The raw stream chunks of one model attempt for ``step``, in order."""
    chunks: list[JsonObject] = []
    index = 0
    if step.reasoning:
        chunks += [{"type": "reasoning-delta", "index": index, "text": piece}
                   for piece in _pieces(step.reasoning)]
        chunks.append({"type": "block-end", "index": index,
                       "block": {"type": "reasoning", "text": step.reasoning}})
        index += 1
    if step.text:
        chunks += [{"type": "text-delta", "index": index, "text": piece}
                   for piece in _pieces(step.text)]
        chunks.append({"type": "block-end", "index": index,
                       "block": {"type": "text", "text": step.text}})
        index += 1
    for n in range(step.tool_calls):
        call_id = f"{call_prefix}-call-{n + 1}"
        arguments = f'{{"path": "src/file_{n + 1}.py"}}'
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            chunks.append({"type": "tool-call-delta", "index": index, "id": call_id,
                           "name": "read_file", "argumentsDelta": part})
        chunks.append({"type": "block-end", "index": index,
                       "block": {"type": "tool-call", "id": call_id, "name": "read_file",
                                 "arguments": arguments}})
        index += 1
    tokens_in, tokens_out = step.tokens if step.tokens is not None else (
        200 + 10 * len(chunks), len(step.text) // 4 + 1)
    chunks.append({"type": "usage", "usage": {"inputTokens": tokens_in,
                                              "outputTokens": tokens_out}})
    chunks.append({"type": "finish", "reason": _finish(step)})
    return chunks


def _finish(step: StepSpec) -> JsonObject:
    if step.finish is StepFinish.ERROR:
        failure = {"message": "provider overloaded", "code": "OVERLOADED"}
        return {"kind": "error", "failure": failure}
    if step.finish in (StepFinish.STOP, StepFinish.TOOL_CALLS, StepFinish.MAX_TOKENS):
        return {"kind": step.finish.value}
    return {"kind": "tool-calls" if step.tool_calls else "stop"}


def _pieces(text: str) -> list[str]:
    """Split into up to three deltas at spaces, as a model streams words: the first third of
    the words (by count, rounded down) with the space after them, the second third likewise,
    then the rest."""
    spaces = text.count(" ")
    if spaces < 2:
        return [text]
    third = (spaces + 1) // 3
    first = _after_space(text, third)
    second = _after_space(text, third, first)
    return [text[:first], text[first:second], text[second:]]


def _after_space(text: str, n: int, start: int = 0) -> int:
    """Where the ``n``-th space from ``start`` on ends (``text[start:]`` has at least ``n``).

    Found by halving the range with ``str.count``, which makes no objects: splitting the words
    off made one string per word of a 200,000-character reply (wave 11a's ``split`` and
    ``rsplit`` were still most of a step's cutting)."""
    # text[start:lo] holds ``before`` spaces, fewer than n; text[start:hi] holds n or more.
    lo, hi, before = start, len(text), 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        seen = before + text.count(" ", lo, mid)
        if seen >= n:
            hi = mid
        else:
            lo, before = mid, seen
    return hi


def token_usage(events: list[JsonObject]) -> tuple[int, int] | None:
    """Token usage over the run's committed messages (read once, after the child settles);
    ``None`` when the run ended before any usage report ("tokens unknown", never an invented
    0/0; a reported 0/0 stays zeros)."""
    reports = [event["data"]["usage"] for event in events
               if event["type"] == "assistant/message" and "usage" in event["data"]]
    if not reports:
        return None
    return (sum(usage.get("inputTokens", 0) for usage in reports),
            sum(usage.get("outputTokens", 0) for usage in reports))


def transcript_messages(task: str, events: list[JsonObject]) -> list[JsonObject]:
    """The child session's transcript as ``sessions_history`` reads it: the task, then each
    committed assistant message and tool result, with their usage still attached."""
    # The task opens the run's own turn: after a fork's seeded context or an earlier epoch, so
    # that a reader walking back to the last user message never takes an inherited answer.
    opening: JsonObject = {"role": "user", "content": [{"type": "text", "text": task}]}
    inherited = [i for i, event in enumerate(events)
                 if event["type"] in ("session/end-seed", "agent/inbox/spliced")]
    opens_at = inherited[-1] if inherited else -1  # after the last inherited turn
    messages: list[JsonObject] = [] if inherited else [opening]
    for i, event in enumerate(events):
        data = event["data"]
        if i == opens_at:
            messages.append(opening)
        elif event["type"] == "assistant/message":
            message: JsonObject = {"role": "assistant", "content": data["message"]["content"]}
            if "usage" in data:
                message["usage"] = data["usage"]
            messages.append(message)
        elif event["type"] == "tool/result":
            messages.append({"role": "toolResult", "content": data["message"]["content"]})
    for seq, message in enumerate(messages, start=1):
        message["__openclaw"] = {"seq": seq}
    return messages


def tool_events(chunks: list[JsonObject]) -> list[JsonObject]:
    """Run the step's tool calls: a call event and a result event each."""
    events: list[JsonObject] = []
    for chunk in chunks:
        if chunk["type"] == "block-end" and chunk["block"]["type"] == "tool-call":
            call = chunk["block"]
            events.append({"type": "tool/call", "data": {"callId": call["id"],
                                                         "name": call["name"],
                                                         "arguments": call["arguments"]}})
            events.append({"type": "tool/result", "data": {"message": {
                "role": "tool",
                "content": [{"type": "tool-result", "toolCallId": call["id"],
                             "content": [{"type": "text",
                                          "text": f"TOOL OUTPUT of {call['id']}"}]}]}}})
    return events
