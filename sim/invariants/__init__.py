"""All invariants, by name; see base.py for what an invariant may and may not do."""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.announce import INVARIANTS as _ANNOUNCE
from sim.invariants.archive import INVARIANTS as _ARCHIVE
from sim.invariants.base import Invariant, Violation
from sim.invariants.child_log import INVARIANTS as _CHILD_LOG
from sim.invariants.chunks import INVARIANTS as _CHUNKS
from sim.invariants.delivery import INVARIANTS as _DELIVERY
from sim.invariants.findings import INVARIANTS as _FINDINGS
from sim.invariants.handoffs import INVARIANTS as _HANDOFFS
from sim.invariants.lifecycle import INVARIANTS as _LIFECYCLE
from sim.invariants.limits import INVARIANTS as _LIMITS
from sim.invariants.mirrors import INVARIANTS as _MIRRORS
from sim.invariants.nesting import INVARIANTS as _NESTING
from sim.invariants.output import INVARIANTS as _OUTPUT
from sim.invariants.permissions import INVARIANTS as _PERMISSIONS
from sim.invariants.private import INVARIANTS as _PRIVATE
from sim.invariants.private_turns import INVARIANTS as _PRIVATE_TURNS
from sim.invariants.receipts import INVARIANTS as _RECEIPTS
from sim.invariants.recovery import INVARIANTS as _RECOVERY
from sim.invariants.redrive import INVARIANTS as _REDRIVE
from sim.invariants.retention import INVARIANTS as _RETENTION
from sim.invariants.retries import INVARIANTS as _RETRIES
from sim.invariants.routes import INVARIANTS as _ROUTES
from sim.invariants.send_errors import INVARIANTS as _SEND_ERRORS
from sim.invariants.sessions import INVARIANTS as _SESSIONS
from sim.invariants.turns import INVARIANTS as _TURNS
from sim.invariants.wake_budgets import INVARIANTS as _WAKE_BUDGETS
from sim.invariants.wake_message import INVARIANTS as _WAKE_MESSAGE
from sim.invariants.wake_sends import INVARIANTS as _WAKE_SENDS
from sim.invariants.wave_liveness import INVARIANTS as _WAVE_LIVENESS
from sim.invariants.waves import INVARIANTS as _WAVES
from sim.invariants.yields import INVARIANTS as _YIELDS
from sim.trace import Record

ALL: tuple[Invariant, ...] = (_DELIVERY + _SEND_ERRORS + _RETRIES + _CHUNKS + _OUTPUT + _CHILD_LOG
                              + _ANNOUNCE + _ARCHIVE + _LIFECYCLE + _NESTING + _ROUTES
                              + _PERMISSIONS + _HANDOFFS + _RECOVERY + _RETENTION + _MIRRORS
                              + _RECEIPTS + _FINDINGS + _LIMITS + _REDRIVE + _TURNS
                              + _YIELDS + _WAKE_MESSAGE + _PRIVATE + _SESSIONS + _PRIVATE_TURNS
                              + _WAVES + _WAKE_BUDGETS + _WAKE_SENDS + _WAVE_LIVENESS)
BY_NAME: dict[str, Invariant] = {inv.name: inv for inv in ALL}


def check(trace: Sequence[Record], names: Sequence[str] | None = None) -> list[Violation]:
    selected = ALL if names is None else tuple(BY_NAME[n] for n in names)
    violations: list[Violation] = []
    for invariant in selected:
        violations += invariant.check(trace)
    return violations


__all__ = ["ALL", "BY_NAME", "Invariant", "Violation", "check"]
