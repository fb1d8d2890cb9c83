"""DEL-16 oracles: an operator's redrive and dismissal, and a correction after a give-up.

Read from what was asked and what an outsider sees: each operator request as the harness sent it
(``world.operator``: action, child, run), the producer's receipts (``child.end``,
``child.correction``: the payload the store retains for the run, its newest receipt, DEL-12),
what the gateway was handed (``gateway.send``: the run, the call's key and the producer end time
it carries), what the requester's transcript took (``requester.accept``) and the registry's own
records of the run (``delivery.give_up``, ``delivery.delivered``, ``delivery.reopen``,
``delivery.dismiss``). Nothing here reads what the model decided about the request itself.

The rules restated (reference §b, docs/recovery.md): a redrive of a run the registry had given up
is sent as a new generation (a key never sent before, its ``:g<n>`` above every earlier one)
carrying the newest receipt the producer wrote (text included: a correction after the give-up
rides along); it never makes the requester take the same receipt twice; a run the registry
recorded delivered is never sent again on an operator's say-so (only a newer receipt reopens
it); after a give-up nothing is sent but on an operator's redrive, and after a dismissal (its
payload released) nothing ever.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.frozen import frozen
from sim.invariants.given_up import GivenUp
from sim.invariants.index import of_kinds
from sim.invariants.observations import (
    DATA_CLOSE,
    is_delivery_crash,
    is_wake,
    key_runs,
    rejection_class,
    shown_block,
)
from sim.invariants.private.completion import releases
from sim.trace import Record

_GENERATION = re.compile(r":g(\d+)$")


@functools.lru_cache(maxsize=4096)  # asked at every hand-off of a key, by two oracles
def generation(key: str) -> int:
    """A completion key's delivery generation: ``…:g<n>``, else the first."""
    found = _GENERATION.search(key)
    return 1 if found is None else int(found.group(1))


def _shown(text: str) -> str | None:
    """The result a requester's block shows (un-escaped), or None without a result block."""
    block = shown_block(text)
    return None if block is None else block[2]


def redrive_from_retained(trace: Sequence[Record]) -> list[Violation]:
    """An operator's redrive of a given-up run goes out as a newer generation carrying the
    run's newest retained receipt; it never hands the requester a receipt twice; a delivered
    run is never sent again for a redrive (only a newer receipt may reopen it)."""
    newest: dict[str, tuple[int, str | None]] = {}  # run -> (end time, result) retained
    keys: dict[str, set[str]] = {}  # run -> keys handed to the gateway
    top: dict[str, int] = {}  # run -> highest generation handed over
    last_end: dict[str, int] = {}  # run -> the producer end time of its last send
    gone = GivenUp(releases(trace))  # given up or delivered, as an outsider tells
    released: set[str] = set()  # runs an operator dismissed once given up
    awaiting: dict[str, Record] = {}  # run -> a redrive of it given up, not yet sent
    # run -> a redrive of it delivered, the end time and the key of its latest send then
    barred: dict[str, tuple[Record, int, str]] = {}
    redriven: dict[tuple[str, str], tuple[Record, str | None]] = {}  # (run, key) -> request
    # (reader, run, end time) -> that reader's first take: a fallback reader (DEL-4) never had
    # what the deleted session took before it was deleted.
    taken: dict[tuple[str, str, int], Record] = {}
    violations: list[Violation] = []

    def fail(what: str, *records: Record) -> None:
        violations.append(Violation("redrive-from-retained", "DEL-16", what,
                                    tuple(r.seq for r in records)))

    for r in of_kinds(trace, (*GivenUp.KINDS, "child.end", "child.correction",
                              "world.operator", "gateway.send", "requester.accept")):
        kind = r.kind
        gone.see(r)
        # Each receipt's result as the store keeps it: frozen (over 102,400 bytes, a prefix
        # plus a notice, reference §c14).
        if kind == "child.end":
            newest[r.data["run_id"]] = (r.t_ms, frozen(r.data["result"]))
        elif kind == "child.correction":
            newest[r.data["run_id"]] = (r.data["ended_at"], frozen(r.data["result"]))
        elif kind == "world.operator" and r.data["action"] == "dismiss" and r.data["run_id"] \
                and gone.why(r.data["run_id"], r.t_ms, asked=True):
            released.add(r.data["run_id"])
        elif kind == "world.operator" and r.data["action"] == "redrive" and r.data["run_id"]:
            run_id = r.data["run_id"]
            if run_id in released:
                pass
            elif gone.why(run_id, r.t_ms, asked=True):
                awaiting[run_id] = r
            elif gone.delivered(run_id) and run_id in last_end:
                barred[run_id] = (r, last_end[run_id], gone.latest[run_id].data["key"])
        elif kind == "gateway.send":
            run_id, key, ended = r.data["run_id"], r.data["key"], r.data["ended_at"]
            bar = barred.get(run_id)
            # A try of the key that was out when the request came is the registry's own (its
            # acknowledgement may be slow: the redrive found it in flight, seed 19975);
            # handoff-stays-delivered judges those. Only a new generation is the redrive's.
            if bar is not None and ended <= bar[1] and key != bar[2]:
                fail(f"{run_id} was delivered when an operator asked to redrive it (request "
                     f"{bar[0].data['request']}), yet it was sent again under {key} with no "
                     "newer receipt", bar[0], r)
                barred.pop(run_id)
            request = awaiting.pop(run_id, None)
            if request is not None:
                before = top.get(run_id, 0)
                if key in keys.get(run_id, ()) or generation(key) <= before:
                    fail(f"{run_id}'s redrive (request {request.data['request']}) went out "
                         f"under {key}, not a newer generation than the {before} sent before "
                         "(a redrive is no retry of the send that gave up)", request, r)
                want = newest.get(run_id)
                if want is not None and ended != want[0]:
                    fail(f"{run_id}'s redrive carries the receipt ended at {ended} ms, not the "
                         f"newest one its store retained (ended at {want[0]} ms)", request, r)
                redriven[(run_id, key)] = (request, None if want is None else want[1])
            if not is_wake(key) and (run_id not in gone.latest
                                     or gone.latest[run_id].data["key"] != key):
                gone.sent(r)  # a new generation: whatever was known before, it sends again
            keys.setdefault(run_id, set()).add(key)
            top[run_id] = max(top.get(run_id, 0), generation(key))
            last_end[run_id] = ended
        elif kind == "requester.accept":
            run_id, key, ended = r.data["run_id"], r.data["key"], r.data["ended_at"]
            first = taken.setdefault((r.actor, run_id, ended), r)
            asked = redriven.get((run_id, key))
            if asked is None:
                continue
            if first is not r:
                fail(f"{r.actor} took {run_id}'s receipt ended at {ended} ms a second time, "
                     f"from its redrive under {key} (first under {first.data['key']})",
                     asked[0], first, r)
            shown, result = _shown(r.data["text"]), asked[1]
            # The block shows the payload (followed by the run's children's findings, DEL-6),
            # or its head when cut at the cap (a truncation marker follows the block).
            cut = DATA_CLOSE + "\n[truncated: " in r.data["text"]
            if shown is not None and result and result.strip() not in ("", "NO_REPLY") and not (
                    shown == result or shown.startswith(result + "\n\n")
                    or (cut and result.startswith(shown))):
                fail(f"{run_id}'s redrive showed {r.actor} a result that is not the payload "
                     f"its store retained ({len(shown)} characters against {len(result)})",
                     asked[0], r)
    return violations


def given_up_waits_for_operator(trace: Sequence[Record]) -> list[Violation]:
    """Once a run's current generation was given up, as an outsider can tell (:class:`GivenUp`),
    no new generation of it is handed to the gateway but after an operator asked to redrive it
    (a newer receipt only updates the retained payload); once an operator dismissed a given-up
    run (and the registry's row shows it discarded when the world stops), nothing of it after
    that request ever. A transport try of the same key after the expiry belongs to an attempt
    started before it (retry-timing judges those). Never the registry's own give-up or
    dismissal records."""
    gone = GivenUp(releases(trace))
    redriven: dict[str, int] = {}  # run -> when an operator last asked to redrive it
    dismissed: dict[str, Record] = {}  # run -> an operator's dismissal of it once given up
    # Runs whose only hand-off so far was a batch wake the gateway refused for good (reference
    # §c11: permanent, or part of it already reached the platform) and nobody took: the batch
    # is closed, and no own key of theirs was ever sent. A later generation of such a run
    # (``:g<n>``, n >= 2) is a new hand-off that only an operator's redrive may start.
    wake_refused: dict[str, Record] = {}
    own_sent: set[str] = set()
    # Members a batch wake's take reached: a later refusal of a replay of that key (a restart
    # replays it) closes nothing the requester has not had (seeds 12151, 12206).
    wake_taken: set[str] = set()
    down = False
    sends: list[Record] = []
    violations: list[Violation] = []
    for r in of_kinds(trace, (*GivenUp.KINDS, "gateway.send", "world.rows")):
        kind = r.kind
        gone.see(r)
        if kind == "delivery.start":
            down = False
        elif is_delivery_crash(r):
            down = True
            wake_refused.clear()  # a refusal only the dead process heard
        elif rejection_class(r) in ("permanent", "sent") and not down and \
                is_wake(r.data.get("key") or ""):
            for member in key_runs(r.data["key"]):
                if member not in own_sent and member not in wake_taken:
                    wake_refused.setdefault(member, r)
        elif kind == "requester.accept" and is_wake(r.data["key"]):
            for member in key_runs(r.data["key"]):
                wake_refused.pop(member, None)
                wake_taken.add(member)
        if kind == "world.operator" and r.data["run_id"]:
            if r.data["action"] == "redrive":
                redriven[r.data["run_id"]] = r.t_ms
            elif r.data["action"] == "dismiss" and gone.why(r.data["run_id"], r.t_ms,
                                                              asked=True):
                dismissed[r.data["run_id"]] = r
        elif kind == "gateway.send" and not is_wake(r.data["key"]):
            run_id = r.data["run_id"]
            sends.append(r)
            refusal = wake_refused.pop(run_id, None)
            if refusal is not None and generation(r.data["key"]) > 1 and \
                    redriven.get(run_id, -1) < refusal.t_ms:
                violations.append(Violation(
                    "given-up-waits-for-operator", "DEL-16",
                    f"{run_id}'s batch wake {refusal.data['key']} was refused for good at "
                    f"{refusal.t_ms} ms and never taken, yet the run was sent again as a new "
                    f"generation under {r.data['key']} at {r.t_ms} ms with no operator redrive "
                    "asked", (refusal.seq, r.seq)))
            own_sent.add(run_id)
            before = gone.latest.get(run_id)
            if before is not None and before.data["key"] == r.data["key"]:
                continue  # a try (or a replay) of the same generation
            why = gone.why(run_id, r.t_ms)
            if before is not None and why is not None and \
                    redriven.get(run_id, -1) < before.t_ms:
                violations.append(Violation(
                    "given-up-waits-for-operator", "DEL-16",
                    f"{run_id} was given up ({before.data['key']} never taken, {why}), yet it "
                    f"was sent again under {r.data['key']} at {r.t_ms} ms with no operator "
                    "redrive asked", (before.seq, r.seq)))
            gone.sent(r)
        elif kind == "world.rows":
            for row in r.data["rows"]:
                dismissal = dismissed.get(row["run_id"])
                if row["delivery_status"] != "discarded" or dismissal is None:
                    continue
                for send in sends:
                    if send.data["run_id"] == row["run_id"] and send.t_ms > dismissal.t_ms:
                        violations.append(Violation(
                            "given-up-waits-for-operator", "DEL-16",
                            f"{send.data['run_id']} was sent under {send.data['key']} after an "
                            "operator dismissed it and its payload was released",
                            (dismissal.seq, send.seq)))
                        break
    return violations


def redrive_only_suspended(trace: Sequence[Record]) -> list[Violation]:
    """An operator's redrive is taken only of a suspended completion: a run that ended ``ok``
    and whose delivery gave up. A failed one (its run ended otherwise: its give-up is
    ``failed``, never ``suspended``) or one still pending (in flight, or paused in its
    backoff) is refused, ``completion delivery is not blocked`` (the seed is silent, so OpenClaw
    2026.9.6's ``retrySubagentCompletionDelivery`` decides; docs/fidelity.md): after such a
    request no newer generation of the run is handed to the gateway until another request or
    a correction of it (a correction reopens a delivered run by itself, DEL-12).

    Read from the run's first ``child.end`` (its status), the operator's requests
    (``world.operator``) and what the gateway was handed and refused (:class:`GivenUp`).
    Pending is judged only where an outsider can tell it: the run's latest key was sent and
    neither taken nor refused for good, its expiry has not passed, no delivery crash came since
    its send, and the run is no yield batch's (spawned in a requester turn: a batch may close
    and give it up with no send of its own, reference §c9) nor a private one's (PRV-7: its
    window starts at a release). A refusal for good in the request's very instant may reach
    the registry first (the request then finds it suspended): such a request is not judged."""
    gone = GivenUp(releases(trace))
    status: dict[str, str] = {}  # run -> its first end's status
    in_turn: set[str] = set()  # runs spawned inside a requester turn
    top: dict[str, int] = {}  # run -> highest generation handed over so far
    refused: dict[str, tuple[Record, str]] = {}  # run -> a request that must be refused, why
    violations: list[Violation] = []
    for r in of_kinds(trace, (*GivenUp.KINDS, "child.end")):
        kind = r.kind
        if kind not in _READ:
            gone.see(r)  # (a kind only GivenUp reads: its own tests come first)
            continue
        run_id = str(r.data.get("run_id") or "")  # "": a record naming no run
        if kind == "spawn" and r.data.get("turn_run_id"):
            in_turn.add(run_id)
        elif kind == "child.end":
            status.setdefault(run_id, r.data["status"])
        elif kind == "child.correction":
            refused.pop(run_id, None)
        elif kind == "world.operator" and run_id:
            refused.pop(run_id, None)
            why = _not_blocked(gone, status, in_turn, run_id, r.t_ms) \
                if r.data["action"] == "redrive" else None
            if why is not None:
                refused[run_id] = (r, why)
        elif kind in _REFUSALS and run_id in refused \
                and rejection_class(r) in ("permanent", "sent") \
                and refused[run_id][0].t_ms == r.t_ms and refused[run_id][1] == _PENDING:
            refused.pop(run_id)  # refused for good in the request's instant: maybe first
        elif kind == "gateway.send" and not is_wake(r.data["key"]):
            asked = refused.get(run_id)
            # A redrive opens the run's next generation (``:g<n>``, n >= 2, above every one
            # sent): its first generation's sends are its own delivery's, whenever they come.
            if asked is not None and generation(r.data["key"]) > max(top.get(run_id, 0), 1):
                violations.append(Violation(
                    "redrive-only-suspended", "DEL-16",
                    f"an operator asked to redrive {run_id} (request "
                    f"{asked[0].data['request']}) at {asked[0].t_ms} ms while {asked[1]}, which "
                    "is not blocked and must be refused, yet its new generation "
                    f"{r.data['key']} was handed to the gateway at {r.t_ms} ms",
                    (asked[0].seq, r.seq)))
                refused.pop(run_id)
            top[run_id] = max(top.get(run_id, 0), generation(r.data["key"]))
        gone.see(r)
        if kind == "gateway.send" and not is_wake(r.data["key"]) and (
                run_id not in gone.latest or gone.latest[run_id].data["key"] != r.data["key"]):
            gone.sent(r)
    return violations


_REFUSALS = ("fault", "gateway.refused", "requester.gone")  # what may be a refusal
_READ = ("spawn", "child.end", "child.correction", "world.operator", "gateway.send", *_REFUSALS)
_PENDING = "its delivery was still pending (in flight or paused in its backoff)"


def _not_blocked(gone: GivenUp, status: dict[str, str], in_turn: set[str], run_id: str,
                 t_ms: int) -> str | None:
    """Why a redrive of ``run_id`` asked at ``t_ms`` must be refused, as an outsider can tell
    (None: it may be taken, or nobody can tell)."""
    ended = status.get(run_id)
    if ended is not None and ended != "ok":
        return f"its run had ended {ended}, so its delivery could never be suspended"
    send = gone.latest.get(run_id)
    if ended is None or send is None or run_id in in_turn or run_id in gone.private:
        return None
    if run_id in gone.taken or run_id in gone.hidden or run_id in gone.unacked \
            or run_id in gone.refused or run_id in gone.released:
        return None
    if gone.why(run_id, t_ms, asked=True) is not None:
        return None  # past its expiry: given up, suspended
    return _PENDING


INVARIANTS = (
    Invariant("redrive-from-retained", "DEL-16", "safety",
              "An operator's redrive of a given-up run is a newer generation carrying the "
              "newest retained receipt; it never hands a receipt over twice, and a delivered "
              "run is never redriven.", redrive_from_retained),
    Invariant("given-up-waits-for-operator", "DEL-16", "safety",
              "A given-up run is sent again only on an operator's redrive (a correction after "
              "the give-up only updates its retained payload); a dismissed one never.",
              given_up_waits_for_operator),
    Invariant("redrive-only-suspended", "DEL-16", "safety",
              "An operator's redrive takes only a suspended completion (its run ended ok, its "
              "delivery gave up); a failed or still pending one is refused, nothing newer "
              "sent (OpenClaw 2026.9.6).", redrive_only_suspended),
)
