"""OUT-9, OUT-10: one attempt's raw chunks packed into the compact V2 stream records."""

from __future__ import annotations

from actors.child.agent_loop.assembler import StreamChunk
from actors.child.output import JsonObject


class StreamAccumulator:
    """One attempt's chunks packed into compact V2 stream records (``AssistantStreamAccumulator``).

    Consecutive deltas of one kind and block index share a record; the rest stay raw.
    """

    __slots__ = ("_last_time", "_records")

    def __init__(self) -> None:
        self._records: list[JsonObject] = []
        self._last_time = 0

    def push(self, chunk: StreamChunk, time: int) -> None:
        kind = chunk["type"]
        previous = self._records[-1] if self._records else None
        gap = time - self._last_time
        if kind in ("text-delta", "reasoning-delta"):
            packed = "text-chunks" if kind == "text-delta" else "reasoning-chunks"
            if (
                previous is not None
                and previous["type"] == packed
                and previous["index"] == chunk["index"]
            ):
                previous["dt"].append(gap)
                previous["texts"].append(chunk["text"])
            else:
                self._records.append(
                    {
                        "type": packed,
                        "time0": time,
                        "index": chunk["index"],
                        "dt": [],
                        "texts": [chunk["text"]],
                    }
                )
        elif kind == "tool-call-delta" and chunk["id"] != "" and chunk.get("name") != "":
            same_call = (
                previous is not None
                and previous["type"] == "tool-call-chunks"
                and previous["index"] == chunk["index"]
                and previous["id"] == chunk["id"]
                and ("name" in previous) == ("name" in chunk)
                and previous.get("name") == chunk.get("name")
            )
            if same_call:
                assert previous is not None
                previous["dt"].append(gap)
                previous["args"].append(chunk["argumentsDelta"])
            else:
                record: JsonObject = {
                    "type": "tool-call-chunks",
                    "time0": time,
                    "index": chunk["index"],
                    "dt": [],
                }
                record["id"] = chunk["id"]
                if "name" in chunk:
                    record["name"] = chunk["name"]
                record["args"] = [chunk["argumentsDelta"]]
                self._records.append(record)
        else:
            # Block edges, usage, finish and odd tool-call deltas stay raw.
            self._records.append({"type": "chunk", "time": time, "chunk": dict(chunk)})
        self._last_time = time

    def take(self) -> list[JsonObject]:
        """The records, handed over without a copy when the attempt settles: the loop starts
        a new accumulator for the next attempt, so nothing changes them afterwards (copying
        them, as :meth:`snapshot` does, was most of an attempt's settling)."""
        records, self._records = self._records, []
        return records

    def snapshot(self) -> list[JsonObject]:
        out: list[JsonObject] = []
        for record in self._records:
            copy = dict(record)
            for key in ("dt", "texts", "args"):
                if key in copy:
                    copy[key] = list(copy[key])
            out.append(copy)
        return out
