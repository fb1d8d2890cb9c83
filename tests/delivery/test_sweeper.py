"""The registry's sweeper (actors/delivery/sweeper.py, reference §c18, DEL-16): retention of
suspended results and archiving of delete-mode runs. The pure sweeper, the scenarios, the end of
a world with only housekeeping left, and the oracles (sim/invariants/delivery/retention.py)
catching broken variants from outside readings only."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from actors.delivery.redrive import Action, Refusal, refusal
from actors.delivery.sweeper import BACKLOG_WARNING, Sweeper
from actors.records.retry import RETENTION_MS
from actors.records.run_record import Expired, RunRecord, apply
from actors.states import DeliveryStatus, OutcomeStatus
from sim import scenario
from sim.invariants.delivery.retention import archived_after_completion, suspended_kept_seven_days
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

SUSPENDED_AT = 1_810_000


def _row(run_id: str = "run-1", **changes: Any) -> RunRecord:
    record = RunRecord(run_id, "c1", "agent:main:subagent:c1", "agent:main:main", "t", True, 0,
                       ended_at_ms=10_000, outcome_status=OutcomeStatus.OK, result_text="r",
                       delivery_status=DeliveryStatus.SUSPENDED, cleaned_up_at_ms=10_000,
                       suspended_at_ms=SUSPENDED_AT)
    return attrs.evolve(record, **changes)


def _rows(rows: dict[str, RunRecord]) -> Any:
    return rows.__getitem__


# -- the pure sweeper -------------------------------------------------------------------------


def test_a_suspended_result_expires_7_days_after_its_suspension_not_before() -> None:
    sweeper, row = Sweeper(), _row()
    sweeper.note(row)
    due = SUSPENDED_AT + RETENTION_MS
    assert sweeper.next_wake(0) == due  # one timer, for the due time: nothing ticks before
    assert sweeper.next_wake(5) is None  # armed already
    assert sweeper.due(due - 1, _rows({"run-1": row})) == []
    assert sweeper.fired(due)
    assert sweeper.due(due, _rows({"run-1": row})) == [("expire", row)]
    assert "run-1" not in sweeper and sweeper.next_wake(due) is None


def test_a_redrive_before_the_due_time_ends_the_retention_and_a_new_suspension_restarts_it(
) -> None:
    sweeper, row = Sweeper(), _row()
    sweeper.note(row)
    sweeper.next_wake(0)
    redriven = attrs.evolve(row, delivery_status=DeliveryStatus.PENDING)
    sweeper.note(redriven)
    assert sweeper.due(SUSPENDED_AT + RETENTION_MS, _rows({"run-1": redriven})) == []
    again = attrs.evolve(row, suspended_at_ms=SUSPENDED_AT + 3_600_000)
    sweeper.note(again)
    sweeper.fired(SUSPENDED_AT + RETENTION_MS)
    assert sweeper.next_wake(SUSPENDED_AT + RETENTION_MS) == 3_600_000
    assert sweeper.due(SUSPENDED_AT + RETENTION_MS + 3_600_000, _rows({"run-1": again}))


def test_a_row_another_actor_changed_since_is_not_expired() -> None:
    sweeper, row = Sweeper(), _row()
    sweeper.note(row)
    suppressed = attrs.evolve(row, delivery_status=DeliveryStatus.NOT_REQUIRED)
    assert sweeper.due(SUSPENDED_AT + RETENTION_MS, _rows({"run-1": suppressed})) == []


def test_an_earlier_due_time_rearms_the_timer() -> None:
    sweeper = Sweeper()
    sweeper.note(_row("run-1"))
    assert sweeper.next_wake(0) == SUSPENDED_AT + RETENTION_MS
    sweeper.note(_row("run-2", suspended_at_ms=10_000))
    assert sweeper.next_wake(0) == 10_000 + RETENTION_MS
    assert not sweeper.fired(SUSPENDED_AT + RETENTION_MS)  # the replaced timer does nothing


def test_a_due_time_passed_while_the_process_was_down_is_served_at_once() -> None:
    # Seed 19368: the process died as the expiry fell due and came back 28 s later. The new
    # incarnation's sweeper, armed for the past, waited for a message of that instant, which
    # no timer carries: both suspended rows stayed past their 7 days until the world's end.
    sweeper, row = Sweeper(), _row()
    sweeper.note(row)
    later = SUSPENDED_AT + RETENTION_MS + 28_000
    assert sweeper.next_wake(later) == 0  # now, not a negative or a past instant
    assert sweeper.next_wake(later) is None  # armed already
    assert sweeper.fired(later)  # the timer's message names the instant it fires
    assert sweeper.due(later, _rows({"run-1": row})) == [("expire", row)]


def test_from_25_suspended_rows_it_warns_once_per_count_and_prunes_nothing() -> None:
    sweeper = Sweeper()
    rows = {f"run-{i}": _row(f"run-{i}") for i in range(BACKLOG_WARNING + 5)}
    for i, row in enumerate(rows.values()):
        sweeper.note(row)
        assert sweeper.warning() == (i + 1 if i + 1 >= BACKLOG_WARNING else None)
        assert sweeper.warning() is None  # the same count: no second warning
    assert sweeper.due(SUSPENDED_AT + RETENTION_MS - 1, _rows(rows)) == []  # no pruning
    assert all(run_id in sweeper for run_id in rows)


def test_the_bug_counts_from_the_run_end() -> None:
    sweeper = Sweeper(from_run_end=True)
    sweeper.note(_row())
    assert sweeper.next_wake(0) == 10_000 + RETENTION_MS


def test_a_redrive_of_an_expired_result_is_refused_as_expired_not_as_dismissed() -> None:
    expired = apply(_row(), Expired(SUSPENDED_AT + RETENTION_MS))
    later = SUSPENDED_AT + RETENTION_MS + 1
    assert refusal(expired, Action.REDRIVE, False, later) is Refusal.EXPIRED
    dismissed = _row(delivery_status=DeliveryStatus.DISCARDED)
    assert refusal(dismissed, Action.REDRIVE, False, later) is Refusal.RELEASED


def test_a_redrive_at_the_7_days_instant_is_refused_even_before_the_sweeper_ran() -> None:
    # OpenClaw's sweep expires a row once now - suspendedAt >= 7 days; a request reaching the
    # row in that very instant, before the sweeper's discard, finds its payload expired too
    # (seed 82601: it was sent as generation 2). A millisecond earlier it is still redriven.
    due = SUSPENDED_AT + RETENTION_MS
    assert refusal(_row(), Action.REDRIVE, False, due) is Refusal.EXPIRED
    assert refusal(_row(), Action.DISMISS, False, due) is Refusal.EXPIRED
    assert refusal(_row(), Action.REDRIVE, False, due - 1) is None


# -- the world --------------------------------------------------------------------------------


def _run(name: str, **kwargs: Any) -> list[Record]:
    return list(world.run(scenario.load(SCENARIOS / name), **kwargs).trace)


def _outside(trace: list[Record]) -> list[Record]:
    """The trace without the registry's own records (an outsider never sees them)."""
    return [r for r in trace if not r.kind.startswith("delivery.")]


def test_the_scenario_ends_quiescent_with_only_the_sweepers_timer_left() -> None:
    result = world.run(scenario.load(SCENARIOS / "suspended-retention.toml"))
    assert str(result.end_reason) == "quiescent" and result.violations == ()
    rows = {row["run_id"]: row for r in result.trace if r.kind == "world.rows"
            for row in r.data["rows"]}
    assert rows["run-2"]["expired_at"] == 10_000 + RETENTION_MS
    assert rows["run-4"]["delivery_status"] == "suspended"
    # Given up at the first resume past its expiry (issue 34): its last retry's due time.
    due = [r.data["next_attempt_at_ms"] for r in result.trace
           if r.kind == "delivery.retry" and r.data["run_id"] == "run-4"][-1]
    assert rows["run-4"]["suspended_at"] == due > SUSPENDED_AT


def test_the_oracle_catches_the_bug_from_outside_readings() -> None:
    name = "mutant-retention-from-run-end.toml"
    assert suspended_kept_seven_days(_run(name, mutants=[])) == []
    found = suspended_kept_seven_days(_outside(_run(name)))
    assert found and "before its 7 days were up" in found[0].message


def test_the_oracle_catches_a_sweeper_that_never_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "suspended-retention.toml"
    monkeypatch.setattr(Sweeper, "note", lambda self, record: None)  # tracks nothing
    found = suspended_kept_seven_days(_outside(_run(name)))
    # c2's redrive after its 7 days is refused by the redrive's own check of the row's age
    # (seed 82601), so c2's row stays suspended past its 7 days; c4 is still suspended at the
    # end, yet inside its 7 days: not a violation. (A send after the expiry: forged below.)
    assert [v.message.split(" ")[0] for v in found] == ["run-2"]
    assert "is still suspended when the world stops" in found[0].message


def test_the_oracle_catches_a_row_kept_suspended_past_its_7_days() -> None:
    trace = _run("suspended-retention.toml")
    forged = [attrs.evolve(r, data={"rows": [
        {**row, "delivery_status": "suspended", "expired_at": None}
        if row["run_id"] == "run-2" else row for row in r.data["rows"]]})
              if r.kind == "world.rows" else r for r in trace]
    found = suspended_kept_seven_days(forged)
    assert any("run-2" in v.message and "still suspended when the world stops" in v.message
               for v in found)


def test_the_oracle_catches_a_send_after_the_expiry() -> None:
    trace = _run("suspended-retention.toml")
    send = next(r for r in trace if r.kind == "gateway.send" and r.data["run_id"] == "run-2")
    end = next(r for r in trace if r.kind == "world.rows")
    late = attrs.evolve(send, t_ms=end.t_ms - 1, seq=end.seq - 1)
    forged = [*trace[:trace.index(end)], late, *trace[trace.index(end):]]
    found = suspended_kept_seven_days(_outside(forged))
    assert any("after they were up" in v.message for v in found)


def test_the_oracle_catches_a_row_pruned_early() -> None:
    trace = _run("suspended-retention.toml")
    forged = [attrs.evolve(r, data={"rows": [
        {**row, "delivery_status": "discarded", "expired_at": SUSPENDED_AT + 60_000}
        if row["run_id"] == "run-4" else row for row in r.data["rows"]]})
              if r.kind == "world.rows" else r for r in trace]
    found = suspended_kept_seven_days(forged)
    assert any("run-4" in v.message and "before its 7 days were up" in v.message for v in found)


# -- archiving delete-mode runs ---------------------------------------------------------------

ARCHIVE_AFTER_MS = 300_000


def test_a_delete_mode_run_is_archived_at_its_end_plus_the_minutes_once_resolved() -> None:
    sweeper = Sweeper(archive_after_ms=ARCHIVE_AFTER_MS)
    done = _row(delivery_status=DeliveryStatus.DELIVERED, cleanup_mode="delete")
    sweeper.note_archive(done, 20_000)
    assert sweeper.next_wake(20_000) == 10_000 + ARCHIVE_AFTER_MS - 20_000
    assert sweeper.due(10_000 + ARCHIVE_AFTER_MS, _rows({"run-1": done})) == [("archive", done)]


def test_a_keep_mode_run_or_archive_after_zero_is_never_archived() -> None:
    for sweeper, mode in ((Sweeper(archive_after_ms=ARCHIVE_AFTER_MS), "keep"),
                          (Sweeper(archive_after_ms=0), "delete")):
        sweeper.note_archive(_row(cleanup_mode=mode), 20_000)
        assert sweeper.next_wake(20_000) is None


def test_an_archive_due_while_the_completion_is_pending_waits_for_it() -> None:
    sweeper = Sweeper(archive_after_ms=ARCHIVE_AFTER_MS)
    pending = _row(delivery_status=DeliveryStatus.PENDING, cleanup_mode="delete")
    sweeper.note_archive(pending, 20_000)  # (reopened by a correction after its cleanup)
    assert sweeper.due(10_000 + ARCHIVE_AFTER_MS, _rows({"run-1": pending})) == []
    assert "run-1" in sweeper  # waiting: the next change of its delivery status is looked at
    done = attrs.evolve(pending, delivery_status=DeliveryStatus.DELIVERED)
    sweeper.note_archive(done, 900_000)
    assert sweeper.next_wake(900_000) == 0
    assert sweeper.due(900_000, _rows({"run-1": done})) == [("archive", done)]


def test_the_bug_archives_a_pending_run() -> None:
    sweeper = Sweeper(archive_after_ms=ARCHIVE_AFTER_MS, archive_pending=True)
    pending = _row(delivery_status=DeliveryStatus.PENDING, cleanup_mode="delete")
    sweeper.note_archive(pending, 20_000)
    assert sweeper.due(10_000 + ARCHIVE_AFTER_MS, _rows({"run-1": pending})) == [
        ("archive", pending)]


def test_the_archive_scenario_deletes_live_sessions_only_after_resolution() -> None:
    result = world.run(scenario.load(SCENARIOS / "cleanup-archive.toml"))
    assert result.violations == ()
    rows = {row["run_id"]: row for r in result.trace if r.kind == "world.rows"
            for row in r.data["rows"]}
    assert rows["run-1"]["archived_at"] == 10_000 + ARCHIVE_AFTER_MS
    assert rows["run-3"]["archived_at"] is None  # keep
    delivered = next(r.t_ms for r in result.trace
                     if r.kind == "delivery.delivered" and r.data["run_id"] == "run-2")
    assert rows["run-2"]["archived_at"] == delivered > 10_000 + ARCHIVE_AFTER_MS


def test_the_archive_oracle_catches_the_bug_from_outside_readings() -> None:
    name = "mutant-archive-while-pending.toml"
    assert archived_after_completion(_run(name, mutants=[])) == []
    found = archived_after_completion(_outside(_run(name)))
    assert found and all("while its completion was pending" in v.message for v in found)


def test_the_archive_oracle_catches_a_keep_mode_run_archived() -> None:
    trace = _run("cleanup-archive.toml")
    forged = [attrs.evolve(r, data={"rows": [
        {**row, "archived_at": 310_000} if row["run_id"] == "run-3" else row
        for row in r.data["rows"]]}) if r.kind == "world.rows" else r for r in trace]
    found = archived_after_completion(forged)
    assert found[0].message.startswith("run-3") and "cleanup 'keep'" in found[0].message


def test_the_archive_oracle_catches_a_live_session_kept_after_the_archive(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from actors.store.durable import RunStore
    monkeypatch.setattr(RunStore, "delete_session", lambda self, key: False)
    found = archived_after_completion(_outside(_run("cleanup-archive.toml")))
    assert any("read c1's live session with sessions_history" in v.message for v in found)


def test_the_archive_oracle_catches_a_run_never_archived(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Sweeper, "note_archive", lambda self, record, now_ms: None)
    found = archived_after_completion(_outside(_run("cleanup-archive.toml")))
    assert sorted(v.message.split(" ")[0] for v in found) == ["run-1", "run-2", "run-4"]


def test_only_a_week_later_redrive_runs_the_default_world_past_six_hours() -> None:
    # Seed 611 leaves its last requester turn open, and a yielded batch's wake is refused
    # every 30 s while it is (§c17); it also draws a redrive about a week after a child's end.
    # The harness finishes the open turn at the 6-hour mark, so the wake goes through and the
    # week costs a few timers: it ran 8 days and 115,137 records when the world simply ran on.
    from sim.cli import root as cli
    default = scenario.load(cli.default_world_path())
    late = world.run(default, seed=611)
    records = list(late.trace)
    end = next(r for r in records if r.kind == "world.end")
    assert late.violations == () and end.data["reason"] == "quiescent"
    assert end.t_ms > 6 * 24 * 3_600_000 and len(records) < 5_000
    finished = [r for r in records if r.kind == "world.turn_end" and r.t_ms == 21_600_000]
    assert len(finished) == 1  # the turn left open, finished at the world's own 6 hours
    assert any(r.kind == "world.operator" and r.t_ms > 6 * 24 * 3_600_000 for r in records)
    # Seed 3 draws no such redrive: it stops within its 6 hours (about half the seeds draw one).
    plain = list(world.run(default, seed=3).trace)
    assert next(r for r in plain if r.kind == "world.end").t_ms <= 21_600_000


def test_default_seeds_past_a_restart_at_the_due_time_and_a_held_copy_stay_clean() -> None:
    # Seed 19368: a restart as the expiry fell due left both suspended rows unexpired (model,
    # the sweeper armed for the past). Seed 19381: run-3's copy held 112 s lands after its
    # later send was refused for good and the run was archived; the oracle read the late take
    # as a completion still pending (oracle). Both were the only failures of seeds 1..20,000.
    from sim.cli import root as cli
    default = scenario.load(cli.default_world_path())
    expired = list(world.run(default, seed=19368).trace)
    assert suspended_kept_seven_days(expired) == []
    # Every row given up suspended expired seven days on (two in the seed as found; its draws
    # moved when issue 34's were re-aimed, so the rows are read, not counted).
    suspended = {r.data["run_id"] for r in expired if r.kind == "delivery.give_up"
                 and r.data["status"] == "suspended"}
    assert len(suspended) >= 2
    assert {r.data["run_id"] for r in expired if r.kind == "delivery.expired"} == suspended
    held = list(world.run(default, seed=19381).trace)
    assert archived_after_completion(held) == []
    # Without the permanent refusal before the archive, the late take is a pending completion.
    refusal = next(r for r in held if r.kind == "fault" and r.data.get("run_id") == "run-3"
                   and r.data.get("kind") == "send-permanent")
    forged = [r for r in held if r is not refusal]
    assert any("run-3 was archived at 1172000 ms while its completion was pending" in v.message
               for v in archived_after_completion(forged))
