"""The shrinker's structural passes, tried first: each takes away a whole part of the world
(a drawn child with its subtree, a wide batch's children, a scripted child, a timeline entry, a
fault kind, a swarm feature, a session's channel), with the choices and entries that hang on it.
"""

from __future__ import annotations

import attrs

from sim.explore.shrinking.shrink_wide import WIDE_BLOCKS, about, cut, kept_slots, without_wide
from sim.explore.shrinking.shrinker import ShrinkerCore
from sim.world.draws.workload import CHILD_SPAN

# The swarm's per-run draws (sim/world/draws/features.py): index 1 turns a feature on.
FEATURE_STREAM = "swarm:feature:"


class StructurePasses(ShrinkerCore):
    def drop_features(self) -> bool:
        """Turn each swarm feature the run has on off (a feature off draws nothing of its
        own: its children's trees, routes, private options, chunks ... go with it)."""
        improved = False
        for name in self.names():
            if name.startswith(FEATURE_STREAM) and any(self.stream(name)):
                improved = self.with_stream(name, ()) or improved
        return improved

    def _subtree(self, child: str) -> list[str]:
        """``child`` and every child spawned under it, as far down as the run went."""
        tree = [child]
        for spawned, parent in self.best_outcome.parents:
            if parent in tree and spawned not in tree:
                tree.append(spawned)
        return tree

    def drop_drawn_children(self) -> bool:
        """Drop each drawn child (last first) whole: its span of choices, the fault choices
        about it and one from ``[workload] children``; a child with children of its own first
        with its whole subtree."""
        improved = False
        i = len(self.best_outcome.spans) - 1
        while i >= 0:
            spans = [s for s in self.best_outcome.spans if s[0].startswith(CHILD_SPAN)]
            if i < len(spans):
                child = spans[i][0].removeprefix(CHILD_SPAN)
                tree = self._subtree(child)
                if len(tree) > 1:
                    improved = self._drop_children(tree) or improved
                if child in self._drawn():
                    improved = self._drop_children([child]) or improved
            i -= 1
        return improved

    def _drawn(self) -> list[str]:
        return [label.removeprefix(CHILD_SPAN) for label, _ in self.best_outcome.spans
                if label.startswith(CHILD_SPAN)]

    def _drop_children(self, children: list[str]) -> bool:
        workload = self.best.workload
        drawn = [c for c in children if c in self._drawn()]
        if workload is None or not drawn or workload.children <= len(drawn):
            return False
        spans = self.best_outcome.spans
        ranges = [piece for label, pieces in spans if label.startswith(CHILD_SPAN)
                  and label.removeprefix(CHILD_SPAN) in drawn for piece in pieces]
        pieces = ranges + about(spans, drawn)
        streams = cut(self.best_outcome.streams, pieces)
        fewer = attrs.evolve(workload, children=workload.children - len(drawn))
        touched = {name for name, _, _ in pieces}
        return self._drop(streams, [name for name, _ in streams if name not in touched],
                          workload=fewer)

    def drop_wide_children(self) -> bool:
        improved = False
        for size in WIDE_BLOCKS:
            kept = kept_slots(self.best_outcome.streams, self.best_outcome.spans)
            for end in range(len(kept), 0, -size):
                best = self.best_outcome
                block = kept[max(0, end - size):end]
                improved = self.with_streams(without_wide(best.streams, best.spans, block)) \
                    or improved
        return improved

    def drop_channels(self) -> bool:
        """Reach each session by internal injection only: no chunks to record (and no routing
        facts drawn for the workload's requester)."""
        improved = False
        workload = self.best.workload
        if workload is not None and workload.draw_routes:
            improved = self._drop(self.streams, self.names(),
                                  workload=attrs.evolve(workload, draw_routes=False))
        for i, session in enumerate(self.best.sessions):
            if (session.channel, session.route, session.binding, session.hook) != (None,) * 4:
                sessions = list(self.best.sessions)
                sessions[i] = attrs.evolve(session, channel=None, chunk_chars=None, to=None,
                                           thread=None, route=None, binding=None, hook=None)
                improved = self._drop(self.streams, self.names(),
                                      sessions=tuple(sessions)) or improved
        return improved

    def drop_scripted_children(self) -> bool:
        improved = False
        for child in reversed(self.best.children):
            best = self.best
            if len(best.children) == 1 and best.workload is None:
                break  # a world needs a child
            if child not in best.children:
                continue
            improved = self._drop(
                self.streams, self.names(),
                children=tuple(c for c in best.children if c is not child),
                timeline=tuple(e for e in best.timeline if e.child != child.id)) or improved
        return improved

    def drop_timeline_entries(self) -> bool:
        improved = False
        for i in reversed(range(len(self.best.timeline))):
            timeline = self.best.timeline
            if i < len(timeline):
                improved = self.with_streams(self.streams,
                                             timeline=timeline[:i] + timeline[i + 1:]) or improved
        return improved

    def drop_fault_kinds(self) -> bool:
        improved = False
        for kind in reversed(self.best.faults.kinds):
            # With the kind off the run makes none of its choices: drop their lists too.
            own = (f"swarm:{kind}", f"swarm:{kind}:rate", f"fault:{kind}")
            streams = tuple(s for s in self.streams if s[0] not in own)
            faults = attrs.evolve(self.best.faults,
                                  kinds=tuple(k for k in self.best.faults.kinds if k != kind))
            improved = self.with_streams(streams, faults=faults) or improved
        return improved
