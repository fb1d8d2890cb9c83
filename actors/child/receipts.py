"""A finished child's later receipts of the same run (DEL-12): the Trio shell's part of the
producer after the run's end.

A drawn or scripted correction (``correction_after_ms``: the answer plus a correction line, a
newer receipt written then) and a scenario's further receipts (``receipts``: each with its own
producer end time and reply, which may be older than, equal to or newer than the one the
registry holds). The registry (``RunStore.record_correction``) takes a receipt only when it is
newer; the delivery actor hears of each one it took.
"""

from __future__ import annotations

from actors import addresses, events
from actors.child.frozen import cap_frozen_result
from actors.child.store import ChildStore
from actors.messages import ChildEnded, ChildSpec
from actors.runtime import Port


async def later_receipts(port: Port, store: ChildStore, run_id: str, spec: ChildSpec,
                         text: str | None, ended_ms: int,
                         mutants: frozenset[str] = frozenset()) -> None:
    """Write the run's later receipts, each when it is due (an ok run only). The registry
    freezes each one's result capped (reference §c14); the trace keeps the child's text."""
    if spec.correction_after_ms is not None and text is not None \
            and text.strip() not in ("", "NO_REPLY", "ANNOUNCE_SKIP"):
        # The producer corrects its answer later: a newer receipt of the same run.
        await port.sleep(spec.correction_after_ms)
        port.probe("child.corrected")
        corrected = f"{text}\n\nCorrection: {spec.correction}"
        store.record_correction(run_id, port.now_ms, cap_frozen_result(corrected, mutants))
        port.emit(events.ChildCorrected(run_id, port.now_ms, corrected))
        port.send(addresses.DELIVERY, ChildEnded(run_id))
    for receipt in spec.receipts:
        due = ended_ms + receipt.after_ms
        if due > port.now_ms:
            await port.sleep(due - port.now_ms)
        port.emit(events.ChildCorrected(run_id, receipt.ended_at_ms, receipt.text))
        if store.record_correction(run_id, receipt.ended_at_ms,
                                   cap_frozen_result(receipt.text, mutants)):
            port.send(addresses.DELIVERY, ChildEnded(run_id))
