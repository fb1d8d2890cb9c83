"""Spawn limits (reference §c15): how deep a tree may grow and how many children one session may
have active at once. Pure.

``maxSpawnDepth`` (1-5, OpenClaw's default 5): depth 0 is a top-level session, depth 1 its
sub-agent, each nested child one more; a session at the maximum depth is a leaf and cannot spawn.
``maxChildrenPerAgent`` (1-20, default 5): the children a session spawned that have not ended yet
(queued or running). ``maxConcurrent`` (default 8) is a lane, not a limit: runs past it wait for a
free slot (actors/nesting/lane.py). A refused spawn is never registered, never runs and is never
announced; the refusal is traced with its reason (docs/nesting.md).
"""

from __future__ import annotations

import attrs

from actors import mutants
from actors.records import keys

DEFAULT_MAX_SPAWN_DEPTH = 5
DEFAULT_MAX_CHILDREN = 5
DEFAULT_MAX_CONCURRENT = 8
DEPTH_RANGE = (1, 5)
CHILDREN_RANGE = (1, 20)
CONCURRENT_RANGE = (1, 1_000)


@attrs.frozen
class SpawnLimits:
    """The limits a world runs under; ``None`` leaves that limit off (a scenario without a
    ``[limits]`` table)."""

    max_spawn_depth: int | None = None
    max_children_per_agent: int | None = None
    max_concurrent: int | None = None


NO_LIMITS = SpawnLimits()
OPENCLAW_DEFAULTS = SpawnLimits(DEFAULT_MAX_SPAWN_DEPTH, DEFAULT_MAX_CHILDREN,
                                DEFAULT_MAX_CONCURRENT)


def session_depth(session_key: str) -> int:
    """0 for a top-level session; each ``:subagent:`` segment is one level (reference §a)."""
    return keys.depth(session_key)


def refusal(limits: SpawnLimits, session_key: str, running: bool, active_children: int,
            switched_on: frozenset[str] = frozenset()) -> str | None:
    """Why the session ``session_key`` may not spawn now, or None. ``running``: the session has
    a run in progress (only a running turn can call sessions_spawn)."""
    if not running:
        return "sessions_spawn needs an active run of the requester session"
    depth = session_depth(session_key)
    if limits.max_spawn_depth is not None and depth >= limits.max_spawn_depth:
        # OpenClaw's wording (subagent-spawn); the reference gives none.
        return (f"sessions_spawn is not allowed at this depth (current depth: {depth}, "
                f"max: {limits.max_spawn_depth})")
    most = limits.max_children_per_agent
    if most is not None:
        if mutants.MUTANT_CHILD_LIMIT_OFF_BY_ONE in switched_on:
            most += 1  # the bug: one more active child than the limit
        if active_children >= most:
            return ("sessions_spawn has reached max active children for this session "
                    f"({active_children}/{limits.max_children_per_agent})")
    return None
