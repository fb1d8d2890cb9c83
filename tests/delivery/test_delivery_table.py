"""The delivery core's table: complete, honest about illegal inputs, drawn in the docs."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest

from actors.delivery.edge import AckTimeout, AttemptDue, Restored, RunFinished, Send, TryDue
from actors.delivery.shell import render, requester_kind
from actors.delivery.table import INPUT_TYPES, TABLE, DeliveryCore, DeliveryProtocolError
from actors.events import StaleInput
from actors.messages import Completion, CompletionAck, SendRejected
from actors.records.run_record import (
    CHANGE_TYPES,
    Archived,
    AttemptStarted,
    ClaimMoved,
    CleanedUp,
    Corrected,
    Delivered,
    DeliverySuppressed,
    Dismissed,
    EvidenceSaved,
    Expired,
    FindingsFrozen,
    GaveUp,
    HandedToBatch,
    HandoffClosed,
    Redriven,
    Reopened,
    RetryScheduled,
    RunEnded,
    RunRecord,
    RunStarted,
    WindowStarted,
    YieldFrozen,
    apply,
    columns,
)
from actors.records.send_error import SendError
from actors.states import ClaimPhase, DeliveryStatus, EvidenceKind, OutcomeStatus, Waiting
from sim import diagram


def _ended(run_id: str = "run-1") -> RunRecord:
    return RunRecord(run_id, "c1", "agent:main:subagent:c1", "agent:main:main", "task", True,
                     created_at_ms=0, ended_at_ms=1_000, outcome_status=OutcomeStatus.OK,
                     result_text="done")


def _core() -> DeliveryCore[object]:
    return DeliveryCore(1, lambda: 0.0, render, requester_kind)


def test_the_generated_state_diagram_is_current() -> None:
    text = diagram.DOC.read_text(encoding="utf-8")
    assert diagram.render(text) == text, "docs are stale: run python -m sim.diagram"


def test_the_diagram_check_fails_on_a_stale_drawing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "architecture.md"
    stale.write_text(diagram.DOC.read_text(encoding="utf-8").replace("try_wait --> ack",
                                                                     "try_wait --> idle"))
    monkeypatch.setattr(diagram, "DOC", stale)
    assert diagram.main(["--check"]) == 1
    assert diagram.main([]) == 0
    assert diagram.main(["--check"]) == 0


def test_every_state_and_input_has_an_entry_except_the_named_illegal_ones() -> None:
    missing = {(state, t) for state in Waiting for t in INPUT_TYPES} - set(TABLE)
    assert missing == {(Waiting.ACK, Restored), (Waiting.TRY_WAIT, Restored),
                       (Waiting.ATTEMPT_WAIT, Restored)}
    for transition in TABLE.values():
        # A plain function of the core, named by reference: its module's, not a method.
        handler = transition.handler
        assert getattr(sys.modules[handler.__module__], handler.__name__) is handler
        assert handler.__module__.startswith("actors.delivery.")
        assert not hasattr(DeliveryCore, handler.__name__)
        assert transition.targets


def test_an_illegal_input_raises_and_changes_nothing() -> None:
    core = _core()
    core.child_ended(_ended(), 1_000)
    assert core.state("run-1") is Waiting.ACK
    before = core.snapshot()
    with pytest.raises(DeliveryProtocolError, match="Restored is illegal while run-1 waits in ack"):
        core.handle(Restored(_ended()), 2_000)
    assert core.snapshot() == before


def test_stale_answers_and_timers_are_legal_and_only_noted() -> None:
    core = _core()
    assert core.handle(CompletionAck("k", "run-9", True), 0) == [StaleInput("run-9", "ack")]
    assert core.handle(SendRejected("k", "run-9", SendError("chat not found")), 0) == [
        StaleInput("run-9", "rejection")]
    for timer in (AckTimeout("run-9", 1), TryDue("run-9", 1), AttemptDue("run-9")):
        assert core.handle(timer, 0) == []
    core.child_ended(_ended(), 1_000)
    before = core.snapshot()
    assert core.handle(TryDue("run-1", 1), 2_000) == []  # not waiting for a try
    assert core.handle(RunFinished(_ended()), 2_000) == []  # a duplicate end notice
    assert core.snapshot() == before


def test_each_change_writes_exactly_its_columns() -> None:
    record = _ended()
    samples = [RunEnded(5, OutcomeStatus.TIMEOUT, "e", "t", "max-tokens", 1, 2),
               AttemptStarted(3), RetryScheduled(9_000, "gateway timeout"), Delivered(7),
               GaveUp(DeliveryStatus.SUSPENDED, "chat not found", 9), CleanedUp(11),
               Corrected(13, "corrected"),
               ClaimMoved(ClaimPhase.ATTEMPTED, "announce:v1:k:run-1", 5),
               EvidenceSaved(EvidenceKind.REPLY_SENT, "announce:v1:k:run-1", 5), Reopened(2),
               RunStarted(4), FindingsFrozen("Child completion results:\n\n1. t"),
               Redriven(2, 60_000), Dismissed(), YieldFrozen("batch:t"), HandedToBatch(),
               WindowStarted(13), HandoffClosed("completion_handoff_unavailable"),
               DeliverySuppressed(), Expired(17), Archived(19)]
    assert [type(c) for c in samples] == list(CHANGE_TYPES)
    record_fields = {f.name for f in attrs.fields(RunRecord)}
    for change in samples:
        names = columns(type(change))
        assert set(names) <= record_fields
        expected = attrs.evolve(record, **{n: getattr(change, n) for n in names})
        assert apply(record, change) == expected


def test_crash_points_are_named_by_the_change() -> None:
    assert Delivered(1).crash_point == "before-record-delivered"
    assert GaveUp(DeliveryStatus.FAILED, None).crash_point == "before-record-failed"
    assert GaveUp(DeliveryStatus.SUSPENDED, None).crash_point == "before-record-suspended"
    assert AttemptStarted(1).crash_point is None


def test_a_refusal_of_an_earlier_try_on_the_same_key_answers_nothing_now() -> None:
    # Seed 15898: a delivery process dies after its try was refused; the refusal's late copy
    # reaches the next process, whose own try of the same key is in flight (reference §c17).
    def sent(core: DeliveryCore[object]) -> Completion:
        [send] = [e for e in core.child_ended(_ended(), 1_000) if isinstance(e, Send)]
        return send.completion

    dead, live = _core(), DeliveryCore(2, lambda: 0.0, render, requester_kind)
    old, new = sent(dead), sent(live)
    assert old.key == new.key and old.dispatch != new.dispatch
    limited = SendError("rate limited: retry later")
    assert live.handle(SendRejected(old.key, "run-1", limited, dispatch=old.dispatch),
                       2_000) == [StaleInput("run-1", "rejection")]
    assert live.state("run-1") is Waiting.ACK
    live.handle(SendRejected(new.key, "run-1", limited, dispatch=new.dispatch), 2_000)
    assert live.state("run-1") is not Waiting.ACK
