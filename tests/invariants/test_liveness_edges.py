"""``eventually-resolved`` at the workload ranges' edges (issue 38 item 5): a batch's wake is
owed from the settle of the last member it carries, and of every run under those (YLD-1,
DEL-6), to the millisecond; a wake later than that by one millisecond is still named."""

from __future__ import annotations

import attrs

from sim.invariants.delivery.reached import LIVENESS_BOUND_MS
from sim.trace import Record
from tests.invariants.regression_traces import check, trace


def _wake_at(records: list[Record], t_ms: int) -> list[Record]:
    """The trace with its one wake's take moved to ``t_ms`` (a model that sent it then)."""
    out = []
    for r in records:
        if r.kind == "requester.accept" and r.data["key"].startswith("announce:requester-settle:"):
            r = attrs.evolve(r, t_ms=t_ms)
        out.append(r)
    return out


def _end(records: list[Record], child: str) -> int:
    return next(r.t_ms for r in records if r.kind == "child.end" and r.data["run_id"] == child)


def test_a_wake_is_owed_from_its_longest_members_end() -> None:
    records = trace("wake-waits-for-longest-member")
    assert check("eventually-resolved", records) == []
    bound = _end(records, "run-2") + LIVENESS_BOUND_MS  # b, the longer member
    assert check("eventually-resolved", _wake_at(records, bound)) == []
    late = check("eventually-resolved", _wake_at(records, bound + 1))
    assert late and all(f"later than {bound} ms" in m for m in late)
    assert {m.split()[0] for m in late} == {"run-1", "run-2"}


def test_a_wake_is_owed_from_the_settle_of_a_run_under_a_member() -> None:
    records = trace("wake-waits-for-member-descendant")
    assert check("eventually-resolved", records) == []
    # helper (run-2) settles when its requester, a's session, takes its completion.
    settled = next(r.t_ms for r in records if r.kind == "requester.accept"
                   and r.data["run_id"] == "run-2")
    assert settled > _end(records, "run-1") + LIVENESS_BOUND_MS
    bound = settled + LIVENESS_BOUND_MS
    assert check("eventually-resolved", _wake_at(records, bound)) == []
    late = check("eventually-resolved", _wake_at(records, bound + 1))
    assert late == [f"run-1 was resolved at {bound + 1} ms, later than {bound} ms "
                    "(40 min after the later of its end and the heal)"]


def test_a_wave_member_is_resolved_by_its_own_expiry_before_a_late_wave() -> None:
    # run-1 and run-4 were given up at their expiry (~32-36 min); a wave held back by a
    # descendant's redriven delivery carried them at 4,895,014 ms, past the 4,800,000 ms bound
    # (seed 61230): their own expiry resolved them in time.
    records = trace("wave-member-expired-first-seed-61230")
    assert check("eventually-resolved", records) == []
    # Forged: the delivery process, down from 30:55 at run-4's expiry, restarts only after the
    # wave: nothing gave run-4 up in time, and the wave was its late resolution.
    restart = next(r for r in records if r.kind == "world.restart" and r.t_ms == 1_933_999)
    forged = [attrs.evolve(r, t_ms=4_900_000) if r is restart else r for r in records]
    assert any(m.startswith("run-4 was resolved at 4895014 ms")
               for m in check("eventually-resolved", forged))
