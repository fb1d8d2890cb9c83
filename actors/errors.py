"""Bad input, reported as ``file:line: field: what is wrong`` (exit status 2 at the CLI)."""

from __future__ import annotations


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
        return ": ".join(parts)
