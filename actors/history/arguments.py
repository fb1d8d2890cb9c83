"""``sessions_history``'s arguments as the tool reads them from a call (FMT-5).

The seed names the arguments (``limit``, ``offset``, tool messages only when asked) but not how
a value that is no count reads; OpenClaw 2026.9.6's tool decides that, and the model follows it
(``handoff conform --check sessions-history`` compares the two): a count is a JSON number that
is a safe integer (``2.0`` is 2, as JavaScript holds it) or a string of a decimal number around
which blanks are trimmed; a blank string or no value at all is "not given"; anything else
(``2.5``, ``0`` for ``limit``, ``-1``, past 2**53 - 1, ``true``, a word) refuses the call.
``includeTools`` is taken as JavaScript's truthiness reads it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from actors.announce.labels import js_trim

# Largest integer a double holds exactly, with every smaller one: Number.isSafeInteger's bound.
MAX_SAFE_INTEGER = 2**53 - 1
# A decimal number written out (parseStrictFiniteNumber's pattern): no hex, no "Infinity".
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?", re.IGNORECASE)


def _number(raw: Any) -> float | int | None:
    """The number a value reads as, None when it reads as none (a blank string included)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw  # (past 2**53 - 1 it is no count either way)
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    if isinstance(raw, str):
        text = js_trim(raw)
        if text and _DECIMAL.fullmatch(text):
            value = float(text)
            return value if math.isfinite(value) else None
    return None


def _blank(raw: Any) -> bool:
    return isinstance(raw, str) and js_trim(raw) == ""


def _count(args: Mapping[str, Any], key: str, least: int) -> int | None:
    raw = args.get(key)
    value = _number(raw)
    whole = isinstance(value, int) or (value is not None and value.is_integer())
    if value is not None and whole and least <= value <= MAX_SAFE_INTEGER:
        return int(value)
    if raw is None or _blank(raw):
        return None
    kind = "a positive integer" if least == 1 else "a non-negative integer"
    raise ValueError(f"{key} must be {kind}")


def _truthy(raw: Any) -> bool:
    """JavaScript's ``Boolean(value)``."""
    if isinstance(raw, float):
        return raw != 0 and not math.isnan(raw)
    return bool(raw)


def read_arguments(args: Mapping[str, Any]) -> tuple[int | None, int | None, bool]:
    """``(limit, offset, include_tools)`` from the call's arguments; ValueError with the tool's
    message for a value that is no count of its kind."""
    limit = _count(args, "limit", 1)
    offset = _count(args, "offset", 0)
    return limit, offset, _truthy(args.get("includeTools"))
