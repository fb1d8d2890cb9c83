"""All invariants, by name; see base.py for what an invariant may and may not do.

The oracles sit in one package per subsystem they judge (``delivery``, ``yields``, ``private``,
``nesting``, ``gateway``, ``child``); what several of them read is computed once per run in
modules no oracle owns: ``index`` (the run's records by kind: each oracle walks only the kinds
it reads), ``observations`` (what was asked, what was refused and how), ``lineage`` (who
spawned whom, what a kill, reset or delete stopped), ``settled`` (when a run settled).
:func:`check` groups a trace's records and classifies its refusals once before the oracles
read them, and drops both once they are done: no oracle keeps anything between runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.child.announce import INVARIANTS as _ANNOUNCE
from sim.invariants.child.archive import INVARIANTS as _ARCHIVE
from sim.invariants.child.child_log import INVARIANTS as _CHILD_LOG
from sim.invariants.child.history_paging import INVARIANTS as _HISTORY_PAGING
from sim.invariants.child.output import INVARIANTS as _OUTPUT
from sim.invariants.child.restarts import INVARIANTS as _RESTARTS
from sim.invariants.child.run_timeout import INVARIANTS as _RUN_TIMEOUT
from sim.invariants.delivery.chunks import INVARIANTS as _CHUNKS
from sim.invariants.delivery.handoffs import INVARIANTS as _HANDOFFS
from sim.invariants.delivery.keys import INVARIANTS as _KEYS
from sim.invariants.delivery.lifecycle import INVARIANTS as _LIFECYCLE
from sim.invariants.delivery.newest_delivered import INVARIANTS as _NEWEST_DELIVERED
from sim.invariants.delivery.reached import INVARIANTS as _DELIVERY
from sim.invariants.delivery.receipts import INVARIANTS as _RECEIPTS
from sim.invariants.delivery.recovery import INVARIANTS as _RECOVERY
from sim.invariants.delivery.redrive import INVARIANTS as _REDRIVE
from sim.invariants.delivery.retention import INVARIANTS as _RETENTION
from sim.invariants.delivery.retries import INVARIANTS as _RETRIES
from sim.invariants.delivery.send_errors import INVARIANTS as _SEND_ERRORS
from sim.invariants.expiry import INVARIANTS as _EXPIRY
from sim.invariants.gateway.chunk_limits import INVARIANTS as _CHUNK_LIMITS
from sim.invariants.gateway.mirrors import INVARIANTS as _MIRRORS
from sim.invariants.gateway.permissions import INVARIANTS as _PERMISSIONS
from sim.invariants.gateway.routes import INVARIANTS as _ROUTES
from sim.invariants.index import judging
from sim.invariants.nesting.findings import INVARIANTS as _FINDINGS
from sim.invariants.nesting.kills import INVARIANTS as _KILLS
from sim.invariants.nesting.limits import INVARIANTS as _LIMITS
from sim.invariants.nesting.queue_order import INVARIANTS as _QUEUE_ORDER
from sim.invariants.nesting.queue_start import INVARIANTS as _QUEUE_START
from sim.invariants.nesting.requesters import INVARIANTS as _NESTING
from sim.invariants.nesting.reset_cascade import INVARIANTS as _RESET_CASCADE
from sim.invariants.nesting.sessions import INVARIANTS as _SESSIONS
from sim.invariants.observations import rejections
from sim.invariants.private.completion import INVARIANTS as _PRIVATE
from sim.invariants.private.turns import INVARIANTS as _PRIVATE_TURNS
from sim.invariants.yields.released import INVARIANTS as _RELEASED
from sim.invariants.yields.turns import INVARIANTS as _TURNS
from sim.invariants.yields.wake_budgets import INVARIANTS as _WAKE_BUDGETS
from sim.invariants.yields.wake_message import INVARIANTS as _WAKE_MESSAGE
from sim.invariants.yields.wake_sends import INVARIANTS as _WAKE_SENDS
from sim.invariants.yields.wave_liveness import INVARIANTS as _WAVE_LIVENESS
from sim.invariants.yields.waves import INVARIANTS as _WAVES
from sim.invariants.yields.yield_batches import INVARIANTS as _YIELDS
from sim.trace import Record

ALL: tuple[Invariant, ...] = (_DELIVERY + _SEND_ERRORS + _RETRIES + _EXPIRY + _CHUNKS + _OUTPUT
                              + _CHILD_LOG
                              + _ANNOUNCE + _ARCHIVE + _LIFECYCLE + _NESTING + _ROUTES
                              + _PERMISSIONS + _HANDOFFS + _RECOVERY + _RETENTION + _MIRRORS
                              + _RECEIPTS + _FINDINGS + _LIMITS + _REDRIVE + _TURNS
                              + _YIELDS + _WAKE_MESSAGE + _PRIVATE + _SESSIONS + _PRIVATE_TURNS
                              + _WAVES + _WAKE_BUDGETS + _WAKE_SENDS + _WAVE_LIVENESS + _QUEUE_ORDER
                              + _QUEUE_START
                              + _CHUNK_LIMITS + _NEWEST_DELIVERED + _HISTORY_PAGING + _KEYS
                              + _RESET_CASCADE + _KILLS + _RUN_TIMEOUT + _RELEASED
                              + _RESTARTS)
BY_NAME: dict[str, Invariant] = {inv.name: inv for inv in ALL}


def check(trace: Sequence[Record], names: Sequence[str] | None = None) -> list[Violation]:
    selected = ALL if names is None else tuple(BY_NAME[n] for n in names)
    violations: list[Violation] = []
    with judging(trace):  # the run's grouping of its records, dropped once judged
        rejections(trace)  # classify the refusals once; the oracles read them many times over
        for invariant in selected:
            violations += invariant.check(trace)
    return violations


__all__ = ["ALL", "BY_NAME", "Invariant", "Violation", "check"]
