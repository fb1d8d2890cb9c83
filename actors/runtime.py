"""What an actor shell sees of the world it runs in: its port.

The shells in ``actors/`` are written against this protocol only; ``sim.kernel`` implements it
under a virtual clock, with every choice recorded. Keeping the seam here means the model never
imports the simulator, and the simulator's invariants never import the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

from actors.events import Event


class Crash(Exception):
    """The process hosting an actor died here; everything in its memory is gone."""

    def __init__(self, point: str) -> None:
        self.point = point
        super().__init__(f"crashed at {point}")


class Port(Protocol):
    """One actor incarnation's connection to the runtime."""

    @property
    def name(self) -> str: ...

    @property
    def incarnation(self) -> int: ...

    @property
    def now_ms(self) -> int: ...

    async def receive(self) -> Any:
        """Wait for the next message or timer payload addressed to this actor."""

    async def sleep(self, delay_ms: int) -> None:
        """Let ``delay_ms`` of virtual time pass; messages arriving meanwhile wait in the
        mailbox."""

    def send(self, dst: str, message: Any) -> None:
        """Hand ``message`` to the network for actor ``dst`` (it may be delayed, lost or
        duplicated)."""

    def set_timer(self, delay_ms: int, payload: Any,
                  wanted: Callable[[], bool] | None = None) -> None:
        """Deliver ``payload`` to this incarnation after ``delay_ms``; dies with the incarnation.
        ``wanted``, if given, is asked when the timer is due: False drops it unseen, as if it
        had been cleared (the actor would have found nothing to do with it)."""

    def crash_point(self, point: str) -> None:
        """An await point where the hosting process may die (raises :class:`Crash`)."""

    def choose(self, subsystem: str, n: int) -> int:
        """A recorded choice among ``n`` options (e.g. retry jitter)."""

    def emit(self, event: Event) -> None:
        """Append a trace record as this actor (the event's JSON form)."""

    def probe(self, name: str) -> None:
        """A rare condition named in ``actors.probes.PROBES`` happened here (counted per run)."""

    def spawn(
        self, nursery: trio.Nursery, name: str, body: Callable[[Port], Awaitable[None]]
    ) -> None:
        """Start actor ``name`` as a task of ``nursery`` (the nursery owns it)."""
