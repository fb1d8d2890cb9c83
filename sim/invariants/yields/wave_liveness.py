"""YLD-1 liveness for unfrozen waves (reference §c9 "Unfrozen batch"): a wave that is due its
settle wake gets it. ``wave-is-overlapping-set`` (sim/invariants/yields/waves.py) judges the wakes
that were sent; this one catches a model that never sends one.

Read from what was asked and what was seen, as the wave oracle reads it (the siblings: required,
public children of a top-level session's turns that ended normally, their execution intervals
and their turns' ends, ``sim/invariants/yields/waves.py``), and when each one and each of its
descendants settled as an outsider sees it (its own end and its own delivery's answer,
``sim/invariants/settled.py``), never the registry's cleanup or the outbox's records: a wave's
wake is a send the gateway was handed (``gateway.send``) keyed
``announce:requester-settle:...`` without ``:yield-``.

Judged: each connected set of overlapping siblings (of one session incarnation, the session
never reset nor deleted; a set of one only when that child's own completion never reached its
requester in its first delivery generation nor, in any generation, by the latest moment its
wave may have been judged at (its own settle and its descendants', and every sibling's that may
have overlapped it while it waited or ran: a quick operator's redrive is taken before that,
seeds 28862, 35745, while a redrive a week on is taken after the wave was due), and it does not
announce nothing: reference §c9 consumes a one-child wave already delivered without a wake)
whose turns had all ended before the first of
them ended, so none of them could be settled alone before the others were siblings (no earlier
wave could carry part of it: the joined-late case is left to the wave oracle), once every
member and every member's descendant settled as an outsider can tell (a trail that does not
say when: not judged) and the world ran on for ten minutes after that. Such a set is owed one
wake naming exactly its members.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.observations import Asked, announces_nothing, asked_runs, key_runs
from sim.invariants.settled import UNKNOWN, own_settle
from sim.invariants.yields.seen import _descendants, _Seen, _seen
from sim.invariants.yields.waves import _Child, _overlap, _read, _sibling
from sim.trace import Record

# A due wave's wake goes out at once (no deferral: a wave just returns while a descendant is
# pending); a busy requester or a restart delays it by minutes at most.
GRACE_MS = 600_000


def _components(siblings: list[_Child]) -> list[list[_Child]]:
    found: list[list[_Child]] = []
    left = list(siblings)
    while left:
        component = [left.pop(0)]
        frontier = list(component)
        while frontier:
            current = frontier.pop()
            joined = [c for c in left if _overlap(current, c)]
            left = [c for c in left if c not in joined]
            component += joined
            frontier += joined
        found.append(component)
    return found


def wave_woken(trace: Sequence[Record]) -> list[Violation]:
    seen = _seen(trace)
    if seen.end is None:
        return []
    waves = _read(trace)
    asked = asked_runs(trace)
    woken = {(r.data["requester"], tuple(sorted(key_runs(r.data["key"]))))
             for r in seen.wake_sends if ":yield-" not in r.data["key"]}
    groups: dict[tuple[str, int], list[_Child]] = {}
    for child in waves.children.values():
        if _sibling(waves, child, seen.end.seq):
            groups.setdefault((child.session, child.incarnation), []).append(child)
    spawned = {r.data["run_id"]: r.t_ms for r in trace if r.kind == "spawn"}
    violations = []
    for (session, _), siblings in groups.items():
        if seen.lifecycle.get(session):
            continue  # reset or deleted: its waves may close without a wake
        for component in _components(siblings):
            ready = _ready(component, waves.finished, seen, asked)
            if ready is not None and len(component) == 1 and _taken_by(
                    seen.trail.get(component[0].run_id, []),
                    _due(component[0], siblings, spawned, ready, seen, asked)):
                continue  # already delivered (a quick redrive's take) when the wave was due
            if ready is None or seen.end.t_ms < ready + GRACE_MS:
                continue
            members = tuple(sorted(c.run_id for c in component))
            if (f"requester:{session}", members) not in woken:
                violations.append(Violation(
                    "wave-woken", "YLD-1",
                    f"the wave {', '.join(members)} of {session} (overlapping siblings of turns "
                    f"that ended normally) had settled by {ready} ms, yet no settle wake "
                    f"naming them was sent by {seen.end.t_ms} ms",
                    tuple(c.end.seq for c in component if c.end is not None)))
    return violations


def _first_generation(seen: _Seen, run_id: str) -> list[Record]:
    """The run's own trail up to its first send under another key than its first one: what its
    first delivery generation showed. Whether a wave of it alone is owed a wake is decided as
    that generation settles (reference §c9: a lone child *already* delivered is consumed); a
    take of a later generation a redrive or a correction sent (DEL-12, DEL-16: a week later in
    the default world) does not make it delivered back then. (An operator's request alone cuts
    nothing: a redrive found in flight sends the same key again, seeds 2419 and 7012.)"""
    trail = seen.trail.get(run_id, [])
    first = next((r.data["key"] for r in trail if r.kind == "gateway.send"), None)
    cut = next((i for i, r in enumerate(trail)
                if r.kind == "gateway.send" and r.data["key"] != first), len(trail))
    return trail[:cut]


def _settled_by(run_ids: Sequence[str], seen: _Seen, asked: dict[str, Asked]) -> int | None:
    """When every run named and every descendant of it had settled as an outsider tells; None
    when one never did or its trail does not say when."""
    latest = 0
    for top in run_ids:
        for run_id in (top, *_descendants(seen, top)):
            own = own_settle(seen.ends.get(run_id), seen.trail.get(run_id, []),
                             asked.get(run_id), member=False)
            if own is None or own == UNKNOWN:
                return None
            latest = max(latest, own)
    return latest


def _due(member: _Child, siblings: list[_Child], spawned: dict[str, int], ready: int,
         seen: _Seen, asked: dict[str, Asked]) -> int | None:
    """The latest moment a lone member's wave may have been judged at (None: no bound). The
    wave rule (actors/yields/waves.py) waits while a sibling whose interval overlaps it then has
    not settled, and a sibling still waiting for its lane spans from its spawn to no end yet: so
    a sibling spawned before the member ended and not ended before it started may hold the wave
    (transitively) until that sibling settled too (seed 35745); and the wave is judged no
    earlier than its own settle (``ready``: seeds 28862, 35751, 36784)."""
    held = [member]
    left = [c for c in siblings if c is not member]
    grew = True
    while grew:
        grew = False
        for c in list(left):
            if any(_may_hold(c, h, spawned) for h in held):
                held.append(c)
                left.remove(c)
                grew = True
    others = _settled_by([c.run_id for c in held if c is not member], seen, asked)
    return None if others is None else max(ready, others)


def _may_hold(c: _Child, h: _Child, spawned: dict[str, int]) -> bool:
    """Whether sibling ``c``'s interval as the wave rule read it at some point (from its spawn
    while it waited, its end open while it ran) overlapped ``h``'s."""
    h0, h1 = h.interval()
    c0 = min(spawned.get(c.run_id, c.interval()[0]), c.interval()[0])
    c1 = c.interval()[1]
    return c0 < h1 and h0 < c1


def _taken_by(trail: Sequence[Record], due: int | None) -> bool:
    """Whether the run's own completion reached its requester (any generation) by ``due``
    (None: ever): a wave of it alone then is consumed (reference §c9)."""
    return any(r.kind in ("requester.accept", "requester.duplicate")
               and (due is None or r.t_ms <= due) for r in trail)


def _taken(trail: Sequence[Record]) -> bool:
    """Whether the trail shows the run's own completion reaching its requester (taken, or
    answered as a duplicate of one taken)."""
    return any(r.kind in ("requester.accept", "requester.duplicate") for r in trail)


def _ready(component: list[_Child], finished: dict[str, Record], seen: _Seen,
           asked: dict[str, Asked]) -> int | None:
    """When every member and every member's descendant had settled, for a component judged
    (members whose turns all ended before the first of them ended; a lone member not already
    delivered); None when it is not judged."""
    if any(c.end is None for c in component):
        return None
    lone = _first_generation(seen, component[0].run_id) if len(component) == 1 else None
    if lone is not None and own_settle(component[0].end, lone, asked.get(component[0].run_id),
                                       member=False, crashes=[down for down, _ in seen.downtime]
                                       ) in (None, UNKNOWN):
        # Its first generation never settled as an outsider tells (a newer receipt reopened it
        # while a try was out, say; or the delivery process died between its last send and
        # that send's answer, so no live process heard the answer and the wave was never
        # judged on it, seeds 44506, 51564, 71589, 77937): read its whole trail, as before.
        lone = seen.trail.get(component[0].run_id, [])
    if lone is not None and (_taken(lone) or announces_nothing(
            component[0].end.data.get("result") if component[0].end is not None else None)):
        # Reference §c9: a wave of exactly one required child already delivered is consumed
        # with no wake (so is one that announces nothing); one whose own delivery never
        # reached its requester is owed the wake like any other.
        return None
    turns_ended = max(finished[c.turn or ""].t_ms for c in component)
    if turns_ended >= min(c.end.t_ms for c in component if c.end is not None):
        return None
    ready = 0
    for c in component:
        for run_id in (c.run_id, *_descendants(seen, c.run_id)):
            trail = lone if lone is not None and run_id == c.run_id \
                else seen.trail.get(run_id, [])
            own = own_settle(seen.ends.get(run_id), trail, asked.get(run_id), member=False)
            if own is None or own == UNKNOWN:
                return None
            ready = max(ready, own)
    return ready


INVARIANTS = (
    Invariant("wave-woken", "YLD-1", "liveness",
              "A settled wave of overlapping siblings of normal turns (all of them siblings "
              "before the first ended; a lone one only if not already delivered) gets one "
              "settle wake naming exactly them.",
              wave_woken),
)
