"""Unfrozen waves (reference §a "Batch / wave / cohort", §c9 "Unfrozen batch"): which settled
children of a requester's non-yield turns are settled together by one settle wake. Pure: no IO,
clock or randomness; the delivery shell (``actors/delivery/wakes/delivery_wakes.py``) feeds it
from the store and hands a wave due a wake to the batch-wake outbox
(``actors/delivery/wakes/batch_wake.py``).

A wave is the connected set of siblings whose execution intervals (start to end) overlap, that
contains the child that just settled. The siblings are the required, public children a top-level
requester session's turns spawned and that a normal finish ended, in one session incarnation; a
yielded turn's children belong to its frozen batch (another rearm generation) and are never in a
wave. A wave waits while one of its siblings has not settled (it still runs, or its own delivery
is still deciding) and, unlike a frozen batch, simply returns while a member's descendants have
not settled: a later settle rechecks. A member that an earlier wave already carried is never
carried again: a sibling joining a wave late makes a wave of its own from what is left.
"""

from __future__ import annotations

import enum

import attrs

from actors import mutants
from actors.records.run_record import RunRecord
from actors.states import DeliveryStatus

_OPEN_END = 2**62  # a sibling still running: its interval has no end yet


@attrs.frozen
class Sibling:
    """What the wave rule reads about one candidate sibling."""

    record: RunRecord
    settled: bool  # ended, its own delivery resolved (cleaned up) and not deciding
    descendants_pending: int  # below it, not yet cleaned up


class Verdict(enum.StrEnum):
    WAKE = "wake"  # two or more required members, or one whose result has not reached it
    CONSUMED = "consumed"  # exactly one required member, already delivered: no wake


@attrs.frozen
class Wave:
    members: tuple[str, ...]  # run ids, sorted: what the wake (or the consumption) carries
    verdict: Verdict
    joined_late: bool  # part of its connected set was carried by an earlier wave


def interval(record: RunRecord) -> tuple[int, int]:
    start = record.started_at_ms if record.started_at_ms is not None else record.created_at_ms
    return start, record.ended_at_ms if record.ended_at_ms is not None else _OPEN_END


def components(records: list[RunRecord], active: frozenset[str] = frozenset()
               ) -> list[list[RunRecord]]:
    """The connected sets of siblings with overlapping execution intervals (touching ends do
    not overlap), each in order of start. ``wave-includes-stale-sibling`` (a known bug) puts
    every sibling in one set, long-settled, non-overlapping older ones included. It reads the
    intervals alone, so that the caller reads what :func:`due` needs only for the sets that
    may owe something (a session's every check would otherwise walk every child's
    descendants: quadratic in a session's children)."""
    # Each interval read once; run ids are unique, so the tuples never compare the records.
    ordered = sorted((interval(r), r.run_id, r) for r in records)
    if mutants.MUTANT_WAVE_STALE_SIBLING in active:
        return [[r for _, _, r in ordered]] if ordered else []
    found: list[list[RunRecord]] = []
    reach = -1
    for (start, end), _, record in ordered:
        if found and start < reach:
            found[-1].append(record)
            if end > reach:
                reach = end
        else:
            found.append([record])
            reach = end
    return found


def due(component: list[Sibling], carried: frozenset[str]) -> Wave | None:
    """What a connected set owes now: None while a member has not settled, while a member's
    descendants have not (an unfrozen wave just returns), or when every member was carried."""
    fresh = [s for s in component if s.record.run_id not in carried]
    if not fresh or not all(s.settled for s in component):
        return None
    if any(s.descendants_pending for s in component):
        return None
    members = tuple(sorted(s.record.run_id for s in fresh))
    late = len(fresh) < len(component)
    alone = fresh[0].record if len(fresh) == 1 else None
    if alone is not None and alone.delivery_status == DeliveryStatus.DELIVERED \
            and alone.delivery_disposition is None:
        return Wave(members, Verdict.CONSUMED, late)
    return Wave(members, Verdict.WAKE, late)


def descendants_wait(component: list[Sibling], carried: frozenset[str]) -> bool:
    """Whether the set would be due but for a member's unsettled descendants."""
    return any(s.record.run_id not in carried for s in component) and \
        all(s.settled for s in component) and any(s.descendants_pending for s in component)
