"""``handoff announce RESULTS.json [--json]``: render what a requester reads (SPEC §4).

The ``handoff`` group registers :data:`announce_command`; this module only parses and checks the
input file, calls :func:`actors.announce.format_results` and prints.
"""

from __future__ import annotations

import json

import click

from actors.announce import DEFAULT_CAP, MIN_CAP, STATUSES, ChildResult, format_results
from actors.inputs import Node, decode, json_document
from actors.inputs.files import MAX_RESULTS_BYTES, read_bounded
from sim.cli.style import HandoffCommand
from sim.textout import echo

# Ranges (docs/results.md): timestamps are milliseconds (or seconds) since the epoch, and a
# results file holds at most what one requester could be handed at once.
MAX_RESULTS = 100_000
MAX_CAP = 100_000_000
MAX_TIME = 1e13


def _child(item: Node) -> ChildResult:
    item.check_keys(("session_key", "session_id", "task", "status", "error", "text", "created_at",
                     "ended_at"))
    created_at = float(item.number("created_at", minimum=-MAX_TIME, maximum=MAX_TIME))
    ended_at = item.number("ended_at", None, minimum=-MAX_TIME, maximum=MAX_TIME)
    if ended_at is not None and ended_at < created_at:
        raise item.fail("ended_at", f"{ended_at:g} is before created_at ({created_at:g}): a "
                        "child cannot end before it was created")
    return ChildResult(
        session_key=item.text("session_key", non_empty=True),
        session_id=item.text("session_id", None),
        task=item.text("task", None),
        status=item.text("status", choices=STATUSES),
        error=item.text("error", None),
        text=item.text("text", None),
        created_at=created_at,
        ended_at=None if ended_at is None else float(ended_at),
    )


def load_results(path: str, text: str) -> tuple[list[ChildResult], int]:
    """Parse and check an announce input document; raises :class:`InputError`."""
    _, root = json_document(path, text)
    root.check_keys(("results", "cap"))
    results = root.nodes("results", ...)
    if len(results) > MAX_RESULTS:
        raise root.fail("results", f"must hold at most {MAX_RESULTS:,} entries (the limit)")
    cap = root.integer("cap", DEFAULT_CAP, minimum=MIN_CAP, maximum=MAX_CAP)
    return [_child(item) for item in results], cap


@click.command("announce", cls=HandoffCommand)
@click.argument("results_path", metavar="RESULTS.json", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def announce_command(results_path: str, as_json: bool) -> None:
    """Render the payload a requester reads for these child results."""
    data = read_bounded(results_path, MAX_RESULTS_BYTES)
    children, cap = load_results(results_path, decode(results_path, data))
    result = format_results(children, cap=cap)
    if not as_json:
        echo(result.payload)
        return
    document = {
        "payload": result.payload,
        "length": result.length,
        "shown": [
            {
                "session_key": shown.session_key,
                "truncated": shown.truncated,
                "omitted_chars": shown.omitted_chars,
            }
            for shown in result.shown
        ],
        "summarized": list(result.summarized),
    }
    echo(json.dumps(document, ensure_ascii=False))
