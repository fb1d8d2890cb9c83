"""Operator redrive and dismissal (actors/delivery/redrive.py, DEL-16): the core's decisions, the
scenarios, and the oracles catching broken variants (sim/invariants/delivery/redrive.py, and the
retry and chunk oracles that must tell an operator's resend from a retry)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from actors import events
from actors.delivery import redrive
from actors.delivery.core import Core
from actors.delivery.edge import OperatorAsked, Persist, RunFinished, Send
from actors.delivery.redrive import Action, Refusal, refusal
from actors.delivery.table import TABLE, DeliveryCore
from actors.mutants import (
    MUTANT_GIVE_UP_CORRECTION_SENDS,
    MUTANT_REDRIVE_NOT_SUSPENDED,
    MUTANT_REDRIVE_SAME_GENERATION,
)
from actors.records.run_record import Dismissed, Redriven, RunRecord
from actors.states import ClaimPhase, DeliveryStatus, OutcomeStatus
from sim import invariants, scenario
from sim.invariants.delivery.chunks import incomplete_not_retried
from sim.invariants.delivery.redrive import given_up_waits_for_operator, redrive_from_retained
from sim.trace import Record
from sim.world import core as world
from tests.conftest import SCENARIOS

KEY = "announce:v1:agent:main:subagent:c1:run-1"


def _replace_handler(monkeypatch: pytest.MonkeyPatch, handler: Any, broken: Any) -> None:
    """A broken core: the table runs ``broken`` wherever it ran ``handler``."""
    for key, transition in TABLE.items():
        if transition.handler is handler:
            monkeypatch.setitem(TABLE, key, attrs.evolve(transition, handler=broken))  # type: ignore[arg-type]


def _row(**changes: Any) -> RunRecord:
    record = RunRecord("run-1", "c1", "agent:main:subagent:c1", "agent:main:main", "t", True, 0,
                       ended_at_ms=10_000, outcome_status=OutcomeStatus.OK, result_text="r",
                       delivery_status=DeliveryStatus.SUSPENDED, cleaned_up_at_ms=10_000,
                       attempt_count=3, claim_phase=ClaimPhase.ABANDONED, claim_key=KEY)
    return attrs.evolve(record, **changes)


def _core(*bugs: str) -> DeliveryCore[str]:
    return DeliveryCore(1, lambda: 0.0, lambda record, kind: record.result_text or "",
                        lambda key: key, frozenset(bugs))


# -- the core ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("row", "action", "paused", "refused"), [
    ({}, Action.REDRIVE, False, None),
    # Only a suspended completion is blocked (OpenClaw 2026.9.6, issue 34): a failed one, or
    # one paused in its backoff, is refused; a failed one may still be dismissed.
    ({"delivery_status": DeliveryStatus.FAILED}, Action.REDRIVE, False, Refusal.NOT_BLOCKED),
    ({"delivery_status": DeliveryStatus.PENDING}, Action.REDRIVE, True, Refusal.NOT_BLOCKED),
    ({"delivery_status": DeliveryStatus.FAILED}, Action.DISMISS, False, None),
    ({"delivery_status": DeliveryStatus.PENDING}, Action.REDRIVE, False, Refusal.IN_FLIGHT),
    ({"delivery_status": DeliveryStatus.PENDING}, Action.DISMISS, True, Refusal.IN_FLIGHT),
    ({"delivery_status": DeliveryStatus.DELIVERED}, Action.REDRIVE, False, Refusal.DELIVERED),
    ({"delivery_status": DeliveryStatus.DISCARDED}, Action.REDRIVE, False, Refusal.RELEASED),
    ({"ended_at_ms": None, "delivery_status": DeliveryStatus.PENDING}, Action.REDRIVE, False,
     Refusal.NOT_ENDED),
    ({"required": False, "delivery_status": DeliveryStatus.NOT_REQUIRED}, Action.REDRIVE, False,
     Refusal.NOT_REQUIRED),
    ({}, Action.DISMISS, False, None),
])
def test_refusal(row: dict[str, Any], action: Action, paused: bool,
                 refused: Refusal | None) -> None:
    assert refusal(_row(**row), action, paused, 20_000) is refused


@pytest.mark.parametrize(("status", "paused"), [(DeliveryStatus.FAILED, False),
                                                (DeliveryStatus.PENDING, True)])
def test_the_mutant_redrives_a_failed_or_paused_run(status: DeliveryStatus,
                                                     paused: bool) -> None:
    # The model before issue 34 (mutant redrive-not-suspended) took both.
    assert refusal(_row(delivery_status=status), Action.REDRIVE, paused, 20_000,
                   frozenset({MUTANT_REDRIVE_NOT_SUSPENDED})) is None


def test_a_redrive_at_seven_days_from_the_suspension_is_refused_as_expired() -> None:
    # The boundary (reference §c18; OpenClaw's sweep: now - suspendedAt >= retention): one
    # millisecond before the 7 days are up the payload is still there; at them it is not, even
    # before the sweeper discards the row in that instant (seed 82601).
    row = _row(suspended_at_ms=10_000)
    seven_days = 7 * 24 * 3600 * 1000
    assert refusal(row, Action.REDRIVE, False, 10_000 + seven_days - 1) is None
    assert refusal(row, Action.REDRIVE, False, 10_000 + seven_days) is Refusal.EXPIRED


def test_a_redrive_sends_the_stored_payload_as_the_next_generation() -> None:
    # The store's row holds a correction made after the give-up: the redrive carries it.
    row = _row(result_text="corrected", receipt_ended_at_ms=40_000)
    effects = _core().handle(OperatorAsked(row, "redrive", 1), 120_000)
    persists = [e.change for e in effects if isinstance(e, Persist)]
    assert persists[0] == Redriven(2, 120_000)
    (send,) = [e for e in effects if isinstance(e, Send)]
    assert send.completion.key == f"{KEY}:g2"
    assert (send.completion.text, send.completion.ended_at_ms) == ("corrected", 40_000)
    assert any(isinstance(e, events.DeliveryRedriven) and e.was == "suspended" for e in effects)


def test_a_redrive_opens_a_new_expiry_window() -> None:
    # Given up by the expiry 30 minutes after its end: a redrive an hour later still sends.
    effects = _core().handle(OperatorAsked(_row(), "redrive", 1), 3_600_000)
    assert any(isinstance(e, Send) for e in effects)
    assert not any(isinstance(e, events.DeliveryGaveUp) for e in effects)


def test_the_same_generation_bug_reuses_the_key() -> None:
    effects = _core(MUTANT_REDRIVE_SAME_GENERATION).handle(OperatorAsked(_row(), "redrive", 1),
                                                           60_000)
    (send,) = [e for e in effects if isinstance(e, Send)]
    assert send.completion.key == KEY


def test_refused_actions_change_nothing() -> None:
    core = _core()
    for row in (_row(delivery_status=DeliveryStatus.DELIVERED),
                _row(delivery_status=DeliveryStatus.DISCARDED, result_text=None)):
        effects = core.handle(OperatorAsked(row, "redrive", 7), 60_000)
        assert [type(e) for e in effects] == [events.OperatorRefused]
    assert core.snapshot() == {}


def test_a_dismissal_releases_the_payload() -> None:
    effects = _core().handle(OperatorAsked(_row(), "dismiss", 1), 60_000)
    assert [e.change for e in effects if isinstance(e, Persist)] == [Dismissed()]
    assert not any(isinstance(e, Send) for e in effects)


def test_a_correction_after_a_give_up_sends_nothing() -> None:
    row = _row(result_text="corrected", receipt_ended_at_ms=40_000)
    assert _core().handle(RunFinished(row), 40_000) == []
    bug = _core(MUTANT_GIVE_UP_CORRECTION_SENDS).handle(RunFinished(row), 40_000)
    assert any(isinstance(e, Send) for e in bug)


# -- scenarios ---------------------------------------------------------------------------------


def _names(name: str, **kwargs: Any) -> list[str]:
    result = world.run(scenario.load(SCENARIOS / name), **kwargs)
    return sorted({v.invariant for v in result.violations})


def test_the_redrive_scenarios_pass_and_their_mutants_are_caught() -> None:
    assert _names("redrive-from-retained-payload.toml") == []
    assert _names("redrive-new-generation.toml") == []
    assert "redrive-from-retained" in _names("redrive-new-generation.toml",
                                             mutants=[MUTANT_REDRIVE_SAME_GENERATION])
    assert "given-up-waits-for-operator" in _names("redrive-from-retained-payload.toml",
                                                   mutants=[MUTANT_GIVE_UP_CORRECTION_SENDS])


def test_a_redrive_from_memory_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # A broken core that redrives from the record it held when the run gave up (before the
    # correction the store retained since), not from the store's row.
    original = redrive.operator

    def from_memory(core: Core, active: Any, event: Any, now_ms: int) -> Any:
        stale = attrs.evolve(event.record, receipt_ended_at_ms=None,
                             result_text="The mailer retries forever.")
        return original(core, active, attrs.evolve(event, record=stale), now_ms)

    _replace_handler(monkeypatch, redrive.operator, from_memory)
    assert "redrive-from-retained" in _names("redrive-from-retained-payload.toml")


def test_a_redrive_of_a_delivered_run_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    original = redrive.operator

    def no_check(core: Core, active: Any, event: Any, now_ms: int) -> Any:
        record = event.record
        if record.delivery_status == DeliveryStatus.DELIVERED:
            record = attrs.evolve(record, delivery_status=DeliveryStatus.SUSPENDED)
        return original(core, active, attrs.evolve(event, record=record), now_ms)

    _replace_handler(monkeypatch, redrive.operator, no_check)
    assert "redrive-from-retained" in _names("redrive-from-retained-payload.toml")


# -- the oracles over hand-made traces -----------------------------------------------------


def _trace(*entries: tuple[int, str, dict[str, Any]]) -> list[Record]:
    return [Record(seq, t, "x", kind, data) for seq, (t, kind, data) in enumerate(entries)]


def _send(t: int, key: str, ended: int = 10_000) -> tuple[int, str, dict[str, Any]]:
    return (t, "gateway.send", {"run_id": "run-1", "key": key, "ended_at": ended,
                                "requester": "requester:agent:main:main"})


def _operator(t: int, action: str = "redrive") -> tuple[int, str, dict[str, Any]]:
    return (t, "world.operator", {"request": 1, "action": action, "child": "c1",
                                  "run_id": "run-1"})


END = (10_000, "child.end", {"run_id": "run-1", "result": "r"})
GIVE_UP = (10_000, "delivery.give_up", {"run_id": "run-1", "status": "suspended"})


REFUSED = (10_000, "fault", {"kind": "send-permanent", "run_id": "run-1", "key": KEY,
                             "error": {"message": "chat not found"}})


def test_redrive_from_retained_wants_a_newer_generation_and_the_newest_receipt() -> None:
    # Given up as an outsider sees it (its key refused for good, never taken), with or without
    # the registry's own give-up record.
    fine = _trace(END, _send(10_000, KEY), REFUSED, _operator(60_000),
                  _send(60_000, f"{KEY}:g2"))
    assert redrive_from_retained(fine) == []
    same = _trace(END, _send(10_000, KEY), REFUSED, GIVE_UP, _operator(60_000),
                  _send(60_000, KEY))
    assert "not a newer generation" in redrive_from_retained(same)[0].message
    corrected = (40_000, "child.correction", {"run_id": "run-1", "ended_at": 40_000,
                                              "result": "r2"})
    stale = _trace(END, _send(10_000, KEY), REFUSED, corrected, _operator(60_000),
                   _send(60_000, f"{KEY}:g2"))
    assert "not the newest one" in redrive_from_retained(stale)[0].message
    # A forged give-up of a run whose send is still going asks nothing of the next send.
    going = _trace(END, _send(10_000, KEY), GIVE_UP, _operator(20_000), _send(25_000, KEY))
    assert redrive_from_retained(going) == []


def test_redrive_from_retained_bars_a_delivered_run() -> None:
    # Delivered as its requester saw it: the registry's record is neither needed nor believed.
    taken = (10_000, "requester.accept", {"run_id": "run-1", "key": KEY, "ended_at": 10_000,
                                          "text": "x"})
    trace = _trace(END, _send(10_000, KEY), taken, GIVE_UP, _operator(60_000),
                   _send(60_000, f"{KEY}:g2"))
    assert "was delivered when an operator asked" in redrive_from_retained(trace)[0].message


def test_given_up_waits_for_operator() -> None:
    # Given up as an outsider sees it: its key refused for good (or expired) and never taken;
    # the registry's own give-up record is neither needed nor believed.
    assert given_up_waits_for_operator(_trace(END, _send(10_000, KEY), REFUSED,
                                              _operator(60_000),
                                              _send(60_000, f"{KEY}:g2"))) == []
    unasked = _trace(END, _send(10_000, KEY), REFUSED, _send(40_000, f"{KEY}:g2"))
    assert "no operator redrive asked" in given_up_waits_for_operator(unasked)[0].message
    expired = _trace(END, _send(10_000, KEY), _send(10_000 + 30 * 60_000, f"{KEY}:g2"))
    assert "past its expiry" in given_up_waits_for_operator(expired)[0].message
    # No give-up record hides it, and a forged one excuses nothing nor blames a delivered run.
    taken = (10_000, "requester.accept", {"run_id": "run-1", "key": KEY})
    assert given_up_waits_for_operator(_trace(END, _send(10_000, KEY), taken, GIVE_UP,
                                              _send(40_000, f"{KEY}:g2"))) == []
    dismissed = (50_000, "delivery.dismiss", {"run_id": "run-1", "request": 1,
                                              "was": "suspended"})
    rows = (90_000, "world.rows", {"rows": [{"run_id": "run-1",
                                            "delivery_status": "discarded"}]})
    released = _trace(END, _send(10_000, KEY), REFUSED, _operator(50_000, "dismiss"),
                      _operator(60_000), _send(60_000, f"{KEY}:g2"), rows)
    assert "payload was released" in given_up_waits_for_operator(released)[0].message
    # A dismissal the registry refused (its row is not discarded) bars nothing.
    kept = (90_000, "world.rows", {"rows": [{"run_id": "run-1", "delivery_status": "delivered"}]})
    assert given_up_waits_for_operator(_trace(END, _send(10_000, KEY), dismissed,
                                              _operator(50_000, "dismiss"), _operator(60_000),
                                              _send(60_000, f"{KEY}:g2"), kept)) == []


def test_incomplete_not_retried_allows_only_an_operators_resend() -> None:
    broken = (20_000, "fault", {"kind": "chunk-fail", "run_id": "run-1", "key": KEY,
                                "chunk": 1})
    chunk = (20_000, "gateway.chunk", {"channel": "telegram", "key": KEY, "index": 0,
                                       "run_id": "run-1"})
    fresh_key = _trace(_send(20_000, KEY), chunk, broken, _send(60_000, f"{KEY}:g2"))
    assert incomplete_not_retried(fresh_key)  # the same receipt under a fresh key: a retry
    asked = _trace(_send(20_000, KEY), chunk, broken, _operator(60_000),
                   _send(60_000, f"{KEY}:g2"))
    assert incomplete_not_retried(asked) == []


def test_every_redrive_record_an_oracle_reads_is_registered() -> None:
    assert {"redrive-from-retained", "given-up-waits-for-operator"} <= set(invariants.BY_NAME)


def test_redrive_from_retained_reads_the_text_the_requester_took() -> None:
    def accept(text: str) -> tuple[int, str, dict[str, Any]]:
        return (60_000, "requester.accept", {
            "run_id": "run-1", "key": f"{KEY}:g2", "ended_at": 10_000, "generation": 2,
            "status": "ok", "replaces": None,
            "text": f"Child result:\n<prompt-data>\n{text}\n</prompt-data>\n\nStats: ..."})

    base = (END, _send(10_000, KEY), REFUSED, _operator(60_000), _send(60_000, f"{KEY}:g2"))
    assert redrive_from_retained(_trace(*base, accept("r"))) == []
    wrong = redrive_from_retained(_trace(*base, accept("an older text")))
    assert "not the payload its store retained" in wrong[0].message
