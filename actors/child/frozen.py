"""The frozen-result cap (reference §c14, §c17 ``capFrozenResultText``): what the registry keeps
of a child's answer when the run's result is frozen. Pure.

A result over 102,400 bytes of UTF-8 becomes its longest valid UTF-8 prefix (never a split
character) followed by ``\\n\\n[truncated: frozen completion output exceeded 100KB (<n>KB)]``,
prefix and notice together within 102,400 bytes; ``<n>`` is the text's size in bytes / 1024
rounded half up (JavaScript's ``Math.round``, not Python's round-half-even).

OpenClaw trims the text first; the seed keeps a result's whitespace exactly as the child wrote it
(seed 002), so this cap never trims and ``<n>`` is the untrimmed size. The seed's shared
160,000-character payload cap (FMT-2, ``actors.announce.layout``) applies afterwards, to the
payload the capped results are laid out in (docs/fidelity.md).
"""

from __future__ import annotations

import re

from actors.mutants import MUTANT_FROZEN_CAP_CHARS

FROZEN_RESULT_MAX_BYTES = 100 * 1024
# No character is over 4 bytes of UTF-8: a text this short is under the cap unencoded.
_SURELY_UNDER = FROZEN_RESULT_MAX_BYTES // 4
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def frozen_notice(size_bytes: int) -> str:
    """The notice after a capped result: ``Math.round(size / 1024)`` KB, halves up."""
    kilobytes = (size_bytes + 512) // 1024
    return f"\n\n[truncated: frozen completion output exceeded 100KB ({kilobytes}KB)]"


def utf8_size(text: str) -> int:
    """Bytes of UTF-8; a lone surrogate (data a JSON log may carry) counts as the three bytes
    of the replacement character JavaScript's encoder writes for it."""
    return len(text.encode("utf-8", "surrogatepass"))


def cap_frozen_result(text: str | None, mutants: frozenset[str] = frozenset()) -> str | None:
    """``text`` as the registry freezes it: whole when within 102,400 bytes, else a valid
    UTF-8 prefix plus the notice, within 102,400 bytes together. ``None`` stays ``None``."""
    if text is None or len(text) <= _SURELY_UNDER:
        return text
    if MUTANT_FROZEN_CAP_CHARS in mutants:
        if len(text) <= FROZEN_RESULT_MAX_BYTES:
            return text
        notice = frozen_notice(len(text))
        return text[:FROZEN_RESULT_MAX_BYTES - len(notice)] + notice
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= FROZEN_RESULT_MAX_BYTES:
        return text
    notice = frozen_notice(len(raw))
    end = FROZEN_RESULT_MAX_BYTES - len(notice.encode("utf-8"))
    while end > 0 and raw[end] & 0xC0 == 0x80:  # back off a continuation byte: no split
        end -= 1
    # The kept prefix goes through UTF-8 and back, as OpenClaw's Buffer does: a lone surrogate
    # in it comes back as U+FFFD (reference §c19); a text under the cap is kept as it is.
    return _LONE_SURROGATE.sub("\ufffd", raw[:end].decode("utf-8", "surrogatepass")) + notice
