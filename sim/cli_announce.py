"""``handoff announce RESULTS.json [--json]``: render what a requester reads (SPEC §4).

The ``handoff`` group registers :data:`announce_command`; this module only parses and checks the
input file, calls :func:`actors.announce.format_results` and prints.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import click

from actors.announce import DEFAULT_CAP, MIN_CAP, STATUSES, ChildResult, format_results
from actors.errors import InputError

_REQUIRED = ("session_key", "status", "created_at")
_NULLABLE_TEXT = ("session_id", "task", "error", "text")
_KNOWN = (*_REQUIRED, *_NULLABLE_TEXT, "ended_at")


class _Source:
    """The input text with the offsets of each result object, so an error can name its line."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.result_spans: list[tuple[int, int]] = []

    def line_at(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def locate_results(self) -> None:
        """Record where each element of the top-level ``results`` array starts and ends."""
        decoder = json.JSONDecoder()
        match = re.search(r'"results"\s*:\s*\[', self.text)
        if match is None:
            return
        pos = match.end()
        while True:
            while pos < len(self.text) and self.text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(self.text) or self.text[pos] == "]":
                return
            try:
                _, end = decoder.raw_decode(self.text, pos)
            except json.JSONDecodeError:
                return
            self.result_spans.append((pos, end))
            pos = end

    def error(self, index: int | None, key: str | None, field: str, message: str) -> InputError:
        line: int | None = None
        if index is not None and index < len(self.result_spans):
            start, end = self.result_spans[index]
            line = self.line_at(start)
            if key is not None:
                found = re.compile(rf'"{re.escape(key)}"\s*:').search(self.text, start, end)
                if found is not None:
                    line = self.line_at(found.start())
        elif key is not None:
            found = re.compile(rf'"{re.escape(key)}"\s*:').search(self.text)
            if found is not None:
                line = self.line_at(found.start())
        return InputError(self.path, line, field, message)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _child(source: _Source, index: int, item: Any) -> ChildResult:
    where = f"results[{index}]"
    if not isinstance(item, dict):
        raise source.error(index, None, where, f"must be an object, got {_type_name(item)}")
    for key in item:
        if key not in _KNOWN:
            raise source.error(index, key, f"{where}.{key}", "unknown field")
    for key in _REQUIRED:
        if key not in item:
            raise source.error(index, None, f"{where}.{key}", "missing field")
    if not isinstance(item["session_key"], str) or not item["session_key"]:
        raise source.error(
            index, "session_key", f"{where}.session_key", "must be a non-empty string"
        )
    status = item["status"]
    if status not in STATUSES:
        raise source.error(
            index,
            "status",
            f"{where}.status",
            f"must be one of {', '.join(STATUSES)}, got {json.dumps(status)}",
        )
    for key in _NULLABLE_TEXT:
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise source.error(
                index, key, f"{where}.{key}", f"must be a string or null, got {_type_name(value)}"
            )
    if not _is_number(item["created_at"]):
        raise source.error(index, "created_at", f"{where}.created_at", "must be a finite number")
    ended_at = item.get("ended_at")
    if ended_at is not None and not _is_number(ended_at):
        raise source.error(
            index, "ended_at", f"{where}.ended_at", "must be a finite number or null"
        )
    return ChildResult(
        session_key=item["session_key"],
        session_id=item.get("session_id"),
        task=item.get("task"),
        status=status,
        error=item.get("error"),
        text=item.get("text"),
        created_at=float(item["created_at"]),
        ended_at=None if ended_at is None else float(ended_at),
    )


def load_results(path: str, text: str) -> tuple[list[ChildResult], int]:
    """Parse and check an announce input document; raises :class:`InputError`."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(path, err.lineno, "", f"invalid JSON: {err.msg}") from None
    source = _Source(path, text)
    if not isinstance(document, dict):
        raise InputError(path, 1, "", f"must be a JSON object, got {_type_name(document)}")
    if "results" not in document:
        raise InputError(path, 1, "results", "missing field")
    results = document["results"]
    if not isinstance(results, list):
        raise source.error(
            None, "results", "results", f"must be an array, got {_type_name(results)}"
        )
    cap = document.get("cap", DEFAULT_CAP)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < MIN_CAP:
        raise source.error(None, "cap", "cap", f"must be an integer >= {MIN_CAP}")
    source.locate_results()
    return [_child(source, i, item) for i, item in enumerate(results)], cap


@click.command("announce")
@click.argument("results_path", metavar="RESULTS.json", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def announce_command(results_path: str, as_json: bool) -> None:
    """Render the payload a requester reads for these child results."""
    try:
        with open(results_path, encoding="utf-8") as handle:
            text = handle.read()
        children, cap = load_results(results_path, text)
    except OSError as err:
        click.echo(
            str(InputError(results_path, None, "", f"cannot read: {err.strerror}")), err=True
        )
        raise SystemExit(2) from None
    except UnicodeDecodeError:
        click.echo(str(InputError(results_path, None, "", "not UTF-8 text")), err=True)
        raise SystemExit(2) from None
    except InputError as err:
        click.echo(str(err), err=True)
        raise SystemExit(2) from None
    result = format_results(children, cap=cap)
    if not as_json:
        click.echo(result.payload)
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
    click.echo(json.dumps(document, ensure_ascii=False))
