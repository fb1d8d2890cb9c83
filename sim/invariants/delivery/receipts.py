"""DEL-12, DEL-13 and DEL-15 (re-runs) oracles: completion receipts, recovery claims and evidence.

What they read:

- what each producer produced: its end (``child.end``, stamped at its end time) and each later
  correction (``child.correction``, with its own end time and result): the receipts of a run;
- what each requester's transcript took (``requester.accept``: the receipt's run, key, end time,
  and the transcript entry it replaced, if any) or was handed and kept out
  (``requester.duplicate``);
- what the gateway was handed (``gateway.send``), the delivery process's crashes and restarts
  (``crash``, ``delivery.start``);
- the registry's rows when the world stopped (``world.rows``: status, recovery claim and saved
  evidence of each run).

Never the model's own view of which receipt is newer, nor why it saved its evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import last_of_kind, of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash, is_wake, key_runs
from sim.trace import Record

# The claim phases that are still open (reference §a restartRecovery): cleared ones are
# accepted (delivered) and abandoned (given up).
OPEN_CLAIMS = ("reserved", "attempted", "consumed")


def produced(trace: Sequence[Record]) -> dict[tuple[str, int], Record]:
    """Each receipt a producer made, by (run id, its end time): its end, then its corrections."""
    made: dict[tuple[str, int], Record] = {}
    for r in of_kinds(trace, ("child.end", "child.correction")):
        if r.kind == "child.end":
            made[(r.data["run_id"], r.t_ms)] = r
        elif r.kind == "child.correction":
            # An equal end time keeps the first receipt made (DEL-12).
            made.setdefault((r.data["run_id"], r.data["ended_at"]), r)
    return made


def receipt_result(made: dict[tuple[str, int], Record], accept: Record) -> Record | None:
    """The producer's record of the receipt ``accept`` carries (its result is what the block
    must show), or None when no such receipt was produced."""
    return made.get((accept.data["run_id"], accept.data["ended_at"]))


@attrs.define
class _Reply:
    owner: Record  # the transcript entry that owns the run's reply now
    newest: Record  # the receipt with the newest end time that reached the session


def newest_receipt_owns(trace: Sequence[Record]) -> list[Violation]:
    """DEL-12: each receipt the requester took is one its run produced; one replaces the run's
    reply only with a newer end time (an equal one keeps the first, an older one never wins); and
    when the world stops, the reply is the newest receipt that reached the requester."""
    made = produced(trace)
    replies: dict[tuple[str, str], _Reply] = {}
    violations: list[Violation] = []

    def fail(message: str, *records: Record) -> None:
        violations.append(Violation("newest-receipt-owns", "DEL-12", message,
                                    tuple(r.seq for r in records)))

    for r in of_kinds(trace, ("requester.accept", "requester.duplicate")):
        if r.kind not in ("requester.accept", "requester.duplicate") or is_wake(r.data["key"]):
            continue  # a batch wake's contents: wake-message judges them
        run_id, ended = r.data["run_id"], r.data["ended_at"]
        if (run_id, ended) not in made:
            fail(f"{r.actor} was handed a receipt of {run_id} ending at {ended} ms, which that "
                 "run never produced", r)
            continue
        reply = replies.get((r.actor, run_id))
        if r.kind == "requester.accept":
            # Equal keeps the first (DEL-12): a second receipt of the reply with the same end
            # time (another key: a redrive's generation) never replaces it (at-most-once
            # counts it a second delivery too).
            if reply is not None and reply.owner.data["ended_at"] >= ended:
                equal = reply.owner.data["ended_at"] == ended
                fail(f"{r.actor} let {run_id}'s receipt ending at {ended} ms under "
                     f"{r.data['key']} replace its reply under {reply.owner.data['key']}, "
                     f"which ended at {reply.owner.data['ended_at']} ms ("
                     + ("an equal end time keeps the first accepted" if equal else
                        "only a newer end time owns the reply") + ")", reply.owner, r)
            if reply is None:
                replies[(r.actor, run_id)] = _Reply(r, r)
            else:
                reply.owner = r
        if reply is not None and ended > reply.newest.data["ended_at"]:
            reply.newest = r
    for (actor, run_id), reply in replies.items():
        if reply.newest.data["ended_at"] > reply.owner.data["ended_at"]:
            fail(f"{actor}'s reply for {run_id} is its receipt ending at "
                 f"{reply.owner.data['ended_at']} ms, though the newer one ending at "
                 f"{reply.newest.data['ended_at']} ms reached it", reply.owner, reply.newest)
    return violations


def rerun_keeps_answer(trace: Sequence[Record]) -> list[Violation]:
    """DEL-15: a receipt only ever replaces a reply of its own run: a later run (a new turn) of
    the same child session never replaces an earlier run's answer in the requester's
    transcript."""
    violations = []
    for r in of_kinds(trace, ("requester.accept",)):
        if r.kind != "requester.accept" or r.data["replaces"] is None:
            continue
        replaced = r.data["replaces"]
        if replaced["run_id"] != r.data["run_id"]:
            violations.append(Violation(
                "rerun-keeps-answer", "DEL-15",
                f"{r.actor} replaced {replaced['run_id']}'s answer with {r.data['run_id']}'s "
                f"(receipt key {r.data['key']}): a later run of a child session took the "
                "earlier run's place", (r.seq,)))
    return violations


def evidence_before_claim(trace: Sequence[Record]) -> list[Violation]:
    """DEL-13: a restart never sends again a receipt its requester already took before the
    restart (its confirmed evidence, or the requester's checkpoint, must settle it) unless that
    requester's session was deleted since (DEL-4: it goes to the fallback), and the
    registry's rows never show a cleared claim or a delivered status without saved evidence."""
    # (run id, key) -> the requester actor that took it; ... of those, taken before the
    # latest restart. A session deleted since took nothing that still counts: its transcript
    # is gone, and the completion goes again to its fallback (DEL-4, docs/nesting.md).
    taken: dict[tuple[str, str], str] = {}
    settled: dict[tuple[str, str], str] = {}
    crashed = False
    violations = []
    for r in of_kinds(trace, ("requester.accept", "requester.duplicate", "world.delete-session",
                              "crash", "delivery.start", "gateway.send")):
        kind = r.kind
        if kind in ("requester.accept", "requester.duplicate"):
            taken[(r.data["run_id"], r.data["key"])] = r.actor
        elif kind == "world.delete-session":
            gone = f"requester:{r.data['session']}"
            for held in (taken, settled):
                for receipt in [k for k, actor in held.items() if actor == gone]:
                    del held[receipt]
        elif is_delivery_crash(r):
            crashed = True
        elif kind == "delivery.start" and crashed:
            settled = dict(taken)
        elif kind == "gateway.send" and (r.data["run_id"], r.data["key"]) in settled \
                and not is_wake(r.data["key"]):  # a wake replays its key (YLD-3, wake-budgets)
            violations.append(Violation(
                "evidence-before-claim", "DEL-13",
                f"{r.data['run_id']} was sent again under {r.data['key']} after a restart, "
                "though its requester had taken that receipt before the restart",
                (r.seq,)))
            del settled[(r.data["run_id"], r.data["key"])]
    rows_record = _final_rows_seq(trace)  # what these findings cite: the rows they read
    for row in _final_rows(trace):
        run_id, claim, evidence = row["run_id"], row.get("claim"), row.get("evidence")
        if claim == "accepted" and evidence is None:
            violations.append(Violation(
                "evidence-before-claim", "DEL-13",
                f"{run_id}'s recovery claim was cleared as accepted with no delivery evidence "
                "saved", rows_record))
        if row["delivery_status"] == "delivered" and (evidence is None or claim in OPEN_CLAIMS):
            violations.append(Violation(
                "evidence-before-claim", "DEL-13",
                f"the registry's row says {run_id} was delivered with evidence {evidence} and "
                f"its claim {claim}: delivered needs saved evidence and a cleared claim",
                rows_record))
    return violations


def evidence_is_own(trace: Sequence[Record]) -> list[Violation]:
    """DEL-13, DEL-15: saved evidence names this run's own receipt: a reply sent or a silent
    checkpoint under a key its own requester took for this very run (never another run's, even
    of the same child session); a suppressed send only for an exact ANNOUNCE_SKIP reply that was
    never handed to the gateway. Once the asked requester's session was deleted, a receipt its
    fallback took counts as the run's own (where it may land is requester-fallback's, DEL-4).
    The kinds stay distinct: a silent checkpoint only for a receipt taken before a restart of
    the delivery process (only a restart looks for the requester's checkpoint)."""
    asked = asked_runs(trace)
    taken: set[tuple[str, str, str]] = set()  # (actor, run id, key)
    deleted: set[str] = set()  # requester actors whose session was deleted (DEL-4 fallback)
    skipped: set[str] = set()
    sent: set[str] = set()
    # (run id, key) taken before a restart of the delivery process: only a restart finds a
    # requester's checkpoint, so only such a receipt can be a silent checkpoint's evidence.
    first_taken: dict[tuple[str, str], int] = {}
    restarted: set[tuple[str, str]] = set()
    for r in of_kinds(trace, ("delivery.start", "world.delete-session", "requester.accept",
                              "requester.duplicate", "child.end", "gateway.send")):
        if r.kind == "delivery.start":
            restarted.update(first_taken)
        elif r.kind == "world.delete-session":
            deleted.add(f"requester:{r.data['session']}")
        elif r.kind in ("requester.accept", "requester.duplicate"):
            run = asked.get(r.data["run_id"])
            reader = r.actor if run is None or run.actor not in deleted else run.actor
            taken.add((reader, r.data["run_id"], r.data["key"]))
            first_taken.setdefault((r.data["run_id"], r.data["key"]), r.seq)
            for member in key_runs(r.data["key"]):  # a yield batch's wake carries its members
                taken.add((r.actor, member, r.data["key"]))
        elif r.kind == "child.end" and (r.data["result"] or "").strip() == "ANNOUNCE_SKIP":
            skipped.add(r.data["run_id"])
        elif r.kind == "gateway.send":
            sent.add(r.data["run_id"])
    violations = []
    for row in _final_rows(trace):
        run_id, evidence, key = row["run_id"], row.get("evidence"), row.get("evidence_key")
        run = asked.get(run_id)
        if evidence is None or run is None:
            continue
        if evidence == "send-suppressed":
            if run_id not in skipped or run_id in sent:
                violations.append(Violation(
                    "evidence-is-own", "DEL-13",
                    f"{run_id}'s evidence is a suppressed send, but its reply was not "
                    "ANNOUNCE_SKIP or it was handed to the gateway", (run.request.seq,)))
        elif (run.actor, run_id, key) not in taken:
            violations.append(Violation(
                "evidence-is-own", "DEL-13",
                f"{run_id}'s evidence ({evidence}) names receipt {key}, which its requester "
                f"{run.actor} never took for {run_id}", (run.request.seq,)))
        elif evidence == "silent-checkpoint" and (run_id, key) not in restarted:
            violations.append(Violation(
                "evidence-is-own", "DEL-13",
                f"{run_id}'s evidence is a silent checkpoint of {key}, but the delivery "
                "process never restarted after its requester took it: only a restart finds a "
                "checkpoint (a reply the process saw acknowledged is a sent reply)",
                (run.request.seq,)))
    return violations


def _final_rows_seq(trace: Sequence[Record]) -> tuple[int, ...]:
    """The seq of the record ``_final_rows`` reads, for a finding about a row to cite."""
    rows = last_of_kind(trace, "world.rows")
    return (rows.seq,) if rows is not None else ()


def _final_rows(trace: Sequence[Record]) -> list[dict[str, Any]]:
    """The registry's rows when the world stopped (run_id, delivery_status, claim, evidence,
    evidence_key)."""
    found = last_of_kind(trace, "world.rows")
    rows: list[dict[str, Any]] = found.data["rows"] if found is not None else []
    return rows


INVARIANTS = (
    Invariant("newest-receipt-owns", "DEL-12", "safety",
              "A run's reply at its requester is owned by the receipt with the newest producer "
              "end time; equal end times keep the first accepted; only a newer one supersedes.",
              newest_receipt_owns),
    Invariant("rerun-keeps-answer", "DEL-15", "safety",
              "A later run of a child session never replaces an earlier run's answer.",
              rerun_keeps_answer),
    Invariant("evidence-before-claim", "DEL-13", "safety",
              "Delivery evidence is saved before a recovery claim is cleared: a restart never "
              "re-sends a receipt its requester already took.", evidence_before_claim),
    Invariant("evidence-is-own", "DEL-13", "safety",
              "Saved delivery evidence names this run's own receipt, taken by its own "
              "requester; another run's terminal state never proves it.", evidence_is_own),
)
