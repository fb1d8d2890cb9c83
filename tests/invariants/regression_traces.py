"""What the oracle tests of the saved regressions share: a saved file's trace, a recorded one,
an oracle's messages on a trace, and a record forged with other data."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

REGRESSIONS = SCENARIOS / "regressions"
TRACES = Path(__file__).parent / "traces"


def trace(name: str) -> list[Record]:
    """The trace of scenarios/regressions/NAME.toml, run on today's model."""
    return list(world.run(scenario.load(REGRESSIONS / f"{name}.toml")).trace)


def recorded(name: str) -> list[Record]:
    """A trace saved as JSON lines (``Record.jsonl``), gzipped, in tests/invariants/traces/."""
    text = gzip.decompress((TRACES / f"{name}.jsonl.gz").read_bytes()).decode("utf-8")
    return [Record(**json.loads(line)) for line in text.splitlines()]


def check(name: str, records: list[Record]) -> list[str]:
    """What the oracle NAME says of ``records``."""
    return [v.message for v in invariants.BY_NAME[name].check(records)]


def edit(record: Record, **data: Any) -> Record:
    """``record`` with these data fields changed (a forged variant's one fact)."""
    return attrs.evolve(record, data={**record.data, **data})
