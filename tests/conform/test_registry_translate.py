"""The registry check's translation and explainers, without Node: which runs are replayed and
why the others are not, the jitter handed to OpenClaw's backoff, a delayed end message, and
each registry row's explainer accepting only what it says OpenClaw does."""

from __future__ import annotations

from typing import Any

from actors.records.retry import backoff_ms
from sim.conform import differences
from sim.conform.registry import explain, scope
from sim.conform.registry.compare import Divergence
from sim.conform.registry.sends import jitter_for
from sim.conform.registry.translate import translate
from sim.trace import Record


def rec(seq: int, t_ms: int, what: str, **data: Any) -> Record:
    return Record(seq, t_ms, "x", what, data)


SPAWN = rec(1, 0, "spawn", run_id="run-1", child="c1", child_session_key="agent:main:subagent:c1",
            requester="agent:main:main", required=True, task="t", turn_run_id=None)
END = rec(2, 10_000, "child.end", run_id="run-1", status="ok", error=None, result="done")


def test_the_jitter_gives_the_model_s_delay_through_the_backoff() -> None:
    for attempt in (1, 2, 3, 6):
        for fraction in (0.0, 0.154, 0.5, 1.0):
            delay = backoff_ms(attempt, fraction)
            assert backoff_ms(attempt, jitter_for(attempt, delay)) == delay
    assert jitter_for(1, 1) == 0.0  # a clamped delay no jitter gives


def test_a_run_with_a_record_not_driven_is_left_out_with_its_reason() -> None:
    owned = rec(3, 5_000, "delivery.batch_owned", run_id="run-1")
    replay = translate([SPAWN, owned, END])
    assert not replay.runs
    assert replay.skipped == {"run-1": scope.NOT_DRIVEN["delivery.batch_owned"]}
    # A correction while the delivery is pending (no reopened generation) is not driven yet.
    fix = rec(3, 12_000, "child.correction", run_id="run-1", ended_at=12_000, result="fixed")
    assert translate([SPAWN, END, fix]).skipped == {"run-1": scope.PENDING_CORRECTION}
    nested = rec(1, 0, "spawn", **{**SPAWN.data, "requester": "agent:main:subagent:p"})
    assert "nested requester" in translate([nested, END]).skipped["run-1"]


RESTART = rec(0, 0, "world.restart", process="delivery")


def _attempt(seq: int, t_ms: int, number: int) -> Record:
    return rec(seq, t_ms, "delivery.attempt", run_id="run-1", attempt=number, key="k")


def test_a_crash_and_restart_become_steps_and_the_attempt_in_flight_never_answers() -> None:
    crash = rec(4, 10_000, "crash", point="timeline")
    again = rec(5, 15_000, "world.restart", process="delivery")
    delivered = rec(7, 15_000, "delivery.delivered", run_id="run-1", key="k")
    replay = translate([RESTART, SPAWN, END, _attempt(3, 10_000, 1), crash, again,
                        _attempt(6, 15_000, 2), delivered])
    assert not replay.skipped
    assert [s["kind"] for s in replay.steps if s["kind"] in ("crash", "restart")] == [
        "crash", "restart"]  # the world's first start is no restart
    attempts = replay.runs["run-1"].attempts
    assert [(a["outcome"], a["incarnation"]) for a in attempts] == [("crashed", 1),
                                                                    ("delivered", 2)]
    # After a crash the call count is not compared (where the crash fell is not pinned down).
    assert "handed" not in replay.expects[-1].fields


def test_a_delivery_the_restarted_process_reconciled_is_one_more_announce_call() -> None:
    crash = rec(4, 10_000, "crash", point="before-record-delivered")
    again = rec(5, 15_000, "world.restart", process="delivery")
    delivered = rec(6, 15_000, "delivery.delivered", run_id="run-1", key="k", duplicate=True)
    replay = translate([RESTART, SPAWN, END, _attempt(3, 10_000, 1), crash, again, delivered])
    assert [a["outcome"] for a in replay.runs["run-1"].attempts] == ["crashed", "delivered"]
    assert replay.expects[-1].fields["status"] == "delivered"


def test_an_end_the_process_died_on_reaches_the_restarted_one() -> None:
    crash = rec(3, 10_000, "crash", point="before-persist")
    again = rec(4, 15_000, "world.restart", process="delivery")
    replay = translate([RESTART, SPAWN, END, crash, again, _attempt(5, 15_000, 1)])
    kinds = [(s["kind"], s["t"]) for s in replay.steps if s["kind"] != "check"]
    assert kinds == [("spawn", 0), ("crash", 10_000), ("restart", 15_000), ("end", 15_000)]
    # An end the next attempt's number shows was claimed before the crash is held all the same:
    # the process that answers it is the one that made the attempt.
    replay = translate([RESTART, SPAWN, END, crash, again, _attempt(5, 15_000, 2)])
    kinds = [(s["kind"], s["t"]) for s in replay.steps if s["kind"] != "check"]
    assert kinds == [("spawn", 0), ("crash", 10_000), ("restart", 15_000), ("end", 15_000)]


def test_an_attempt_out_when_a_correction_comes_was_handed_the_result_it_began_with() -> None:
    # Seed 148: the first attempt starts at 10 s with the first answer; the correction comes at
    # 12 s, the attempt is delivered at 20 s, and the model reopens the run at 30 s. The
    # delivery at 20 s was handed "done"; the corrected row holds "fixed" from the reopen on.
    fix = rec(4, 12_000, "child.correction", run_id="run-1", ended_at=12_000, result="fixed")
    delivered = rec(5, 20_000, "delivery.delivered", run_id="run-1", key="k")
    reopen = rec(6, 30_000, "delivery.reopen", run_id="run-1", generation=2, ended_at=12_000)
    again = rec(8, 30_000, "delivery.delivered", run_id="run-1", key="k:g2")
    replay = translate([SPAWN, END, _attempt(3, 10_000, 1), fix, delivered, reopen,
                        _attempt(7, 30_000, 1), again])
    assert not replay.skipped
    by_kind = {e.kind: e.fields for e in replay.expects}
    assert by_kind["child.correction"]["frozen"] == "fixed"
    delivered_fields = [e.fields for e in replay.expects if e.kind == "delivery.delivered"]
    assert [f["handedResult"] for f in delivered_fields] == ["done", "fixed"]
    # The correction reaches OpenClaw's registry at the reopen, not at 12 s.
    assert [s["t"] for s in replay.steps if s["kind"] == "end"] == [10_000, 30_000]


def test_a_delayed_end_message_reaches_the_registry_late_with_the_child_s_end_time() -> None:
    delay = rec(3, 10_000, "fault", kind="delay", dst="delivery", message="ChildEnded",
                delay_ms=42_000)
    replay = translate([SPAWN, END, delay])
    end = next(step for step in replay.steps if step["kind"] == "end")
    assert (end["t"], end["endedAt"]) == (52_000, 10_000)
    assert [step["t"] for step in replay.steps] == sorted(step["t"] for step in replay.steps)
    assert [e.kind for e in replay.expects] == ["spawn", "child.end"]


def _context(kind: str, field: str, status: str = "ok", result: str | None = "done",
             seq: int = 2) -> dict[str, Any]:
    end = rec(2, 10_000, "child.end", run_id="run-1", status=status, error=None, result=result)
    divergence = Divergence("run-1", seq, 10_000, kind, field, None, None)
    return {"divergence": divergence, "run": [SPAWN, end], "spawn": SPAWN}


def test_each_registry_explainer_accepts_only_what_it_says_openclaw_does() -> None:
    table = differences.load()
    # A lost answer fails OpenClaw's required ok run; the model's stays ok (DEL-2).
    lost = {**_context("child.end", "outcome"), "answer_lost": True}
    assert explain.explain(table, lost, "ok", "error") == "registry-lost-answer-error"
    assert explain.explain(table, _context("child.end", "outcome"), "ok", "error") is None
    # The 15 s grace holds error and timeout ends, never an ok one.
    assert explain.explain(table, _context("child.end", "ended", "error"), True, False)
    assert explain.explain(table, _context("child.end", "ended", "ok"), True, False) is None
    # A trimmed frozen result is explained only when OpenClaw's is exactly the trimmed text.
    padded = _context("child.end", "frozen", result=" done\n")
    assert explain.explain(table, padded, " done\n", "done") == "registry-frozen-trimmed"
    assert explain.explain(table, padded, " done\n", "don") is None
    # Past 4,096 UTF-16 units the runtime's terminal reply is cut to 4,095 plus an ellipsis.
    long = "é" * 5000
    cut = explain.openclaw_terminal_text(long)
    assert cut == "é" * 4095 + "…"
    assert explain.explain(table, _context("child.end", "frozen", result=long), long, cut)
    assert explain.explain(table, _context("child.end", "frozen", result=long), long,
                           cut[:-1]) is None
    # A surrogate pair is never split by the cut.
    assert explain.openclaw_terminal_text("a" + "\U0001f600" * 3000).endswith("\U0001f600…")
    # The silent token: only for a token-only reply.
    silent = _context("child.end", "frozen", result="no_reply.")
    assert explain.explain(table, silent, "no_reply.", "NO_REPLY") == "registry-silent-reply-token"
    chatty = _context("child.end", "frozen", result="NO_REPLY, then more")
    assert explain.explain(table, chatty, "NO_REPLY, then more", "NO_REPLY") is None


def test_a_superseded_row_is_explained_only_when_a_newer_run_of_its_session_was_there() -> None:
    # Seed 172: run-2's delivery settles at 323 s; run-7 of the same child session was
    # registered at 170 s, so OpenClaw's cleanup retires run-2's row once it is delivered.
    table = differences.load()
    newer = rec(9, 170_000, "spawn", run_id="run-7", child="c1",
                child_session_key="agent:main:subagent:c1")

    def context(row: bool = False, handed_at: tuple[int, ...] = (78_000, 323_000),
                kind: str = "delivery.delivered", spawns: tuple[Record, ...] = (newer,),
                ) -> dict[str, Any]:
        divergence = Divergence("run-1", 116, 323_000, kind, "status", "delivered", None,
                                snapshot={"row": row, "handed": [{"at": t} for t in handed_at]})
        return {"divergence": divergence, "run": [SPAWN, END], "spawn": SPAWN,
                "newer_runs": list(spawns)}

    assert explain.explain(table, context(), "delivered", None) == (
        "registry-superseded-row-retired")
    # Near variants, none excused: no newer run of the session; one registered only after the
    # delivery; the row still held with no status; no announce call at the delivery's instant;
    # a give-up rather than a delivery; OpenClaw's row gone while the model gave up.
    assert explain.explain(table, context(spawns=()), "delivered", None) is None
    late = rec(9, 400_000, "spawn", run_id="run-7", child_session_key="agent:main:subagent:c1")
    assert explain.explain(table, context(spawns=(late,)), "delivered", None) is None
    assert explain.explain(table, context(row=True), "delivered", None) is None
    assert explain.explain(table, context(handed_at=(78_000,)), "delivered", None) is None
    assert explain.explain(table, context(kind="delivery.give_up"), "delivered", None) is None
    assert explain.explain(table, context(), "failed", None) is None
    assert explain.explain(table, context(), "delivered", "pending") is None


def test_newer_runs_are_later_replayed_spawns_of_the_same_child_session() -> None:
    from sim.conform.registry.check import newer_runs

    key = "agent:main:subagent:c1"
    spawns = {"run-1": SPAWN,
              "run-2": rec(5, 1_000, "spawn", run_id="run-2", child_session_key=key),
              "run-3": rec(6, 2_000, "spawn", run_id="run-3", child_session_key="other"),
              "run-4": rec(7, 3_000, "spawn", run_id="run-4", child_session_key=key)}
    assert [s.data["run_id"] for s in newer_runs(spawns, "run-1", {"run-1", "run-2",
                                                                   "run-3"})] == ["run-2"]
    # A run not replayed was never registered in OpenClaw: it supersedes nothing there.
    assert newer_runs(spawns, "run-2", {"run-1", "run-2", "run-3"}) == []
    assert newer_runs(spawns, "run-9", set(spawns)) == []


def test_a_late_ack_between_attempts_is_explained_only_while_openclaw_waits() -> None:
    # Seed 374: run-4's first send, held 134 s, is accepted at 412 s while the model waits out
    # its backoff to 421 s; OpenClaw's call gave up on that answer, its row waits, pending.
    table = differences.load()
    key = "announce:v1:agent:main:subagent:c1:run-1"
    retry = rec(6, 402_999, "delivery.retry", run_id="run-1", attempt=1,
                next_attempt_at_ms=420_921)
    warning = rec(7, 402_999, "delivery.warning", run_id="run-1", error="500")
    accept = rec(8, 411_999, "requester.accept", run_id="run-1", key=key)
    delivered = rec(9, 411_999, "delivery.delivered", run_id="run-1", key=key)
    waiting = {"row": True, "status": "pending", "nextAttemptAt": 420_921,
               "handed": [{"at": 277_999}]}

    def context(records: tuple[Record, ...] = (retry, warning, accept, delivered),
                snapshot: dict[str, Any] = waiting, field: str = "handed") -> dict[str, Any]:
        divergence = Divergence("run-1", 9, 411_999, "delivery.delivered", field, None, None,
                                snapshot=snapshot)
        return {"divergence": divergence, "run": [SPAWN, END, *records], "spawn": SPAWN}

    name = "registry-late-ack-between-attempts"
    assert explain.explain(table, context(), 2, 1) == name
    assert explain.explain(table, context(field="status"), "delivered", "pending") == name
    # Near variants, none excused: a delivery with no acceptance at its instant (a restart's
    # reconciliation); one while a try was out (not between attempts); OpenClaw's row not
    # waiting for a later attempt, or already delivered; an announce call at that instant;
    # more than the one call the reconciliation counts.
    assert explain.explain(table, context((retry, warning, delivered)), 2, 1) is None
    attempt = rec(7, 402_999, "delivery.attempt", run_id="run-1", attempt=2)
    assert explain.explain(table, context((retry, attempt, accept, delivered)), 2, 1) is None
    assert explain.explain(table, context(snapshot={**waiting, "nextAttemptAt": 400_000}),
                           2, 1) is None
    assert explain.explain(table, context(snapshot={**waiting, "status": "delivered"}),
                           2, 1) is None
    called = {**waiting, "handed": [{"at": 277_999}, {"at": 411_999}]}
    assert explain.explain(table, context(snapshot=called), 2, 1) is None
    assert explain.explain(table, context(), 3, 1) is None
    assert explain.explain(table, context(field="status"), "delivered", "failed") is None
