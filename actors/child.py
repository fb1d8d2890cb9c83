"""A child run's Trio shell: it works for a while, then records its outcome as the producer.

Cancelling the run's scope (owned by the requester's nursery) is how a child is aborted; an aborted
child ends with error "subagent run terminated" (reference §c1).
"""

from __future__ import annotations

import trio

from actors.messages import ChildEnded, ChildSpec
from actors.runtime import Port
from actors.store import RunStore

DELIVERY = "delivery"
KILLED_ERROR = "subagent run terminated"


async def run_child(
    port: Port, spec: ChildSpec, run_id: str, store: RunStore, scope: trio.CancelScope
) -> None:
    port.emit("child.start", {"run_id": run_id, "child": spec.child_id})
    status, error, text = spec.outcome, spec.error, spec.reply
    with scope:
        await port.sleep(spec.run_ms)
    if scope.cancelled_caught:
        status, error, text = "error", KILLED_ERROR, None
        port.emit("child.abort", {"run_id": run_id})
    if status == "error":
        # A failed terminal run reports its failure without replaying captured reply text (DEL-14).
        text = None
    store.record_end(run_id, port.now_ms, status, error, text)
    port.emit("child.end", {"run_id": run_id, "status": status, "error": error, "reply": text})
    port.send(DELIVERY, ChildEnded(run_id))
