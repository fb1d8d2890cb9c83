"""``mirror-recorded``: a session that already recorded the mirror of a key owes no second copy
when the same key is confirmed again on it (DEL-8; seeds 47853, 82528, 83346, 83691: the first
acceptance reached the gateway after the delivery timed out, its resend was confirmed too). A
mirror that failed, or one recorded for another key or session, still leaves the later
confirmation owing its own."""

from __future__ import annotations

import attrs

from sim.trace import Record
from tests.invariants.regression_traces import check, edit, trace

NAME = "mirror-confirmed-twice-seed-82528"


def _twice(records: list[Record]) -> tuple[Record, Record, Record]:
    """The first confirmation's queue, its recorded mirror and the same key's second queue."""
    queues = [r for r in records if r.kind == "gateway.mirror_queued"]
    for i, first in enumerate(queues):
        key = (first.data["session"], first.data["key"])
        again = [q for q in queues[i + 1:] if (q.data["session"], q.data["key"]) == key]
        mirror = next((r for r in records if r.kind == "requester.mirror"
                       and r.data["key"] == key[1] and r.seq > first.seq), None)
        if again and mirror is not None and mirror.seq < again[0].seq:
            return first, mirror, again[0]
    raise AssertionError("no key confirmed twice after its mirror was recorded")


def test_a_key_confirmed_again_after_its_mirror_was_recorded_owes_no_second() -> None:
    records = trace(NAME)
    _twice(records)  # the regression still reaches the case
    assert check("mirror-recorded", records) == []


def test_without_the_first_mirror_the_confirmations_are_still_owed_one() -> None:
    records = trace(NAME)
    _, mirror, _ = _twice(records)
    found = check("mirror-recorded", [r for r in records if r is not mirror])
    assert len(found) == 1 and "never recorded" in found[0]


def test_a_mirror_of_another_key_does_not_stand_for_it() -> None:
    records = trace(NAME)
    _, mirror, _ = _twice(records)
    other = edit(mirror, key=mirror.data["key"] + ":other")
    found = check("mirror-recorded", [other if r is mirror else r for r in records])
    assert any("never recorded" in m for m in found)


def test_a_mirror_on_another_session_does_not_stand_for_it() -> None:
    records = trace(NAME)
    _, mirror, _ = _twice(records)
    other = attrs.evolve(mirror, actor="requester:agent:main:other")
    found = check("mirror-recorded", [other if r is mirror else r for r in records])
    assert any("never recorded" in m for m in found)


def test_after_a_failed_mirror_the_next_confirmation_owes_its_own() -> None:
    records = trace(NAME)
    first, mirror, _ = _twice(records)
    failed = Record(mirror.seq, mirror.t_ms, "gateway", "gateway.mirror_failed",
                    {"session": first.data["session"], "run_id": mirror.data["run_id"],
                     "key": mirror.data["key"], "error": "transcript append failed"})
    found = check("mirror-recorded", [failed if r is mirror else r for r in records])
    assert len(found) == 1 and "never recorded" in found[0]
