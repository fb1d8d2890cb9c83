"""The delivery actor's side of unfrozen waves (reference §c9; the rule:
``actors/yields/waves.py``).

When a child of a requester's non-yield turn settles (its cleanup, or a descendant's, or the
normal finish of the turn that spawned it), the delivery shell notes its top-level requester
session; after the message it looks at that session's waves. A wave due a wake becomes an outbox
row frozen at its first dispatch (persisted ``dispatching``, its key without ``:yield-``) and the
batch-wake outbox (``actors/delivery/wakes/delivery_wakes.py``) sends it, retries it and closes
it as any batch's; a wave of one already-delivered child is consumed (a closed row, so it is
carried).
"""

from __future__ import annotations

from actors.delivery.wakes.delivery_wakes import Wakes
from actors.delivery.wakes.outbox_messages import SaveBatch
from actors.events import batches as batch_events
from actors.mutants import MUTANT_WAVE_NEVER_WOKEN
from actors.records.batch_record import BatchRow, BatchStatus, agent_id
from actors.records.keys import is_cron, is_subagent
from actors.records.run_record import RunRecord
from actors.yields import waves
from actors.yields.turns import TurnState

CONSUMED = "one delivered child"


def top_level(session_key: str) -> bool:
    """A session that gets waves: not a sub-agent's (left to the descendant-settle path) and
    not a cron requester's (consumed without a wake, reference §c9)."""
    return not is_subagent(session_key) and not is_cron(session_key)


def turn_session(turn_run_id: str) -> str:
    """The session of ``turn:<session>:<incarnation>:<turn>``."""
    return turn_run_id.removeprefix("turn:").rsplit(":", 2)[0]


class Waves:
    def __init__(self, wakes: Wakes, mutants: frozenset[str]) -> None:
        self.wakes, self.store, self.port = wakes, wakes.store, wakes.port
        self._mutants = mutants
        self._dirty: dict[str, None] = {}  # sessions to look at, in the order noted

    def settled(self, run_id: str) -> None:
        """A run was cleaned up: its top-level requester's waves may be due."""
        record = self.store.get(run_id)
        while record.requester_run_id is not None:
            record = self.store.get(record.requester_run_id)
        if record.requester_turn_id is not None and top_level(record.requester):
            self._dirty[record.requester] = None

    def turn_finished(self, turn_run_id: str) -> None:
        session = turn_session(turn_run_id)
        if top_level(session):
            self._dirty[session] = None

    def restore(self) -> None:
        """A new incarnation looks at every top-level session once."""
        for session in self.store.turn_requesters():
            if top_level(session):
                self._dirty[session] = None
        self.check()

    def check(self) -> None:
        while self._dirty:
            session = next(iter(self._dirty))
            del self._dirty[session]
            self._session(session)

    # -- one session -----------------------------------------------------------------------------

    def _session(self, session: str) -> None:
        rows = self.store.batches_of(session)
        carried = frozenset(run_id for row in rows if not row.yielded for run_id in row.members)
        yielded = {row.turn_run_id for row in rows if row.yielded}
        finished: dict[str, bool] = {}
        by_incarnation: dict[int, list[RunRecord]] = {}
        for record in self.store.wave_candidates(session):
            turn = record.requester_turn_id
            if turn is None or turn in yielded:
                continue
            if turn not in finished:
                finished[turn] = self.store.turn_state(turn) == TurnState.FINISHED
            if finished[turn]:
                by_incarnation.setdefault(record.requester_incarnation, []).append(record)
        for incarnation, records in by_incarnation.items():
            for component in waves.components(records, self._mutants):
                # Neither due nor waiting (waves.due, waves.descendants_wait) when carried
                # whole or while one has not settled: the descendants are walked only when
                # every member settled.
                if all(record.run_id in carried for record in component) \
                        or not all(self._settled(record) for record in component):
                    continue
                siblings = [waves.Sibling(record, True, self._owned_pending(record))
                            for record in component]
                wave = waves.due(siblings, carried)
                if wave is None:
                    if waves.descendants_wait(siblings, carried):
                        self.port.probe("wave.descendants-pending")  # a later settle rechecks
                    continue
                self._settle(session, incarnation, wave, component)

    def _settled(self, record: RunRecord) -> bool:
        """Ended, its own delivery resolved (cleaned up) and not deciding."""
        return record.ended_at_ms is not None and record.cleaned_up_at_ms is not None \
            and not record.owes \
            and not self.wakes.core.sending(record.run_id)

    def _owned_pending(self, record: RunRecord) -> int:
        """Descendants not settled: not cleaned up, or a newer generation (a correction,
        DEL-12) whose delivery is open again."""
        pending = 0
        frontier = [record]
        while frontier:
            for child in self.store.direct_children(frontier.pop().run_id):
                pending += child.cleaned_up_at_ms is None \
                    or child.owes
                frontier.append(child)
        return pending

    def _settle(self, session: str, incarnation: int, wave: waves.Wave,
                records: list[RunRecord]) -> None:
        consumed = wave.verdict is waves.Verdict.CONSUMED
        if not consumed and MUTANT_WAVE_NEVER_WOKEN in self._mutants:
            return  # the bug: a wave due its wake is dropped (and found due again, in vain)
        row = BatchRow(batch_id=f"wave:{','.join(wave.members)}", requester=session,
                       agent_id=agent_id(session), turn_run_id=None, incarnation=incarnation,
                       members=wave.members, rearm_generation=0, frozen_at_ms=self.port.now_ms,
                       status=BatchStatus.CLOSED if consumed else BatchStatus.PENDING,
                       outcome=CONSUMED if consumed else None)
        if wave.joined_late:
            self.port.probe("wave.joined-late")
        self.port.probe("wave.consumed-one-delivered" if consumed else "wave.wake")
        event = batch_events.WaveSettled(row.batch_id, list(wave.members), row.base_key(),
                                         CONSUMED if consumed else None, wave.joined_late)
        if consumed:
            self.store.save_batch(row)
            self.port.emit(event)
            return
        self.port.emit(event)
        members = self.wakes.members(row)
        effects = self.wakes.outbox.check(row, members, self.wakes.requester(row),
                                          self.port.now_ms)
        if not any(isinstance(e, SaveBatch) for e in effects):
            effects = [SaveBatch(row), *effects]  # frozen even when nothing goes out yet
        self.wakes.run(effects)
