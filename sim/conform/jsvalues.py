"""Values as JavaScript holds them, for comparing the model's answers with OpenClaw's: a
high-low surrogate pair is one character in JavaScript, where Python keeps two lone surrogates
apart (JSON carries both the same way). Kept apart so that the checks, the table's explainers
and the sessions_history sides share it without an import cycle."""

from __future__ import annotations

import re
from typing import Any

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _joined(pair: re.Match[str]) -> str:
    text = pair.group()
    high, low = text[0], text[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def js_string(text: str) -> str:
    """A string as JavaScript holds it: each high-low surrogate pair one character (Python
    keeps two lone surrogates apart; JSON carries both the same way)."""
    return _PAIR.sub(_joined, text)


def js_value(value: Any) -> Any:
    """A JSON-shaped value (strings, lists, tuples, dicts) with every string as JavaScript
    holds it."""
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, tuple | list):
        return type(value)(js_value(item) for item in value)
    if isinstance(value, dict):
        return {js_value(k): js_value(v) for k, v in value.items()}
    return value
