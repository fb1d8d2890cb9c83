"""What the delivery core keeps in memory, and the steps every part of it shares. Pure.

:class:`CoreState` holds the runs whose delivery is in flight in this incarnation
(:class:`Active`), what the shell injects (the render, the store's answers as callables), and
the steps the handlers of every part share: a run's idempotency key and expiry deadline, its
cleanup, a change persisted, the evidence that resolves it. The parts are plain functions of
it, each in its own module: the send path (``attempts``), receipts and restarts
(``receipts``), operator requests (``redrive``), private runs (``private_steps``), the hand-over
to a yield batch (``wakes.batch_handover``); ``table`` dispatches to them by reference, and its
:class:`~actors.delivery.table.DeliveryCore` is this state with the entry points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeAlias, TypeVar

import attrs

from actors import events, mutants
from actors.announce.labels import is_announce_skip
from actors.delivery.edge import Effect, Persist, persisted
from actors.mutants import MUTANT_FULL_TEXT_IN_MEMORY
from actors.private.rules import Hold, window_deadline_ms
from actors.records import claims, retry
from actors.records.retention import ResolvedRuns, RunSummary
from actors.records.run_record import (
    Change,
    CleanedUp,
    RunRecord,
    completion_key,
    generation_key,
)
from actors.states import DeliveryStatus, EvidenceKind, Waiting

K = TypeVar("K")


@attrs.define
class Active:
    """In-memory state of a run whose delivery is in flight in this incarnation."""

    record: RunRecord
    key: str
    text: str | None = None  # the rendered announce block, made once per run and target
    target: str | None = None  # the session this attempt sends to (a fallback, DEL-4)
    failed_tries: int = 0
    sent_at_ms: int = 0  # when the current try was handed to the gateway (its timeout's start)
    token: int = 0  # identifies the current transport try; stale timers carry another
    waiting: Waiting = Waiting.IDLE
    # The latest error a send was refused with (DEL-9): an unanswered try does not replace it.
    concrete_error: str | None = None
    # The last try went unanswered: the requester may have it, so only an answer (not a yield
    # batch) may settle it.
    ambiguous: bool = False


# The error a completion waits on when its nested requester is gone with no fallback (DEL-4).
REQUESTER_UNAVAILABLE = "requester session unavailable"
# The error a frozen batch closes with after ten counted deferrals (reference §c9): the registry's
# own give-up, sent to no requester, so no refusal a later generation is blocked on either.
DEFERRAL_ERROR = "requester settle wake deferred too many times"


def carried_error(active: Active | None, record: RunRecord) -> str | None:
    """The concrete error a restarted actor, or a run's next delivery generation (reopened,
    redriven), is still blocked on (DEL-9: kept across retries): the in-flight delivery's, else
    the row's persisted one. A "requester unavailable" wait was no refusal of a send (DEL-4),
    nor was a batch's close after its deferral limit (seed 002: the warning keeps "the concrete
    delivery error"; a redrive after that close whose tries go unanswered is blocked on the
    announce timeout: seed 4399)."""
    if active is not None and active.concrete_error is not None:
        return active.concrete_error
    if record.last_error in (REQUESTER_UNAVAILABLE, DEFERRAL_ERROR):
        return None
    return record.last_error


class CoreState(Generic[K]):
    """``render(record, kind)`` makes the text a requester of ``requester_kind(session_key)``
    reads; both come from outside, so the core never formats anything itself."""

    def __init__(
        self,
        incarnation: int,
        jitter: Callable[[], float],
        render: Callable[[RunRecord, K], str],
        requester_kind: Callable[[str], K],
        mutants: frozenset[str] = frozenset(),
        probe: Callable[[str], None] = lambda name: None,
        pending_descendants: Callable[[RunRecord], int] = lambda record: 0,
        checkpoint: Callable[[RunRecord, bool], tuple[str, int] | None] = lambda r, any_run: None,
        route: Callable[[RunRecord], str | None] = lambda record: record.requester,
        findings: Callable[[RunRecord], str | None] = lambda record: None,
        batch_of: Callable[[str], str | None] = lambda run_id: None,
        private_hold: Callable[[RunRecord], Hold] = lambda record: Hold.RELEASE,
    ) -> None:
        self.incarnation = incarnation
        # The requester's checkpoint of a run's receipt (key, end time): of that run, or (the
        # bug) of any run of its child session (DEL-13).
        self._checkpoint = checkpoint
        self._route = route
        self._batch_of = batch_of  # the open yield batch that owns a run, if any (YLD-2)
        self._private_hold = private_hold  # PRV: the spawning turn and requester incarnation
        self._pending_descendants = pending_descendants
        self._findings = findings  # a run's findings section, None without children (DEL-6)
        self._jitter = jitter
        self._render = render
        self._requester_kind = requester_kind
        self._mutants = mutants
        self._probe = probe  # names a rare condition where it happens (actors/probes.py)
        self._active: dict[str, Active] = {}
        # Try tokens are unique across incarnations too (each starts its own range): a dead
        # process's try and a new one's on the same key echo different tokens (§c17).
        self._tries = incarnation << 32
        self._resolved = ResolvedRuns(MUTANT_FULL_TEXT_IN_MEMORY in mutants)

    # -- what the shell asks ---------------------------------------------------------------

    def state(self, run_id: str) -> Waiting:
        active = self._active.get(run_id)
        return Waiting.IDLE if active is None else active.waiting

    def awaits_ack(self, run_id: str, token: int) -> bool:
        """Whether ``run_id``'s transport try ``token`` is still waiting for its answer (a
        try's token is never reused in an incarnation: once over, its ack timeout is moot)."""
        active = self._active.get(run_id)
        return active is not None and active.waiting is Waiting.ACK and active.token == token

    def waits(self) -> list[Waiting]:
        """What each in-flight run waits for (the shell names it when its process dies)."""
        return [active.waiting for active in self._active.values()]

    def remember(self, summaries: Iterable[RunSummary]) -> None:
        """What a new incarnation loads of the runs resolved before it (from the store)."""
        self._resolved.load(summaries)

    def memory(self) -> dict[str, dict[str, object]]:
        """What the registry holds in memory, run by run, as an observer would dump it."""
        return self._resolved.dump(a.record for a in self._active.values())

    def snapshot(self) -> dict[str, tuple[object, ...]]:
        """What the core holds in memory, for tests that check an input changed nothing."""
        return {run_id: (a.record, a.key, a.text, a.failed_tries, a.token, a.waiting)
                for run_id, a in self._active.items()}

    def unowned(self, run_id: str) -> bool:
        """Whether a :class:`BatchClaim` of this run is refused whatever the run's state: no
        open batch owns its result (a public sibling in a private batch keeps its own delivery,
        PRV-5; a wave's members were never frozen). Every handler below refuses such a claim
        with no effect and no probe, so the outbox's shell need not ask: it re-claims each
        unsettled member after every message of the delivery actor, and in a big tree one such
        member waiting out its backoff was asked tens of thousands of times
        (docs/performance-log.md, wave 13d)."""
        return self._batch_of(run_id) is None

    def sending(self, run_id: str) -> bool:
        """Whether the run's own delivery is still deciding (a try out, or unanswered)."""
        active = self._active.get(run_id)
        return active is not None and (active.waiting == "ack" or active.ambiguous)

    def in_flight(self, run_ids: Sequence[str]) -> list[bool]:
        """:meth:`sending` of each run, with no Python call per run (a batch look reads it for
        every member to tell whether anything changed since its last look)."""
        get = self._active.get
        return [(active := get(run_id)) is not None
                and (active.waiting == "ack" or active.ambiguous) for run_id in run_ids]

    # -- steps shared by handlers --------------------------------------------------------------

    def _key(self, record: RunRecord) -> str:
        if mutants.MUTANT_KEY_WITHOUT_RUN_ID in self._mutants:
            return generation_key(f"announce:v1:{record.child_session_key}", record.generation)
        return generation_key(completion_key(record.child_session_key, record.run_id),
                              record.generation)

    def _deadline(self, record: RunRecord) -> int:
        # A correction's window starts at its own end time, a redrive's at the redrive.
        ended = record.window_start_ms
        assert ended is not None
        if record.window_started_at_ms is not None:
            # A private result's window counts from its release (PRV-7), or from a later
            # correction's end or redrive, as any generation's does (DEL-12).
            return window_deadline_ms(max(record.window_started_at_ms, ended))
        if mutants.MUTANT_EXPIRY_FROM_SPAWN in self._mutants:
            return retry.expiry_deadline_ms(record.created_at_ms, record.required)
        return retry.expiry_deadline_ms(ended, record.required)

    def _skips(self, record: RunRecord) -> bool:
        return is_announce_skip(record.result_text) and (
            mutants.MUTANT_ANNOUNCE_SKIP_AS_TEXT not in self._mutants)

    def _announce_skip(self, record: RunRecord, now_ms: int) -> list[Effect]:
        """ANNOUNCE_SKIP: nothing is sent, the obligation is delivered, cleanup still runs."""
        self._probe("delivery.announce-skip")
        self._active.pop(record.run_id, None)
        return self._resolve(record, EvidenceKind.SEND_SUPPRESSED, None, record.receipt_at_ms,
                             now_ms, events.AnnounceSkipped(record.run_id))

    def _cleanup(self, record: RunRecord, now_ms: int) -> list[Effect]:
        """Once the obligations resolved: record the cleanup, then trace it. No crash point lies
        between the two effects, so the trace shows each durable cleanup exactly once."""
        if record.cleaned_up_at_ms is not None:
            # A reopened generation (DEL-12) resolved: the run's cleanup ran once already;
            # memory keeps the newer generation's summary.
            self._resolved.keep(record)
            return []
        cleaned = events.RunCleanedUp(record.run_id, record.delivery_status.value)
        after, persist = persisted(record, CleanedUp(now_ms))
        self._resolved.keep(after)
        if mutants.MUTANT_CLEANUP_NOT_RECORDED in self._mutants:
            return [cleaned]
        return [persist, cleaned]

    def _persist(self, active: Active, change: Change) -> Persist:
        active.record, persist = persisted(active.record, change)
        return persist

    def _newer_receipt(self, record: RunRecord) -> bool:
        """A delivered run whose producer has since written a newer receipt (DEL-12)."""
        if mutants.MUTANT_DELIVERED_IGNORES_CORRECTION in self._mutants:
            return False  # the bug: delivered is final, the newer receipt is never sent
        return (record.delivery_status == DeliveryStatus.DELIVERED and record.required
                and not claims.has_evidence(record))

    def _resolve(self, record: RunRecord, kind: EvidenceKind, key: str | None,
                 ended_at_ms: int | None, now_ms: int, note: Effect) -> list[Effect]:
        """Evidence saved, then the claim cleared, then delivered (each durable); the trace
        ``note``; then the cleanup."""
        effects: list[Effect] = []
        for change in claims.resolution(record, kind, key, ended_at_ms, now_ms, self._mutants):
            record, persist = persisted(record, change)
            effects.append(persist)
        return [*effects, note, *self._cleanup(record, now_ms)]


# What the parts' functions take: the core's state, whatever its requester kind.
Core: TypeAlias = CoreState[Any]
