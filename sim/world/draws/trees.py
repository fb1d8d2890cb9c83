"""The drawn workload's trees (DEL-6), kept as the children are drawn so each draw is O(log n).

A drawn child may be spawned by an earlier child while that one runs. The parent is drawn among
the earlier children that may still take one, in the order they were drawn: not deeper than the
tree depth allows, with fewer children than the fan-out allows, run once only (a re-run session
has two specs under one id, so the parent named must be unambiguous), and running long enough
(two seconds) to spawn during its run. Recomputing that list for every child made drawing n
children cost O(n^2) (a 16,000-child world spent most of its set-up there); this book keeps it
as children are drawn, with the same members in the same order, so the draws are unchanged.
"""

from __future__ import annotations

import attrs
from sortedcontainers import SortedList

from actors.messages import ChildSpec
from sim.choices import Chooser
from sim.scenario import WorkloadDef

# A parent must run this long to spawn a child during its run.
MIN_PARENT_RUN_MS = 2000


class TreeBook:
    """Depths, fan-outs and the open parents of the children drawn so far."""

    def __init__(self, depth: int, fan_out: int) -> None:
        self.max_depth = depth
        self.max_fan_out = fan_out
        self._drawn: list[ChildSpec] = []
        self._depth: dict[str, int] = {}
        self._fan_out: dict[str, int] = {}
        self._position: dict[str, int] = {}  # a child's first spec, by its place in the draw
        # Positions of the drawn specs that may still take a child, in draw order.
        self._open: SortedList = SortedList()
        # When each session's drawn runs should all be over (a reused key waits for them all).
        self._session_free_ms: dict[str, int] = {}
        # The drawn specs by parent, by id and by session key, in draw order: what the tree
        # draws (sim/world/draws/tree.py) used to find by scanning every earlier spec.
        self._children: dict[str, list[ChildSpec]] = {}
        self._specs: dict[str, list[ChildSpec]] = {}
        self._on_session: dict[str, list[ChildSpec]] = {}

    def __len__(self) -> int:
        return len(self._drawn)

    @property
    def open_parents(self) -> int:
        return len(self._open)

    def parent(self, index: int) -> ChildSpec:
        """The ``index``-th open parent, in draw order."""
        position: int = self._open[index]
        return self._drawn[position]

    def children_of(self, parent_id: str) -> list[ChildSpec]:
        """The drawn specs spawned by ``parent_id``, in draw order."""
        return self._children.get(parent_id, [])

    def specs_of(self, child_id: str) -> list[ChildSpec]:
        """The drawn specs of child ``child_id`` (two for a re-run), in draw order."""
        return self._specs.get(child_id, [])

    def on_session(self, key: str) -> list[ChildSpec]:
        """The drawn specs that run on child session ``key``, in draw order."""
        return self._on_session.get(key, [])

    def session_free_ms(self, key: str) -> int:
        """When every drawn run of child session ``key`` should be over."""
        return self._session_free_ms[key]

    def add(self, child: ChildSpec, may_parent: bool = True) -> None:
        """Note a drawn child (its spec as spawned); ``may_parent``: false for a child that never
        runs (a refused spawn, PRV-4), so nothing is spawned under it."""
        position = len(self._drawn)
        self._drawn.append(child)
        key = child.session or child.id
        if child.parent is not None:
            self._children.setdefault(child.parent, []).append(child)
        self._specs.setdefault(child.id, []).append(child)
        self._on_session.setdefault(key, []).append(child)
        end_ms = child.spawn_at_ms + child.run_ms
        self._session_free_ms[key] = max(end_ms, self._session_free_ms.get(key, end_ms))
        if child.id in self._position:
            # A second spec of one session (a re-run): neither may be a parent any more.
            self._open.discard(self._position[child.id])
            return
        self._position[child.id] = position
        depth = 1
        if child.parent is not None:
            depth = self._depth[child.parent] + 1
            fan_out = self._fan_out[child.parent] = self._fan_out.get(child.parent, 0) + 1
            if fan_out >= self.max_fan_out:
                self._open.discard(self._position[child.parent])
        self._depth[child.id] = depth
        if may_parent and depth < self.max_depth and child.run_ms >= MIN_PARENT_RUN_MS:
            self._open.add(position)


def spread(chooser: Chooser, workload: WorkloadDef, child: ChildSpec) -> ChildSpec:
    """A big workload's child goes to one of its top-level requester sessions: the workload's
    requester or ``<agent>:load-<k>`` (drawn on its own stream; one session draws nothing)."""
    if workload.sessions <= 1:
        return child
    k = chooser.choose("workload:sessions", workload.sessions)
    return attrs.evolve(child, requester=load_session(workload.requester, k))


def load_session(requester: str, k: int) -> str:
    """The ``k``-th top-level session of a workload (0 is its own requester)."""
    return requester if k == 0 else f"{requester.rsplit(':', 1)[0]}:load-{k}"
