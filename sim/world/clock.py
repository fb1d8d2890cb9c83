"""Trio's clock in a simulated world: the kernel's virtual time and nothing else."""

from __future__ import annotations

import trio

# What a sleep until a deadline still ahead waits for: never in practice (no Trio deadline is
# ever set; the kernel keeps virtual time), a finite number as ``MockClock(rate=0)`` gives.
FAR_AHEAD_S = 999_999_999.0


class VirtualClock(trio.abc.Clock):
    """Virtual seconds, moved only by the kernel's :meth:`jump` (sim/kernel.py's ``_advance``).

    It gives the times ``trio.testing.MockClock(rate=0)`` gave: that clock adds its jumps up the
    same way, but computes each reading from a wall-clock read times its rate of 0, through
    three Python calls; Trio reads the time once per batch (~100 a default-world seed)."""

    def __init__(self) -> None:
        self.time = 0.0

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return self.time

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return 0.0 if deadline <= self.time else FAR_AHEAD_S

    def jump(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time can't go backwards")
        self.time += seconds
