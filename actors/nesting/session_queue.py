"""A child session's own lane: a session runs one run at a time; a run spawned into a session
whose earlier run has not ended waits for it, first spawned first started. Pure.

OpenClaw queues a session's runs in that session's lane (reference: session lane), so a later
``sessions_spawn`` of a child session key whose run is still going (a reused key, FMT-6; a re-run)
is accepted and registered at once and its run starts when the run before it ends, after that
end is recorded. The world spaces reuses by their drawn durations, but a run outlasts its draw
(retries, a lane wait, a queue wait of its own), so only the model can keep them apart.

The session queue comes before the global ``maxConcurrent`` lane (actors/nesting/lane.py): a run
that waits for its session holds no lane slot; once its session is free it asks the lane for one
(docs/nesting.md).
"""

from __future__ import annotations

from collections import deque

import attrs


@attrs.frozen
class SessionGrant:
    """The session's earlier run ended: the queued run may start (an in-process wake-up)."""


@attrs.define
class SessionQueue:
    # child session key -> the run that holds it (started, or waiting for a lane slot)
    holders: dict[str, str] = attrs.field(factory=dict)
    # child session key -> its waiting runs (run id, actor), in spawn order
    waiting: dict[str, deque[tuple[str, str]]] = attrs.field(factory=dict)
    newest_first: bool = False  # the mutant above

    def holder(self, key: str) -> str | None:
        """The run the session ``key`` is running now (None: it is idle)."""
        return self.holders.get(key)

    def enter(self, key: str, run_id: str, actor: str) -> str | None:
        """None: the run holds the session now; else the run it waits behind (the session's
        last run in line), until :meth:`leave` hands it the session."""
        if key not in self.holders:
            self.holders[key] = run_id
            return None
        line = self.waiting.setdefault(key, deque())
        ahead = line[-1][0] if line else self.holders[key]
        line.append((run_id, actor))
        return ahead

    def leave(self, key: str, run_id: str) -> str | None:
        """The run ended (or was aborted while it waited); the actor of the run that takes the
        session next, if one waits."""
        line = self.waiting.get(key)
        if self.holders.get(key) != run_id:
            if line is not None:  # aborted while it waited: it leaves the line
                self.waiting[key] = deque(w for w in line if w[0] != run_id)
            return None
        del self.holders[key]
        if not line:
            self.waiting.pop(key, None)
            return None
        next_run, next_actor = line.pop() if self.newest_first else line.popleft()
        self.holders[key] = next_run
        return next_actor
