"""OUT-9: the block assembler: raw stream chunks of one model attempt folded into content blocks.

At a token-limit stop tool calls are dropped (a truncated call cannot run safely); a cancelled
stream keeps only blocks with visible text. Pure: no IO, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from actors.child.output import ContentBlock, JsonObject

StreamChunk = Mapping[str, Any]

# ``String.prototype.trim`` whitespace, which the real assembler uses to decide whether an
# interrupted block is visible. Python's ``str.isspace`` differs (it counts \x1c-\x1f and \x85,
# and not \ufeff), so the set is spelled out.
_JS_WHITESPACE: Final = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def has_visible_text(text: str) -> bool:
    return any(ch not in _JS_WHITESPACE for ch in text)


@attrs.define
class _Partial:
    block_type: str
    # The deltas as they came, joined once when the block is assembled: ``text += delta`` on
    # an attribute copies the whole text so far at every delta (a reply's text is up to
    # 200,000 characters).
    texts: list[str] = attrs.field(factory=list)
    call_id: str | None = None
    call_name: str | None = None
    arguments: str = ""
    # Set by ``block-end``: authoritative, and freezes the partial.
    block: ContentBlock | None = None


class BlockAssembler:
    """Raw chunks to content blocks, in stream order (``BlockAssembler``)."""

    __slots__ = ("_finish", "_order", "_partials", "_usage")

    def __init__(self) -> None:
        # Keyed by block index; ``_order`` keeps first-seen order (dicts, not sets).
        self._partials: dict[int, _Partial] = {}
        self._order: list[int] = []
        self._usage: JsonObject | None = None
        self._finish: JsonObject | None = None

    def _ensure(self, index: int, block_type: str) -> _Partial:
        partial = self._partials.get(index)
        if partial is None:
            partial = _Partial(block_type)
            self._partials[index] = partial
            self._order.append(index)
        return partial

    def push(self, chunk: StreamChunk) -> None:
        kind = chunk["type"]
        if kind == "block-start":
            self._ensure(chunk["index"], chunk["blockType"])
        elif kind in ("text-delta", "reasoning-delta"):
            partial = self._ensure(chunk["index"], "text" if kind == "text-delta" else "reasoning")
            if partial.block is None:  # deltas after block-end are stragglers of a bad adapter
                partial.texts.append(chunk["text"])
        elif kind == "tool-call-delta":
            partial = self._ensure(chunk["index"], "tool-call")
            if partial.block is None:
                partial.call_id = chunk["id"]
                if chunk.get("name"):
                    partial.call_name = chunk["name"]
                partial.arguments += chunk["argumentsDelta"]
        elif kind == "block-end":
            partial = self._ensure(chunk["index"], chunk["block"]["type"])
            if partial.block is None:  # first close wins
                partial.block = dict(chunk["block"])
        elif kind == "usage":
            self._usage = dict(chunk["usage"])
        elif kind == "finish":
            self._finish = dict(chunk["reason"])

    @staticmethod
    def _assemble(partial: _Partial, index: int) -> ContentBlock:
        if partial.block is not None:
            return dict(partial.block)
        if partial.block_type in ("text", "reasoning"):
            return {"type": partial.block_type, "text": "".join(partial.texts)}
        if partial.block_type == "tool-call":
            return {
                "type": "tool-call",
                "id": partial.call_id if partial.call_id is not None else f"call-{index}",
                "name": partial.call_name if partial.call_name is not None else "",
                "arguments": partial.arguments,
            }
        raise ValueError(f"cannot assemble incomplete block of type {partial.block_type!r}")

    def blocks(self) -> list[ContentBlock]:
        """Every block seen; at a ``max-tokens`` finish tool calls are dropped (a truncated call
        cannot run safely). Nothing else is dropped: an empty text block is still a block."""
        assembled = [self._assemble(self._partials[i], i) for i in self._order]
        if self.finish["kind"] == "max-tokens":
            return [block for block in assembled if block["type"] != "tool-call"]
        return assembled

    def interrupted_blocks(self) -> list[ContentBlock]:
        """What a cancelled stream can keep: text/reasoning blocks with visible text only."""
        kept: list[ContentBlock] = []
        for index in self._order:
            partial = self._partials[index]
            kind = partial.block["type"] if partial.block is not None else partial.block_type
            if kind not in ("text", "reasoning"):
                continue
            block = self._assemble(partial, index)
            if has_visible_text(block["text"]):
                kept.append(block)
        return kept

    @property
    def usage(self) -> JsonObject | None:
        return None if self._usage is None else dict(self._usage)

    @property
    def finish(self) -> JsonObject:
        """The finish reason; a stream that ended without one counts as ``stop``."""
        return dict(self._finish) if self._finish is not None else {"kind": "stop"}
