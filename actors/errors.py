"""Bad input, reported as ``file:line: field: what is wrong`` (exit status 2 at the CLI)."""

from __future__ import annotations

# Every character str.splitlines() breaks at: none may reach a one-line message unescaped.
_LINE_BREAKS = {ord(c): c.encode("unicode_escape").decode("ascii")
                for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """``text`` with its line breaks escaped (a key or value quoted from a file may hold them)."""
    return text.translate(_LINE_BREAKS)


class InputError(Exception):
    """A user-supplied file or argument is malformed.

    ``path`` and ``line`` locate it (either may be ``None`` when unknown), ``field`` names the
    offending field (may be empty). ``str()`` gives the one-line message the CLI prints.
    """

    def __init__(self, path: str | None, line: int | None, field: str, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        parts: list[str] = []
        if self.path is not None:
            parts.append(self.path if self.line is None else f"{self.path}:{self.line}")
        if self.field:
            parts.append(self.field)
        parts.append(self.message)
        return one_line(": ".join(parts))
