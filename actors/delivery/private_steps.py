"""Private parent completion in the delivery core (PRV-1..8): what the core does with a private
run at each decision point of its own delivery (its end, a restore, each attempt).

Plain functions of the core's state (``actors/delivery/core.py``), which the table and the send
path call. The rules are
:func:`actors.private.rules.private_hold`'s; the shell injects ``private_hold(record)``, which reads
the spawning turn's phase and the requester's current incarnation from the store:

* **retain** while the spawning turn is open: no announce runs, no deadline runs, the run stays
  idle (the result is in the store); a normal finish of the turn (or a restart) brings it back;
* **release** on a normal finish: the 30-minute window starts now (persisted once), then the
  hand-off is attempted as usual, privately (never to a channel, no usage statistics);
* **batch** once the turn yielded: the batch wake owns it (the batch hand-over decides);
* **close** once the bound incarnation is gone (reset, replaced, deleted): ``discarded`` with
  ``completion_handoff_unavailable``, nothing sent, cleanup runs. Checked again before every
  attempt and try, so a reset during the retries also closes it.
"""

from __future__ import annotations

from typing import Any

from actors import mutants
from actors.delivery.core import Core
from actors.delivery.edge import Persist
from actors.events.private import PrivateClosed, PrivateReleased, PrivateRetained
from actors.private.rules import HANDOFF_UNAVAILABLE, Hold
from actors.records.run_record import HandoffClosed, RunRecord, WindowStarted, apply


def hold_of(core: Core, record: RunRecord) -> Hold:
    hold = core._private_hold(record)
    if hold is Hold.CLOSE and mutants.MUTANT_PRIVATE_AFTER_RESET in core._mutants:
        return Hold.RELEASE  # the bug: handed to whatever incarnation the session is in
    return hold


def private_gate(core: Core, record: RunRecord, now_ms: int
                  ) -> tuple[RunRecord, list[Any], bool]:
    """At a private run's end or restore: (the record, effects, whether its delivery goes
    on). Retained while the spawning turn is open; closed once the bound incarnation is
    gone; else released, its window starting now (once: a restart keeps the start). A
    public run goes on untouched."""
    if not record.private:
        return record, [], True
    hold = hold_of(core, record)
    if hold is Hold.CLOSE:
        return record, close_private(core, record, now_ms), False
    if hold is Hold.RETAIN:
        core._probe("private.retained-while-turn-open")
        core._active.pop(record.run_id, None)
        return record, [PrivateRetained(record.run_id)], False
    if hold is Hold.BATCH:
        return record, [], True  # the yielded turn's batch takes it at the next step
    if record.window_started_at_ms is not None:
        return record, [], True
    change = WindowStarted(now_ms)
    if record.ended_at_ms is not None and now_ms > record.ended_at_ms:
        core._probe("private.window-started-at-release")
    return apply(record, change), [Persist(record.run_id, change),
                                   PrivateReleased(record.run_id, now_ms)], True


def closes(core: Core, record: RunRecord) -> bool:
    """Before each attempt and try: the bound incarnation may have gone meanwhile."""
    return record.private and hold_of(core, record) is Hold.CLOSE


def close_private(core: Core, record: RunRecord, now_ms: int) -> list[Any]:
    core._probe("private.handoff-unavailable")
    core._active.pop(record.run_id, None)
    change = HandoffClosed(HANDOFF_UNAVAILABLE)
    return [Persist(record.run_id, change),
            PrivateClosed(record.run_id, HANDOFF_UNAVAILABLE),
            *core._cleanup(apply(record, change), now_ms)]
