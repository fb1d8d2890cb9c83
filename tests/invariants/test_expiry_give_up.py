"""expiry-give-up-time (issue 34): a retry waits its whole backoff past the 30-minute expiry and the
first resume after the deadline gives up then, as OpenClaw 2026.9.6 does; forged near variants
of that give-up (one backoff early, at the deadline as the old clamp had it, a ms late) are
named, and so is the old clamp itself (mutant backoff-clamped-to-expiry)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
NAME = "expiry-give-up-time"
END_MS = 10_000  # c1 ends at 10 s in backoff-past-expiry.toml
DEADLINE_MS = END_MS + 30 * 60_000


def _run(name: str, **kwargs: Any) -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / name), **kwargs).trace.records)


def _check(records: list[Record]) -> list[str]:
    return [v.message for v in invariants.check(records, [NAME])]


def _moved(records: list[Record], give_up: Record, t_ms: int) -> list[Record]:
    return [attrs.evolve(r, t_ms=t_ms) if r is give_up else r for r in records]


def test_the_give_up_comes_at_the_first_resume_past_the_deadline() -> None:
    records = _run("backoff-past-expiry.toml")
    assert _check(records) == []
    last = [r for r in records if r.kind == "delivery.retry"][-1]
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    # Attempt 9 fails at 1,690 s; its 300 s backoff runs whole past the deadline at 1,810 s.
    assert (last.t_ms, last.data["next_attempt_at_ms"]) == (1_690_000, 1_990_000)
    assert give_up.t_ms == 1_990_000 > DEADLINE_MS
    assert give_up.data["reason"] == "expiry"
    # Forged: one backoff early (at the decision), at the deadline (the old clamp's instant),
    # and a millisecond late: each is named.
    for t_ms in (last.t_ms, DEADLINE_MS, 1_990_001):
        found = _check(_moved(records, give_up, t_ms))
        assert len(found) == 1 and f"given up for its expiry at {t_ms} ms" in found[0], t_ms
        assert "was due at 1990000 ms" in found[0]


def test_the_old_clamp_is_named_by_its_cut_wait() -> None:
    found = _check(_run("mutant-backoff-clamped-to-expiry.toml"))
    assert found == ["run-1: after attempt 9 the registry waits 120000 ms (due at 1810000 ms), "
                     "not its backoff of 300000-300000 ms (never cut at the expiry)"]


def test_a_row_cut_at_the_deadline_is_named_even_when_the_give_up_follows_it() -> None:
    """The clamp's row forged onto the released run: the row says 1,810 s and the give-up
    follows it there; the wait, 120 s after a ninth failure, is not the backoff."""
    records = _run("backoff-past-expiry.toml")
    last = [r for r in records if r.kind == "delivery.retry"][-1]
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    forged = [attrs.evolve(r, data={**r.data, "next_attempt_at_ms": DEADLINE_MS}) if r is last
              else r for r in _moved(records, give_up, DEADLINE_MS)]
    assert _check(forged) == ["run-1: after attempt 9 the registry waits 120000 ms (due at "
                              "1810000 ms), not its backoff of 300000-300000 ms (never cut at "
                              "the expiry)"]


def test_a_private_give_up_before_its_resume_is_named() -> None:
    """A private result's window is known to an outsider only as a bound, so only the first
    bound holds for it: its give-up never comes before the due time of the retry before it."""
    records = _run("private-window-at-its-instant.toml")
    assert _check(records) == []
    last = [r for r in records if r.kind == "delivery.retry"][-1]
    give_up = next(r for r in records if r.kind == "delivery.give_up")
    assert give_up.t_ms == last.data["next_attempt_at_ms"] == 60_000 + 30 * 60_000
    found = _check(_moved(records, give_up, give_up.t_ms - 1))
    assert len(found) == 1 and "was due at 1860000 ms" in found[0]
