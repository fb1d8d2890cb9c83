"""The gateway's wait limit on an input in a session's mirror lane (DEL-8) is asked, when due,
whether the input still holds the lane (actors/gateway/shell.py): once the session confirmed it
and no resend of it waits, the timeout is dropped unseen instead of reaching the gateway."""

from __future__ import annotations

import pytest

from actors.gateway.mirror import Mirror, SessionLanes
from sim import scenario
from sim.cli import root as cli
from sim.world import core as world


def test_only_timeouts_with_an_input_to_expire_reach_the_gateway(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fired: list[bool] = []  # per lane timeout handled: did its input still hold the lane?
    expired = SessionLanes.input_expired

    def watched(self: SessionLanes, session: str, key: str) -> list[Mirror]:
        fired.append(self.holds(session, key))
        return expired(self, session, key)

    monkeypatch.setattr(SessionLanes, "input_expired", watched)
    default = scenario.load(cli.default_world_path())
    for seed in range(1, 101):  # a timeout that still finds its input is rare
        world.run(default, seed=seed)
    assert fired and all(fired), f"{fired.count(False)} of {len(fired)} timeouts were moot"


def test_a_lane_holds_an_input_until_it_is_confirmed_or_expires() -> None:
    lanes = SessionLanes()
    lanes.input_sent("s", "k")
    lanes.input_sent("s", "k")  # a resend of the same input
    assert lanes.holds("s", "k") and not lanes.holds("t", "k")
    lanes.input_expired("s", "k")  # one send's wait is over; the resend still waits
    assert lanes.holds("s", "k")
    lanes.input_done("s", "k")
    assert not lanes.holds("s", "k")
