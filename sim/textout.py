"""Text that can always be written out: a lone surrogate (JSON logs and results files may carry
``"\\ud800"``) becomes its JSON escape ``\\ud800`` instead of making the UTF-8 encoder raise.

For a JSON document written with ``ensure_ascii=False`` the result is still valid JSON that reads
back to the same string (a raw surrogate can only sit inside a JSON string, where ``\\udXXX`` is
its escape); for readable text it shows the code point.

``fit`` makes a rich table fit a terminal's columns without cutting a value (issue 37).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import click

_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with every surrogate code point written as a ``\\udXXX`` escape."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` that never raises on surrogates."""
    click.echo(printable(text), err=err, nl=nl)


# Output a person reads is summarised (issue 26): a field longer than this is cut, its length
# shown; the whole value stays in the JSON forms (`--json`, `--format jsonl`).
FIELD_CHARS = 240


def cut(text: str, limit: int = FIELD_CHARS) -> str:
    """``text``, or its first ``limit`` characters and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def listed(items: Sequence[str], limit: int = FIELD_CHARS) -> str:
    """Comma-separated items up to about ``limit`` characters, then how many more there are."""
    shown: list[str] = []
    length = 0
    for item in items:
        if shown and length + len(item) > limit:
            return ", ".join(shown) + f", … and {len(items) - len(shown)} more"
        shown.append(item)
        length += len(item) + 2
    return ", ".join(shown)


def counted(messages: Iterable[str]) -> list[str]:
    """Each distinct message once, in order of first appearance, with ``(×n)`` if repeated."""
    counts: dict[str, int] = {}
    for message in messages:
        counts[message] = counts.get(message, 0) + 1
    return [message if n == 1 else f"{message} (×{n})" for message, n in counts.items()]


class Streamed:
    """A JSON object too large to build whole (``explore --json``'s ``seed_digests`` for
    millions of seeds): :func:`dump_json` writes its members as ``items()`` yields them."""

    def __init__(self, items: Callable[[], Iterator[tuple[str, Any]]]) -> None:
        self.items = items


def dump_json(document: dict[str, Any], write: Callable[[str], None]) -> None:
    """Write ``document`` exactly as ``json.dumps(document, indent=2)`` would, its
    :class:`Streamed` values a member at a time (at most ``_FLUSH`` lines held)."""
    if not document:
        write("{}")
        return
    lines: list[str] = []

    def put(text: str) -> None:
        lines.append(text)
        if len(lines) >= _FLUSH:
            write("".join(lines))
            lines.clear()

    put("{")
    for n, (key, value) in enumerate(document.items()):
        put(f"{',' if n else ''}\n  {json.dumps(key)}: ")
        if not isinstance(value, Streamed):
            put(json.dumps(value, indent=2).replace("\n", "\n  "))
            continue
        empty = True
        for m, (name, item) in enumerate(value.items()):
            put(f"{'{' if not m else ','}\n    {json.dumps(name)}: {json.dumps(item)}")
            empty = False
        put("{}" if empty else "\n  }")
    put("\n}")
    write("".join(lines))


_FLUSH = 10_000


def fit(table: Any, width: int, drop: Sequence[str] = ()) -> list[str]:
    """Make a rich ``Table`` fit ``width`` columns without cutting a value. A column is never
    narrower than its floor (a ``no_wrap`` column's longest cell, another's longest word), so
    text wraps at spaces and nothing is cut; when even the floors do not fit, the borders go,
    then the columns named in ``drop``, in order. The widest columns give up room first. Returns
    the headers of the columns dropped. Cells must be plain strings (as every handoff table's)."""
    from rich import box

    if _narrowest(table) > width:
        table.box, table.show_edge, table.pad_edge = box.SIMPLE_HEAD, False, False
    dropped: list[str] = []
    for header in drop:
        if _narrowest(table) <= width:
            break
        table.columns[:] = [c for c in table.columns if c.header != header]
        dropped.append(header)
    floors = [_floor(c) for c in table.columns]
    widths = [_widest(c) for c in table.columns]
    excess = sum(widths) - (width - (_narrowest(table) - sum(floors)))
    while excess > 0 and widths != floors:  # rich's own squeeze may cut below a floor
        i = max(range(len(widths)), key=lambda k: (widths[k] - floors[k] > 0, widths[k]))
        widths[i] -= 1
        excess -= 1
    for column, w in zip(table.columns, widths, strict=True):
        column.width = w
    return dropped


def _texts(column: Any) -> list[str]:
    return [str(column.header), *map(str, column._cells)]  # rich keeps a column's cells here


def _widest(column: Any) -> int:
    from rich.cells import cell_len

    return max(cell_len(line) for text in _texts(column) for line in text.splitlines() or [""])


def _floor(column: Any) -> int:
    from rich.cells import cell_len

    if column.no_wrap:
        return _widest(column)
    return max((cell_len(word) for text in _texts(column) for word in text.split()), default=1)


def _narrowest(table: Any) -> int:
    """The table's width with every column at its floor: cells, padding, borders."""
    left, right = table.padding[3], table.padding[1]
    columns = table.columns
    width = sum(_floor(c) + left + right for c in columns)
    if not table.pad_edge and columns:
        width -= left + right
    if table.box is not None:
        width += len(columns) - 1 + (2 if table.show_edge else 0)
    return int(width)
