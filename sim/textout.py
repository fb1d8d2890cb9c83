"""Text that can always be written out: a lone surrogate (JSON logs and results files may carry
``"\\ud800"``) becomes its JSON escape ``\\ud800`` instead of making the UTF-8 encoder raise.

For a JSON document written with ``ensure_ascii=False`` the result is still valid JSON that reads
back to the same string (a raw surrogate can only sit inside a JSON string, where ``\\udXXX`` is
its escape); for readable text it shows the code point.
"""

from __future__ import annotations

import re

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
