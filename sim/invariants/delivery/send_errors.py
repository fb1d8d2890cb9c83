"""DEL-10 invariants: what the gateway saw after it failed a send, judged by the error chain.

Read from the trace alone: the gateway's log of each completion it was asked to send
(``gateway.send``, stamped at send time), its refusals (``fault`` records of the send kinds, each
with the error chain it failed with), what reached the requester (``requester.accept`` and
``requester.duplicate``), the delivery process's (re)starts (``delivery.start``), the spawn
(``required``), the child's end, ``world.heal`` and ``world.end``. The chain's class is restated
from reference/openclaw-delivery.md §c16 in ``sim/invariants/observations.py``; nothing is
imported from the model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.delivery.chunks import partial_sends
from sim.invariants.delivery.redrive import generation
from sim.invariants.index import of_kinds
from sim.invariants.observations import chain_class as chain_class
from sim.invariants.observations import is_closed_turn as is_closed_turn
from sim.invariants.observations import is_wake, key_runs
from sim.invariants.private.completion import releases
from sim.invariants.yields.seen import batches
from sim.invariants.yields.yield_batches import may_close_deferred
from sim.trace import Record

SEND_FAULTS = ("send-transient", "send-permanent", "send-partial", "send-other")
# After the heal a retryable completion must reach its requester within one capped registry
# backoff (300 s + 20 % jitter), an unanswered send (120 s), a delayed message (60 s) and the
# transport waits, rounded up; unless its 30-minute expiry comes first.
RETRY_BOUND_MS = 10 * 60_000
COMPLETION_EXPIRY_MS = 30 * 60_000

def _refusals(trace: Sequence[Record]) -> Iterator[tuple[Record, str]]:
    for r in of_kinds(trace, ("fault",)):
        if r.kind == "fault" and r.data["kind"] in SEND_FAULTS:
            yield r, chain_class(r.data["error"])


def terminal_not_resent(trace: Sequence[Record]) -> list[Violation]:
    """After a permanent refusal, or one whose chain shows the send already reached the
    platform, the gateway never sees that completion again from the same delivery process: no
    send of the run under the refused key's delivery generation or an older one. The refusal is
    final for the generation it refused; a newer generation (``…:g<n>``: an operator's
    redrive, or a correction after the run counted as delivered, DEL-12) is a new delivery,
    judged by ``redrive-from-retained`` and ``given-up-waits-for-operator``."""
    violations = []
    closed: dict[str, tuple[Record, str]] = {}  # run -> the terminal refusal
    # When a redrive or a correction last reopened each run: one in the very instant of the
    # refusal may reach the delivery actor first (seeds 15697, 17450).
    reopened: dict[str, int] = {}
    for r in of_kinds(trace, ("delivery.start", "world.operator", "child.correction",
                              "gateway.send", "fault")):
        if r.kind == "delivery.start":
            closed.clear()  # a restarted process may not have recorded the refusal
            continue
        if (r.kind == "world.operator" and r.data["action"] == "redrive") or \
                r.kind == "child.correction":
            run_id = r.data["run_id"] or ""
            reopened[run_id] = r.t_ms
            if r.kind == "world.operator" or (run_id in closed
                                              and closed[run_id][0].t_ms == r.t_ms):
                closed.pop(run_id, None)
            continue
        if r.kind == "gateway.send" and r.data["run_id"] in closed:
            run_id = r.data["run_id"]
            refusal, klass = closed[run_id]
            if generation(r.data["key"]) > generation(refusal.data["key"]):
                # A newer delivery generation (a correction after the run was delivered, an
                # operator's redrive): a new delivery, not a resend of the refused one. Whether
                # it may go out is given-up-waits-for-operator's to judge (DEL-16).
                continue
            what = ("already reached the platform" if klass == "sent"
                    else "was refused permanently")
            violations.append(Violation(
                "terminal-not-resent", "DEL-10",
                f"{run_id} was sent again after its send {what} "
                f"({refusal.data['error']['message']!r})", (refusal.seq, r.seq)))
            del closed[run_id]
        if r.kind == "fault" and r.data["kind"] in SEND_FAULTS:
            klass = chain_class(r.data["error"])
            if klass in ("sent", "permanent") and reopened.get(r.data["run_id"]) != r.t_ms:
                closed[r.data["run_id"]] = (r, klass)
    return violations


def retryable_keeps_trying(trace: Sequence[Record]) -> list[Violation]:
    """A required completion refused only with retryable errors (transient or unclassified) is
    not given up: once faults heal it reaches its requester, unless its expiry comes first."""
    refused: dict[str, list[tuple[Record, str]]] = {}
    batched: set[str] = set()  # members of a batch whose wake was refused: the batch's fate
    for r, klass in _refusals(trace):
        refused.setdefault(r.data["run_id"], []).append((r, klass))
        if is_wake(str(r.data.get("key", ""))):
            batched.update(key_runs(r.data["key"]))  # the wake oracles judge it (YLD-2, -3)
    required: set[str] = set()
    ended: dict[str, Record] = {}
    received: set[str] = set()
    heal_ms = 0
    end: Record | None = None
    # Each session's yields, and the members of those its user reset or deleted afterwards: a
    # yielded batch owns its members (YLD-2), and a batch whose requester was reset or deleted
    # closes without a wake (``requester_abandoned``, "requester session unavailable"), each
    # member's result kept for a redrive and nothing reaching the new conversation
    # (docs/yield.md "Reset and delete", reference §c9; seeds 65647, 75607). The wake oracles
    # judge the batch.
    yields: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for batch in batches(trace):
        yields.setdefault(batch.session, []).append((batch.yielded.seq, batch.members))
    # A yielded batch whose owned descendants stayed unsettled, none running, through ten
    # counted deferrals may close without a wake ("requester settle wake deferred too many
    # times", reference §c9; seed 59432): its members are the batch's, the wake oracles judge it.
    owned = {run_id for batch in batches(trace) if may_close_deferred(trace, batch)
             for run_id in batch.members}
    abandoned: set[str] = set()
    for r in of_kinds(trace, ("spawn", "child.end", "requester.accept", "requester.duplicate",
                              "world.heal", "world.end", "world.lifecycle")):
        if r.kind == "world.lifecycle" and r.data.get("event") in ("reset", "delete"):
            for yielded_at, members in yields.get(r.data["session"], ()):
                if yielded_at < r.seq:
                    abandoned.update(members)
        elif r.kind == "spawn" and r.data["required"]:
            required.add(r.data["run_id"])
        elif r.kind == "child.end":
            ended[r.data["run_id"]] = r
        elif r.kind in ("requester.accept", "requester.duplicate"):
            received.add(r.data["run_id"])
            if is_wake(r.data.get("key", "")):
                # A yield batch's wake carries its members' results (YLD-2): they reached it.
                received.update(key_runs(r.data["key"]))
        elif r.kind == "world.heal":
            heal_ms = r.t_ms
        elif r.kind == "world.end":
            end = r
    if end is None:
        return []
    violations = []
    # A chunked send that broke part-way is terminal (DEL-11).
    partial = {fault.data["run_id"] for fault in partial_sends(trace).values()}
    private = releases(trace)
    for run_id, refusals in refused.items():
        child_end = ended.get(run_id)
        if run_id not in required or run_id in received or child_end is None \
                or run_id in batched or run_id in abandoned or run_id in owned:
            continue
        if run_id in private and private[run_id].reset_at is not None:
            continue  # a private result whose requester was reset may be closed (PRV-3)
        if run_id in partial:
            continue
        if any(klass in ("sent", "permanent") for _, klass in refusals):
            continue
        due = max(heal_ms, refusals[-1][0].t_ms) + RETRY_BOUND_MS
        if child_end.t_ms + COMPLETION_EXPIRY_MS < due:
            continue  # the expiry may rightly come first
        if end.data["reason"] != "quiescent" and end.t_ms < due:
            continue  # the world was cut off before the retry was due

        last = refusals[-1][0]
        violations.append(Violation(
            "retryable-keeps-trying", "DEL-10",
            f"{run_id} was refused only with retryable errors (last: "
            f"{last.data['error']['message']!r}) and never reached its requester",
            (child_end.seq, last.seq, end.seq)))
    return violations


INVARIANTS = (
    Invariant("terminal-not-resent", "DEL-10", "safety",
              "A completion refused permanently, or whose send already reached the platform "
              "before the error, is never sent again by the same delivery process in that "
              "delivery generation (a newer one is a new delivery).",
              terminal_not_resent),
    Invariant("retryable-keeps-trying", "DEL-10", "liveness",
              "A required completion refused only with transient or unclassified errors reaches "
              "its requester once faults heal, unless its expiry comes first.",
              retryable_keeps_trying),
)
