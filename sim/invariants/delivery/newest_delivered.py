"""DEL-12 from the store's side: a run the registry calls delivered had its newest answer reach
its requester.

``newest-receipt-owns`` judges the receipts that reached a requester: only a newer end time
replaces a reply, and the reply is the newest receipt *that arrived*. A registry that records a
run delivered after its first receipt and then never sends the producer's correction passes it:
nothing newer arrived. What is promised is that the receipt with the newest producer end time
owns the reply; so when the world stops and the store's row says ``delivered``, the requester
(or, once a nested requester was deleted, its fallback: DEL-4) took the newest receipt the
producer made.

Read from what the producer produced (``child.end`` at its end time, each ``child.correction``
with its own), what the requesters took (``requester.accept`` and ``requester.duplicate``: run,
key and end time) and the registry's rows when the world stopped (``world.rows``). Runs whose
answer went inside a yield batch's or wave's wake (the wake carries the members' results:
``wake-message`` judges them) are not judged, unless the producer made a newer receipt after the
wake was last taken (a new generation of its own must carry that one, DEL-12). Private runs
(their own oracles) and an exact ANNOUNCE_SKIP, suppressed on purpose, are not this oracle's;
nor is a world stopped before it went quiet.
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.receipts import _final_rows, produced
from sim.invariants.index import of_kinds
from sim.invariants.observations import is_wake, key_runs
from sim.invariants.private.completion import private_runs
from sim.trace import Record


def delivered_is_newest(trace: Sequence[Record]) -> list[Violation]:
    if not trace or trace[-1].kind != "world.end" or trace[-1].data["reason"] != "quiescent":
        return []
    newest: dict[str, Record] = {}
    for (run_id, ended), receipt in produced(trace).items():
        if run_id not in newest or ended > _ended(newest[run_id]):
            newest[run_id] = receipt
    taken: dict[str, set[int]] = {}  # run -> the end times of its receipts some requester took
    # Runs a batch's or wave's wake named, taken by its requester: when it was last taken. A
    # receipt the producer made after that no wake carried: once the run is delivered (a wake
    # released it, YLD-2), a newer receipt is a new generation, its own delivery (DEL-12).
    by_wake: dict[str, int] = {}
    for r in of_kinds(trace, ("requester.accept", "requester.duplicate")):
        if r.kind in ("requester.accept", "requester.duplicate"):
            if is_wake(r.data["key"]):
                for member in key_runs(r.data["key"]):
                    by_wake[member] = r.t_ms
            else:
                taken.setdefault(r.data["run_id"], set()).add(r.data["ended_at"])
    private = private_runs(trace)
    violations = []
    for row in _final_rows(trace):
        run_id = row["run_id"]
        made = newest.get(run_id)
        if row["delivery_status"] != "delivered" or made is None \
                or run_id in private or row.get("evidence") == "send-suppressed":
            continue
        ended = _ended(made)
        if ended in taken.get(run_id, set()) or ended <= by_wake.get(run_id, -1):
            continue
        got = sorted(taken.get(run_id, set()))
        violations.append(Violation(
            "delivered-is-newest", "DEL-12",
            f"the registry's row says {run_id} was delivered, but its newest answer (ending at "
            f"{ended} ms) never reached its requester"
            + (f" (it took the receipts ending at {', '.join(map(str, got))} ms)" if got else ""),
            (made.seq,)))
    return violations


def _ended(made: Record) -> int:
    return int(made.data["ended_at"]) if made.kind == "child.correction" else made.t_ms


INVARIANTS = (
    Invariant("delivered-is-newest", "DEL-12", "safety",
              "When the world stops, a run the registry records delivered had its newest answer "
              "(the producer's newest end time) reach its requester.", delivered_is_newest),
)
