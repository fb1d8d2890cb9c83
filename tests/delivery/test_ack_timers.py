"""An ack timeout asks, when due, whether its transport try still waits for its answer
(actors/delivery/shell.py's ``_AckTimers``): none reaches the core for a try already answered,
refused or superseded, while the timeouts of unanswered tries still fire."""

from __future__ import annotations

from typing import Any

import pytest

from actors.delivery.edge import AckTimeout
from actors.delivery.table import DeliveryCore
from sim import scenario
from sim.cli import root as cli
from sim.world import core as world


def test_only_the_timeouts_of_unanswered_tries_reach_the_delivery_core(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fired: list[bool] = []  # per ack timeout handled: was its try still waiting for its answer?
    handle = DeliveryCore.handle

    def watched(self: DeliveryCore, event: Any, now_ms: int) -> Any:
        if isinstance(event, AckTimeout):
            fired.append(self.awaits_ack(event.run_id, event.token))
        return handle(self, event, now_ms)

    monkeypatch.setattr(DeliveryCore, "handle", watched)
    default = scenario.load(cli.default_world_path())
    results = [world.run(default, seed=seed) for seed in range(1, 41)]
    assert sum(r.probes.get("delivery.ack-timeout", 0) for r in results) > 0
    assert fired and all(fired), f"{fired.count(False)} of {len(fired)} timeouts were moot"
