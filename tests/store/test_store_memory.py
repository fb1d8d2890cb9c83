"""What a big run keeps, made smaller without changing what anyone reads (issue 14,
docs/performance-log.md): archived transcripts are deflated in their rows and read back byte for byte;
the runs are read one row at a time in registration order; a dead actor's port lets go of its
Trio task and mailbox; the run records ``world.run`` returns share the trace's strings."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from actors.records.run_record import RunRecord
from actors.store import codec as store_codec
from actors.store.durable import RunStore
from actors.store.sqlite import SqliteStore
from sim import trace as trace_mod
from sim.choices import Chooser
from sim.cli.args import load_world
from sim.kernel import Kernel, run_trio
from sim.trace import Trace
from sim.world import core as world

KEY = "agent:main:subagent:c1"


def _record(run_id: str, task: str = "t") -> RunRecord:
    return RunRecord(run_id=run_id, child_id="c1", child_session_key=KEY,
                     requester="agent:main:main", task=task, required=True, created_at_ms=0)


def _stored_sizes(store: RunStore | SqliteStore) -> list[int]:
    """The bytes each archive of KEY takes in the store, oldest first."""
    if isinstance(store, SqliteStore):
        return [n for (n,) in store._db.execute(
            "SELECT length(payload) FROM archives ORDER BY generation")]
    return [len(stored) for _, stored in sorted(store._archives[KEY].items())]


@pytest.mark.parametrize("backend", [RunStore, SqliteStore])
def test_an_archive_reads_back_the_payload_it_saved_deflated_or_not(
        monkeypatch: pytest.MonkeyPatch, backend: type[RunStore | SqliteStore]) -> None:
    monkeypatch.setattr(store_codec, "DEFLATE_ARCHIVES_FROM", 1)  # the first stays as it is
    store = backend()
    text = "the child's answer, with filler " * 40 + "• 12 tokens"
    messages = [{"role": "user", "content": [{"type": "text", "text": "task"}]},
                {"role": "assistant", "content": [{"type": "text", "text": text}]}]
    plain = store.save_transcript(KEY, "run-1", messages)
    deflated = store.save_transcript(KEY, "run-2", messages)
    assert store.archives(KEY) == [plain, deflated]
    assert store.transcript(KEY) == store.run_transcript(KEY, "run-2") == messages
    assert store.run_transcript(KEY, "run-1") == messages
    first, second = _stored_sizes(store)
    assert first == len(plain.payload)
    assert second < len(deflated.payload) / 2
    store.close()


@pytest.mark.parametrize("backend", [RunStore, SqliteStore])
def test_each_run_is_every_run_in_registration_order(
        backend: type[RunStore | SqliteStore]) -> None:
    store = backend()
    for n in (3, 1, 2):
        store.register(_record(f"run-{n}"))
    assert [r.run_id for r in store.each_run()] == ["run-3", "run-1", "run-2"]
    assert list(store.each_run()) == store.all_runs()
    store.close()


def test_a_dead_actor_lets_go_of_its_task_and_mail() -> None:
    clock = trio.testing.MockClock(rate=0)
    kernel = Kernel(Chooser(1, "random"), Trace(), clock, lambda s, d, m: [(0, d, m)])
    ports = []

    async def body(port: object) -> None:
        ports.append(port)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            kernel.spawn(nursery, "a", body)  # type: ignore[arg-type]

    run_trio(main, clock)
    (port,) = ports
    assert not port.alive and port.task is None
    port.mailbox.append("late")
    assert not port.mailbox


def test_returned_runs_share_the_trace_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_mod, "SHARE_FIELDS_FROM", 0)  # as a big run's trace does
    monkeypatch.setattr(trace_mod, "SHARE_STRINGS_FROM", 0)
    result = world.run(load_world(None), seed=3)
    texts = {}
    for record in result.trace:
        for value in record.data.values():
            if isinstance(value, str) and len(value) >= 24:
                texts.setdefault(value, value)
    shared = [r.result_text for r in result.runs if r.result_text in texts]
    assert shared and all(texts[t] is t for t in shared)
