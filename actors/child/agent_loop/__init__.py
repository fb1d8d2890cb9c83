"""OUT-9: the pure core of an agent loop's recording, so the empty terminal message arises alone.

Three ideas, one module each, re-exported here:

* :mod:`~actors.child.agent_loop.assembler`: :class:`BlockAssembler` folds raw stream chunks into
  content blocks (dropping tool calls at a token-limit stop);
* :mod:`~actors.child.agent_loop.streams`: :class:`StreamAccumulator` packs one attempt's
  chunks into the compact V2 stream records;
* :mod:`~actors.child.agent_loop.loop`: :class:`AgentLoop` turns a turn's steps, attempts and
  chunks into the session events the real loop appends, in either encoding.
"""

from actors.child.agent_loop.assembler import BlockAssembler, StreamChunk, has_visible_text
from actors.child.agent_loop.loop import AgentLoop, Encoding, StepOutcome
from actors.child.agent_loop.streams import StreamAccumulator

__all__ = [
    "AgentLoop",
    "BlockAssembler",
    "Encoding",
    "StepOutcome",
    "StreamAccumulator",
    "StreamChunk",
    "has_visible_text",
]
