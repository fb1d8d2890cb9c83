"""A stateful property test of the delivery core alone (no Trio, no kernel, no SQLite).

Hypothesis drives one :class:`DeliveryCore` through child ends, acknowledgements (lost, late and
duplicated), rejections (transient, permanent, after a partial send, unclassified), ack timeouts,
timers, crashes at any effect and restores from the persisted rows. The rows are a dict the test
updates with the core's ``Persist`` changes (through the same ``apply`` the store's columns
follow); the requester is a tiny model that records a completion once per idempotency key, as a
real session does.

The invariants are the delivery contract: a run is handed to its requester at most once; an
illegal input changes nothing; a resolved run never reopens; after any crash the restored core
holds exactly the obligations the rows say are open. The last tests run the same machine against
deliberately broken cores and require Hypothesis to find the break.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from actors.delivery import attempts
from actors.delivery.core import Core
from actors.delivery.edge import Effect, Input, Persist, Restored, RunFinished, Send, StartTimer
from actors.delivery.table import DeliveryCore, DeliveryProtocolError
from actors.messages import Completion, CompletionAck, SendRejected
from actors.mutants import MUTANT_FRESH_KEY_AFTER_RESTART
from actors.records.run_record import RunEnded, RunRecord, apply
from actors.records.send_error import SendError
from actors.states import DeliveryStatus, OutcomeStatus, Waiting

REQUESTER = "agent:main:main"
ERRORS = {
    "transient": SendError("gateway not connected"),
    "permanent": SendError.of("announce delivery failed", "chat not found"),
    "sent-before-error": SendError("chunk 2 failed: ECONNRESET", sent_before_error=True),
    "unclassified": SendError("something odd happened"),
}
RESOLVED = (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.SUSPENDED)


def _rows() -> dict[str, RunRecord]:
    """Two runs that expect a completion and one fire-and-forget run, as the store registers
    them (in registration order)."""
    rows = {}
    for n, required in ((1, True), (2, True), (3, False)):
        rows[f"run-{n}"] = RunRecord(
            f"run-{n}", f"c{n}", f"agent:main:subagent:c{n}", REQUESTER, "task", required,
            created_at_ms=0,
            delivery_status=DeliveryStatus.PENDING if required else DeliveryStatus.NOT_REQUIRED)
    return rows


RUNS = tuple(_rows())


def _render(record: RunRecord, kind: str) -> str:
    return f"[{kind}] {record.run_id}: {record.result_text}"


class DeliveryMachine(RuleBasedStateMachine):
    core_type: ClassVar[type[DeliveryCore[str]]] = DeliveryCore
    mutants: ClassVar[frozenset[str]] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self.rows = _rows()
        self.now = 0
        self.incarnation = 1
        self.core = self._new_core()
        self.sends: list[Completion] = []  # completions in flight to the requester
        self.acks: list[CompletionAck | SendRejected] = []  # answers in flight to delivery
        self.timers: list[tuple[int, int, Any]] = []  # (due, seq, payload) of this incarnation
        self.seq = 0
        self.recorded_keys: set[str] = set()  # the requester's source-delivery facts
        self.handed_over: Counter[str] = Counter()  # run -> completions the requester accepted
        self.resolved: dict[str, DeliveryStatus] = {}

    def _new_core(self) -> DeliveryCore[str]:
        return self.core_type(self.incarnation, lambda: 0.5, _render,
                              lambda session_key: "top-level", self.mutants)

    # -- the world around the core ------------------------------------------------------------

    def _feed(self, event: Input, crash_at: int | None) -> None:
        """Hand ``event`` to the core and perform its effects; with ``crash_at``, the process
        dies before that effect (if there is one) and a new incarnation restores."""
        self._perform(self.core.handle(event, self.now), crash_at)

    def _perform(self, effects: list[Effect], crash_at: int | None = None) -> None:
        for index, effect in enumerate(effects):
            if crash_at is not None and index == crash_at:
                self._crash()
                return
            if isinstance(effect, Persist):
                self.rows[effect.run_id] = apply(self.rows[effect.run_id], effect.change)
            elif isinstance(effect, Send):
                self.sends.append(effect.completion)
            elif isinstance(effect, StartTimer):
                self.seq += 1
                self.timers.append((self.now + effect.delay_ms, self.seq, effect.payload))

    def _crash(self) -> None:
        # Memory, mailbox and timers die; the rows and messages already in the network survive.
        self.incarnation += 1
        self.timers.clear()
        self.core = self._new_core()
        self._perform(self.core.restore(list(self.rows.values()), self.now))

    # -- rules ---------------------------------------------------------------------------------

    crash_at = st.none() | st.integers(0, 4)

    @rule(run=st.sampled_from(RUNS), ok=st.booleans(), crash_at=crash_at)
    def child_ends(self, run: str, ok: bool, crash_at: int | None) -> None:
        if self.rows[run].ended_at_ms is not None:
            return
        status = OutcomeStatus.OK if ok else OutcomeStatus.ERROR
        self.rows[run] = apply(self.rows[run], RunEnded(self.now, status, None, f"result of {run}",
                                                        None, None, None))
        self._feed(RunFinished(self.rows[run]), crash_at)

    @precondition(lambda self: any(r.ended_at_ms is not None for r in self.rows.values()))
    @rule(run=st.sampled_from(RUNS))
    def duplicate_end_notice(self, run: str) -> None:
        if self.rows[run].ended_at_ms is not None:
            self._feed(RunFinished(self.rows[run]), None)

    @precondition(lambda self: self.sends)
    @rule(index=st.integers(0, 10), ack_lost=st.booleans())
    def requester_receives(self, index: int, ack_lost: bool) -> None:
        """The completion reaches the requester; its acknowledgement may be lost (ambiguous)."""
        completion = self.sends.pop(index % len(self.sends))
        accepted = completion.key not in self.recorded_keys
        if accepted:
            self.recorded_keys.add(completion.key)
            self.handed_over[completion.run_id] += 1
        if not ack_lost:
            self.acks.append(CompletionAck(completion.key, completion.run_id, accepted))

    @precondition(lambda self: self.sends)
    @rule(index=st.integers(0, 10), error=st.sampled_from(sorted(ERRORS)))
    def gateway_rejects(self, index: int, error: str) -> None:
        completion = self.sends.pop(index % len(self.sends))
        self.acks.append(SendRejected(completion.key, completion.run_id, ERRORS[error],
                                      dispatch=completion.dispatch))

    @precondition(lambda self: self.acks)
    @rule(index=st.integers(0, 10), duplicate=st.booleans(), crash_at=crash_at)
    def delivery_hears_back(self, index: int, duplicate: bool, crash_at: int | None) -> None:
        """An ack or rejection arrives (a duplicated one stays in flight for later)."""
        answer = self.acks[index % len(self.acks)]
        if not duplicate:
            self.acks.remove(answer)
        self._feed(answer, crash_at)

    @precondition(lambda self: self.timers)
    @rule(crash_at=crash_at)
    def timer_fires(self, crash_at: int | None) -> None:
        """The earliest timer fires (an ack timeout, the next try, the next attempt)."""
        self.timers.sort()
        due, _, payload = self.timers.pop(0)
        self.now = max(self.now, due)
        self._feed(payload, crash_at)

    @rule(ms=st.sampled_from([1_000, 60_000, 10 * 60_000]))
    def time_passes(self, ms: int) -> None:
        self.now += ms

    @rule()
    def crash(self) -> None:
        self._crash()

    @precondition(lambda self: any(self.core.state(run) != Waiting.IDLE for run in RUNS))
    @rule(run=st.sampled_from(RUNS))
    def illegal_restore_while_in_flight(self, run: str) -> None:
        if self.core.state(run) == Waiting.IDLE:
            return
        before = self.core.snapshot()
        with pytest.raises(DeliveryProtocolError):
            self.core.handle(Restored(self.rows[run]), self.now)
        assert self.core.snapshot() == before, "an illegal input changed the core's state"

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def at_most_one_hand_off_per_run(self) -> None:
        twice = [run for run, n in self.handed_over.items() if n > 1]
        assert not twice, f"handed to the requester more than once: {twice}"

    @invariant()
    def a_resolved_run_never_reopens(self) -> None:
        for run, row in self.rows.items():
            if row.delivery_status in RESOLVED:
                first = self.resolved.setdefault(run, row.delivery_status)
                assert row.delivery_status == first, f"{run} went from {first} to " \
                                                     f"{row.delivery_status}"
                assert self.core.state(run) == Waiting.IDLE, f"{run} reopened after {first}"
            else:
                assert run not in self.resolved, f"{run} went back to {row.delivery_status}"

    @invariant()
    def the_core_holds_exactly_the_open_obligations(self) -> None:
        # After any crash and restore (and at every other step) the runs in flight are exactly
        # the ended runs whose rows say a completion is still owed.
        owed = {run for run, row in self.rows.items()
                if row.ended_at_ms is not None and row.delivery_status == DeliveryStatus.PENDING}
        in_flight = {run for run in RUNS if self.core.state(run) != Waiting.IDLE}
        assert in_flight == owed, f"in flight {sorted(in_flight)}, owed {sorted(owed)}"

    @invariant()
    def delivered_means_handed_over(self) -> None:
        for run, row in self.rows.items():
            if row.delivery_status == DeliveryStatus.DELIVERED:
                assert self.handed_over[run] == 1, f"{run} recorded delivered, never received"


TestDeliveryMachine = DeliveryMachine.TestCase
TestDeliveryMachine.settings = settings(max_examples=100, stateful_step_count=30, deadline=None,
                                        database=None)


@pytest.mark.slow
def test_delivery_machine_long() -> None:
    run_state_machine_as_test(DeliveryMachine, settings=settings(
        max_examples=3_000, stateful_step_count=60, deadline=None, database=None))


# -- the machine catches broken cores ----------------------------------------------------------

# Finding the break is the point; shrinking it would only cost time.
_HUNT = settings(max_examples=1_000, stateful_step_count=30, deadline=None, database=None,
                 derandomize=True, print_blob=False, phases=[Phase.generate])


def _finds(machine: type[DeliveryMachine], message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        run_state_machine_as_test(machine, settings=_HUNT)


def test_it_catches_a_fresh_key_after_restart() -> None:
    """The built-in mutant: a restored incarnation resends under a new idempotency key, so a
    completion whose ack was lost reaches its requester twice."""

    class FreshKey(DeliveryMachine):
        mutants = frozenset({MUTANT_FRESH_KEY_AFTER_RESTART})

    _finds(FreshKey, "more than once")


class _ReopeningCore(DeliveryCore[str]):
    """Treats every end notice as a first one, even for a run already resolved."""

    def handle(self, event: Input, now_ms: int) -> list[Effect]:
        if isinstance(event, RunFinished) and self.state(event.run_id) is Waiting.IDLE:
            record = attrs.evolve(event.record, delivery_status=DeliveryStatus.PENDING,
                                  cleaned_up_at_ms=None)
            if record.required:
                event = RunFinished(record)
        return super().handle(event, now_ms)


def test_it_catches_a_core_that_reopens_a_resolved_run() -> None:
    class Reopening(DeliveryMachine):
        core_type = _ReopeningCore

    _finds(Reopening, "reopened|more than once|went from")


def test_it_catches_a_give_up_that_is_not_persisted(monkeypatch: pytest.MonkeyPatch) -> None:
    # A core that gives up without persisting it: the row still says a completion is owed.
    original = attempts.give_up

    def forgetful(core: Core, active: Any, reason: Any, error: str | None,
                  now_ms: int) -> list[Effect]:
        return [e for e in original(core, active, reason, error, now_ms)
                if not isinstance(e, Persist)]

    monkeypatch.setattr(attempts, "give_up", forgetful)
    _finds(DeliveryMachine, "owed")
