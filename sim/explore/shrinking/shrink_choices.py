"""The shrinker's passes after the structural ones: shorten the run (heal its faults earlier,
end it sooner), bring scripted times down, then edit the choices themselves (delete blocks, set
blocks to 0, lower single values by binary search towards 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from sim.explore.shrinking.shrinker import ShrinkerCore

BLOCK_SIZES = (8, 4, 2, 1)
# Scripted times are lowered in whole seconds when they are whole seconds: a saved scenario reads
# "at = 12", not "at = 12.207".
SECOND = 1000


class ChoicePasses(ShrinkerCore):
    def shorten_run(self) -> bool:
        """Heal the faults as early as the failure allows (no fault strikes a retry after it),
        then end the run as early (nothing after the violation it does not need). A run cut
        before it settles cannot fail an invariant that judges the settled state (they check
        the run ended quiescent), so what still fails fails as it did."""
        def heal_at(ms: int) -> bool:
            faults = attrs.evolve(self.best.faults, heal_at_ms=ms)
            return self.with_streams(self.streams, faults=faults)

        def until(ms: int) -> bool:
            return self.with_streams(self.streams, until_ms=ms)

        improved = self.minimize(self.best.faults.heal_at_ms, heal_at, SECOND)
        return self.minimize(self.best.until_ms, until, SECOND, floor=SECOND) or improved

    def lower_times(self) -> bool:
        improved = False
        for i in range(len(self.best.children)):
            def child_at(ms: int, i: int = i) -> bool:
                children = list(self.best.children)
                children[i] = attrs.evolve(children[i], spawn_at_ms=ms)
                return self.with_streams(self.streams, children=tuple(children))
            improved = self.minimize(self.best.children[i].spawn_at_ms, child_at,
                                     SECOND) or improved
        for i in range(len(self.best.timeline)):
            for field in ("at_ms", "delay_ms", "restart_after_ms"):
                def event_at(ms: int, i: int = i, field: str = field) -> bool:
                    timeline = list(self.best.timeline)
                    changes: dict[str, Any] = {field: ms}
                    timeline[i] = attrs.evolve(timeline[i], **changes)
                    return self.with_streams(self.streams, timeline=tuple(timeline))
                value = getattr(self.best.timeline[i], field)
                if value is not None:
                    improved = self.minimize(value, event_at, SECOND) or improved
        return improved

    def delete_blocks(self) -> bool:
        return self._each_block(lambda values, i, size: values[:i] + values[i + size:]
                                if i + size <= len(values) else None)

    def zero_blocks(self) -> bool:
        # A block already all zeros cannot get simpler.
        return self._each_block(lambda values, i, size: values[:i] + (0,) * size + values[i + size:]
                                if any(values[i:i + size]) else None)

    def _each_block(self, change: Callable[[tuple[int, ...], int, int], tuple[int, ...] | None],
                    ) -> bool:
        """Try ``change`` on every block of every stream, from the end back (so an accepted
        change leaves the blocks still to try where they were); True if any was kept."""
        improved = False
        for name in self.names():
            for size in BLOCK_SIZES:
                i = len(self.stream(name)) - size
                while i >= 0:
                    values = self.stream(name)
                    changed = change(values, i, size)
                    if changed is not None and self.with_stream(name, changed):
                        improved = True
                    i -= 1
        return improved

    def lower_choices(self) -> bool:
        improved = False
        for name in self.names():
            for i in reversed(range(len(self.stream(name)))):
                def set_to(value: int, i: int = i, name: str = name) -> bool:
                    values = list(self.stream(name))
                    if i >= len(values):
                        return False
                    values[i] = value
                    return self.with_stream(name, values)
                if i < len(self.stream(name)):
                    improved = self.minimize(self.stream(name)[i], set_to) or improved
        return improved
