"""What the harness observes of a world for the recovery and retention oracles (docs/recovery.md):
the registry's rows and its process's memory when the world stops (DEL-16), and the requester
compactions it schedules (DEL-7)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from actors import addresses
from actors.messages import Compact
from actors.store.durable import RunStore
from sim.kernel import Kernel
from sim.world.draws import receipts as world_receipts


def emit_final_state(kernel: Kernel, store: RunStore,
                     memory: Callable[[], dict[str, Any]] | None) -> None:
    """The registry's rows as an operator would read them when the world stops (with how much
    task and result text each keeps, and its claim and evidence columns), and what the registry
    process holds in memory, dumped as an observer would."""
    sizes = store.payload_sizes()
    kernel.emit(addresses.HARNESS, "world.rows", {"rows": [
        {"run_id": r.run_id, "delivery_status": str(r.delivery_status),
         "cleaned_up": r.cleaned_up_at_ms is not None, "task_chars": sizes[r.run_id][0],
         "result_chars": sizes[r.run_id][1], "suspended_at": r.suspended_at_ms,
         "expired_at": r.expired_at_ms, "archived_at": r.archived_at_ms,
         **world_receipts.row_columns(r)}
        for r in store.each_run()]})
    if memory is not None:
        kernel.emit(addresses.HARNESS, "world.memory", {"runs": memory()})


def compact_at(kernel: Kernel, at_ms: int, session_key: str, label: str) -> None:
    """``session_key``'s requester session compacts its transcript at ``at_ms`` (not session
    control: the session's own context, so no caller is asked)."""
    kernel.at(at_ms, f"compact {label}", functools.partial(
        kernel.send, addresses.TIMELINE, addresses.requester(session_key), Compact()))
