"""FMT-6 in simulation: the archive-read oracle catches broken variants of the model.

The breakages are monkeypatches of the model (the store, the requester's reader, the record
limit), never of the oracle; the same scenarios pass unbroken, and the default world reaches
archive reads after cleanup and under reused keys on its own.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

import actors.history
import actors.history.archive
import actors.requester.reads
import actors.store.durable
from sim import scenario
from sim.world import core as world
from tests.conftest import SCENARIOS

READS = "archive-reads.toml"
OVERSIZED = "archive-oversized.toml"


def _found(name: str) -> list[str]:
    result = world.run(scenario.load(SCENARIOS / name))
    assert {v.invariant for v in result.violations} <= {"archive-read"}
    return [v.message for v in result.violations]


@pytest.mark.parametrize("name", [READS, OVERSIZED])
def test_the_scenarios_pass_unbroken(name: str) -> None:
    assert _found(name) == []


def test_catches_a_cleanup_that_deletes_the_archive(monkeypatch: pytest.MonkeyPatch) -> None:
    original = actors.store.durable.RunStore.delete_session

    def delete_everything(self: actors.store.durable.RunStore, session_key: str) -> bool:
        self._archives.pop(session_key, None)
        return original(self, session_key)

    monkeypatch.setattr(actors.store.durable.RunStore, "delete_session", delete_everything)
    messages = _found(READS)
    assert any("after cleanup deleted the live session" in m and "said not_found" in m
               for m in messages)


def test_catches_a_reader_that_pages_the_newest_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = actors.history.read_run_history

    def newest(store: actors.history.ArchiveStore, key: str, run_id: str,
               *args: Any, **kwargs: Any) -> actors.history.ArchiveRead:
        generations = store.generations(key)
        newest_run = json.loads(generations[-1].payload)["runId"] if generations else run_id
        return original(store, key, newest_run, *args, **kwargs)

    monkeypatch.setattr(actors.requester.reads, "read_run_history", newest)
    messages = _found(READS)
    assert any("(a reused key)" in m and "another generation's text" in m for m in messages)


def test_catches_a_reader_that_skips_the_oversized_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(actors.history.archive, "ARCHIVE_RECORD_LIMIT", 64 * 1024 * 1024)
    messages = _found(OVERSIZED)
    assert len(messages) == 2
    assert all("over 8 MiB, so the history is unavailable" in m for m in messages)


def test_catches_an_unavailable_history_reported_as_retryable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = actors.history.read_run_history

    def retryable(*args: Any, **kwargs: Any) -> actors.history.ArchiveRead:
        read = original(*args, **kwargs)
        return attrs.evolve(read, retryable=read.status == "unavailable")

    monkeypatch.setattr(actors.requester.reads, "read_run_history", retryable)
    messages = _found(OVERSIZED)
    assert len(messages) == 2
    assert all("(retryable True)" in m for m in messages)


def test_the_default_world_reads_archives_after_cleanup_and_under_reused_keys(
    default_world: scenario.Scenario,
) -> None:
    seen: set[str] = set()
    for seed in range(1, 21):
        cleaned: set[str] = set()
        generations: dict[str, int] = {}
        for r in world.run(default_world, seed=seed).trace.records:
            if r.kind == "session.cleanup":
                cleaned.add(r.data["session_key"])
            elif r.kind == "child.end":
                archive = r.data["archive"]
                generations[archive["session_key"]] = archive["generation"]
            elif r.kind == "requester.archive" and r.data["status"] == "ok":
                key = r.data["session_key"]
                if key in cleaned:
                    seen.add("after cleanup")
                if generations.get(key, 0) > 1:
                    seen.add("reused key")
    assert seen == {"after cleanup", "reused key"}


def test_the_store_keeps_each_generation_and_the_live_transcript_apart() -> None:
    store = actors.store.durable.RunStore()
    first = [{"role": "user", "content": "first"}]
    second = [{"role": "user", "content": "second"}]
    assert store.save_transcript("k", "run-1", first).generation == 1
    assert store.save_transcript("k", "run-2", second).generation == 2
    assert store.transcript("k") == second  # the live session holds the latest run
    assert store.delete_session("k") and not store.delete_session("k")
    assert store.transcript("k") == []
    kept = store.archives("k")
    assert [(r.generation, json.loads(r.payload)) for r in kept] == [
        (1, {"runId": "run-1", "messages": first}), (2, {"runId": "run-2", "messages": second})]
    store.close()
