"""The frozen-result cap restated for the oracles (reference §c14, §c17; docs/fidelity.md): what
a requester can read of a child's answer, from the answer itself (the child's end or correction
record, which the output oracles tie to its transcript), never from the registry's copy.

An answer over 102,400 bytes of UTF-8 reads as the longest prefix that is whole UTF-8 (no split
character) and leaves room for the notice ``\\n\\n[truncated: frozen completion output exceeded
100KB (<n>KB)]``, then the notice; ``<n>`` is the answer's byte size / 1024, halves rounded up
(JavaScript's ``Math.round``). The kept prefix has been through UTF-8 and back, so a lone
surrogate in it reads as U+FFFD (OpenClaw 2026.9.6, reference §c19). Untrimmed: the seed keeps
whitespace (seed 002). The shared 160,000-character cap (FMT-2) then applies to the payload the
frozen answers are laid out in.
"""

from __future__ import annotations

import functools
import re

_LONE = re.compile("[\ud800-\udfff]")

LIMIT = 102_400


def notice(size: int) -> str:
    kb, rest = divmod(size, 1024)
    return f"\n\n[truncated: frozen completion output exceeded 100KB ({kb + (rest >= 512)}KB)]"


def frozen(answer: str | None) -> str | None:
    """``answer`` as a requester can read it at most (whole when within the cap)."""
    if answer is None or len(answer) <= LIMIT // 4:  # under the cap, whatever its characters
        return answer
    return _frozen_long(answer)


# Several oracles read each answer as frozen (ten call sites), and a long one costs its UTF-8
# encoding (and, over the cap, decoding its head again) at each: the reading of each long answer
# is kept (its hash is computed once, then kept by the string). A default-world seed has a few
# long answers; the cache is small so that it keeps few texts of past runs alive.
@functools.lru_cache(maxsize=32)
def _frozen_long(answer: str) -> str:
    """:func:`frozen` of an answer over ``LIMIT // 4`` characters."""
    raw = answer.encode("utf-8", "surrogatepass")  # a lone surrogate is 3 bytes, as in JS
    if len(raw) <= LIMIT:
        return answer
    tail = notice(len(raw))
    head = raw[:LIMIT - len(tail.encode("utf-8"))]
    for drop in range(4):  # a character is at most 4 bytes: a cut one loses 1 to 3 of them
        try:
            kept = head[:len(head) - drop].decode("utf-8", "surrogatepass")
            return _LONE.sub("\ufffd", kept) + tail
        except UnicodeDecodeError:
            continue
    raise AssertionError("no whole-UTF-8 prefix within 3 bytes of the cut")
