"""``handoff output LOG.jsonl``: a consumer's selection of a child's output from a log (SPEC §4).

The log is streamed once (OUT-10), the child-owned suffix selected (OUT-3) and folded by the
chosen consumer (OUT-4). Bad input exits with status 2 and a ``file:line: field: problem``
message, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import attrs
import click

from actors.child.consumers import (
    AcpObserver,
    InProcessReader,
    LastEpochCapture,
    SdkObserver,
    SubagentResult,
    acp_messages,
    end_data,
    feed,
    sdk_notifications,
)
from actors.child.logs import NO_HEADER, SessionHeader, child_owned, iter_log
from actors.child.output import JsonObject, SessionEvent, text_of
from sim.cli.style import HandoffCommand
from sim.textout import echo

CONSUMERS = ("in-process", "activation", "sdk", "acp")


@attrs.frozen
class Selection:
    """One consumer's verdict on one log."""

    result: SubagentResult
    # ``subagent/end`` data as this consumer would publish it.
    end: JsonObject

    def to_json(self) -> JsonObject:
        document: JsonObject = {"output": self.result.output, "stopReason": self.result.stop_reason}
        if "lastAssistantMessage" in self.end:
            document["lastAssistantMessage"] = self.end["lastAssistantMessage"]
        document["toolResult"] = self.result.tool_result().to_json()
        return document


class _LogEvents:
    """The log's events as one iterator, with the header read before the first event."""

    def __init__(self, path: str) -> None:
        self._items = iter_log(path)
        first = next(self._items)
        self.header = first if isinstance(first, SessionHeader) else NO_HEADER

    def __iter__(self) -> Iterator[SessionEvent]:
        for item in self._items:
            if not isinstance(item, SessionHeader):
                yield item.event


def select_output(path: str, consumer: str) -> Selection:
    """Stream ``path`` once through ``consumer``; raises ``InputError`` on bad input."""
    log = _LogEvents(path)
    events = child_owned(log, log.header)
    session_id = log.header.id if log.header.id is not None else "child"
    if consumer == "in-process":
        result = feed(InProcessReader(), events).result()
        return Selection(result, result.end_data())
    if consumer == "activation":
        end = feed(LastEpochCapture(), events).capture.end()
        output = end.get("lastAssistantMessage", [])
        return Selection(SubagentResult(output, end["stopReason"]), end)
    if consumer == "sdk":
        result = feed(SdkObserver(session_id), sdk_notifications(session_id, events)).result()
    else:
        result = feed(AcpObserver(), acp_messages(session_id, events)).result()
    return Selection(result, end_data(result.output, result.stop_reason))


def _readable(selection: Selection) -> str:
    result = selection.result
    lines = [f"stop reason: {result.stop_reason}"]
    if result.diagnostic is not None:
        lines.append(f"diagnostic: {result.diagnostic}")
    if not result.output:
        lines.append("output: (none)")
    else:
        kinds = ", ".join(str(block.get("type")) for block in result.output)
        lines.append(f"output blocks: {kinds}")
        lines.append("text:")
        lines.append(text_of(result.output))
    tool = result.tool_result()
    lines.append(f"tool result ({'error' if tool.is_error else 'ok'}):")
    lines.append(tool.text)
    return "\n".join(lines)


@click.command("output", cls=HandoffCommand)
@click.argument("log", metavar="LOG.jsonl", type=click.Path(dir_okay=False))
@click.option(
    "--consumer",
    type=click.Choice(CONSUMERS),
    default="in-process",
    show_default=True,
    help="Which consumer's view of the child's output to report.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def output_command(log: str, consumer: str, as_json: bool) -> None:
    """Read a child's session log (V1 or V2) and print the output it selects."""
    selection = select_output(log, consumer)
    if as_json:
        echo(json.dumps(selection.to_json(), ensure_ascii=False))
    else:
        echo(_readable(selection))
