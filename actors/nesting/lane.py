"""The global ``maxConcurrent`` lane (reference §c15): at most that many child runs run at once;
the others wait in spawn order for a free slot. Pure.

OpenClaw's ``maxConcurrent`` sizes a command lane, and a lane queues work rather than refusing
it, so a spawn past the lane is accepted (registered, counted as an active child of its session)
and its run starts when an earlier run ends (docs/nesting.md).
"""

from __future__ import annotations

from collections import deque

import attrs


@attrs.frozen
class LaneGrant:
    """A queued child run may start now (an in-process wake-up, never on the network)."""


@attrs.define
class Lane:
    slots: int | None  # None: no lane limit
    running: dict[str, str] = attrs.field(factory=dict)  # run id -> its actor, in start order
    waiting: deque[tuple[str, str]] = attrs.field(factory=deque)
    newest_first: bool = False  # the mutant above

    def enter(self, run_id: str, actor: str) -> bool:
        """True: the run starts now; False: it waits for :meth:`leave` to hand it a slot."""
        if self.slots is None or len(self.running) < self.slots:
            self.running[run_id] = actor
            return True
        self.waiting.append((run_id, actor))
        return False

    def leave(self, run_id: str) -> str | None:
        """The run ended (or was aborted while waiting); the actor of the run that takes its
        slot, if one waits."""
        if run_id not in self.running:
            self.waiting = deque(w for w in self.waiting if w[0] != run_id)
            return None
        del self.running[run_id]
        if not self.waiting:
            return None
        next_run, next_actor = self.waiting.pop() if self.newest_first else \
            self.waiting.popleft()
        self.running[next_run] = next_actor
        return next_actor
