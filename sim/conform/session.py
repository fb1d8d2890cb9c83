"""One conformance run: install what is missing, start the Node driver, run every function
check against the table of deliberate differences, and time it (``handoff bench`` reads the
figures)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from sim.conform import install
from sim.conform.checks import DEFAULT_INPUTS, Check, Outcome, run
from sim.conform.differences import Difference, load
from sim.conform.driver import Driver, known_versions, manifest_path
from sim.conform.functions import CHECKS
from sim.conform.registry.check import run_scenarios, run_seeds
from sim.conform.registry.summary import RegistrySummary, summarize

# Small calls timed for ``handoff bench``'s round-trip figure.
PINGS = 200
REGISTRY = "registry"  # the registry check's name (``--check registry``)
REGISTRY_NEEDS = ("registerSubagentRun", "initSubagentRegistry", "activateSubagentRegistry",
                  "getSubagentRunByRunId", "registerAgentRunContext", "clearAgentRunContext",
                  "buildAgentRunTerminalReplySnapshot")


@attrs.frozen
class Report:
    openclaw: str
    node: str
    manifest: str
    outcomes: tuple[Outcome, ...]
    missing: tuple[str, ...]  # one line per function the version lacks
    table: tuple[Difference, ...]
    round_trips: int
    round_trip_ms: float  # mean of a small call (``ping``) through the driver
    ping_count: int
    seconds: float  # the checks, the driver's start included (not the install)
    registry: RegistrySummary | None = None  # the registry check, when it ran

    @property
    def undocumented(self) -> int:
        return (sum(outcome.undocumented for outcome in self.outcomes)
                + (self.registry.undocumented if self.registry is not None else 0))

    @property
    def complete(self) -> bool:
        return not self.missing and all(o.skipped is None for o in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        return {
            "openclaw": self.openclaw, "node": self.node, "manifest": self.manifest,
            "checks": [outcome.to_json() for outcome in self.outcomes],
            "missing": list(self.missing), "undocumented": self.undocumented,
            "differences": [attrs.asdict(row) for row in self.table],
            "round_trips": self.round_trips, "round_trip_ms": round(self.round_trip_ms, 4),
            "round_trip_pings": self.ping_count,
            "seconds": round(self.seconds, 2),
            "registry": None if self.registry is None else self.registry.to_json(),
        }


def manifest_for(version: str) -> tuple[str, Path]:
    """(manifest version, path): the version's own, else the newest shipped (original names
    have held across releases; a function that moved away is reported missing)."""
    path = manifest_path(version)
    if path is None:
        newest = known_versions()[-1]
        path = manifest_path(newest)
        assert path is not None
        return newest, path
    return version, path


def registry_check(installed: install.Installed, manifest: Path, table: Sequence[Difference],
                   scenarios: Sequence[Path], seeds: Sequence[int],
                   progress: Callable[[str], None]) -> RegistrySummary:
    """The registry check (sim/conform/registry) in a driver of its own: it installs a fake
    clock in that process, which the function checks' real timers must not see."""
    started = time.perf_counter()  # wall-clock ok: the check's duration, reported only
    with Driver(installed, manifest) as driver:
        replayed, not_translated = run_scenarios(driver, table, scenarios, progress)
        by_seed = run_seeds(driver, table, seeds, progress)
    return summarize(len(scenarios), replayed, not_translated, by_seed,
                     time.perf_counter() - started)  # wall-clock ok: reported only


def conform(version: str = install.PINNED_OPENCLAW, count: int = DEFAULT_INPUTS,
            only: Sequence[str] = (), progress: Callable[[str], None] = lambda _: None,
            checks: Sequence[Check] = CHECKS, scenarios: Sequence[Path] = (),
            seeds: Sequence[int] = ()) -> Report:
    """The function checks (``only`` picks some; ``registry`` in it picks the registry check),
    then the registry check over ``scenarios`` and default-world ``seeds`` when either is
    given and it is not left out by ``only``."""
    installed = install.ensure(version)
    manifest_version, manifest = manifest_for(version)
    table = tuple(load())
    started = time.perf_counter()  # wall-clock ok: the run's duration, reported, never used
    outcomes: list[Outcome] = []
    with Driver(installed, manifest) as driver:
        about = driver.request("version")
        before_trips, before_spent = driver.round_trips, driver.round_trip_s
        for _ in range(PINGS):
            driver.request("ping")
        ping_ms = 1000 * (driver.round_trip_s - before_spent) / (driver.round_trips - before_trips)
        missing = tuple(driver.request("missing"))
        for line in missing:
            progress(line)
        absent = {line.split("function ", 1)[1].split(" ", 1)[0] for line in missing}
        for check in checks:
            if only and check.name not in only:
                continue
            lacking = sorted(absent.intersection(check.needs))
            if lacking:
                outcomes.append(Outcome(check.name, skipped=f"missing: {', '.join(lacking)}"))
                continue
            progress(f"{check.name}: {count} generated inputs and {len(check.edges)} edge cases")
            outcomes.append(run(check, driver, table, count))
        trips = driver.round_trips
    registry = None
    if (scenarios or seeds) and (not only or REGISTRY in only):
        if not absent.intersection(REGISTRY_NEEDS):
            registry = registry_check(installed, manifest, table, scenarios, seeds, progress)
    seconds = time.perf_counter() - started  # wall-clock ok: reported only
    return Report(openclaw=version, node=str(about["node"]), manifest=manifest_version,
                  outcomes=tuple(outcomes), missing=missing, table=table, round_trips=trips,
                  round_trip_ms=ping_ms, ping_count=PINGS, seconds=seconds, registry=registry)
