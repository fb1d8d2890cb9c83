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

import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.trace import Record

_GENERATION = re.compile(r":g(\d+)$")
DATA_OPEN = "<prompt-data>\n"
DATA_CLOSE = "\n</prompt-data>"


def generation(key: str) -> int:
    """A completion key's delivery generation: ``…:g<n>``, else the first."""
    found = _GENERATION.search(key)
    return 1 if found is None else int(found.group(1))


def _shown(text: str) -> str | None:
    """The result a requester's block shows (un-escaped), or None without a result block."""
    if DATA_OPEN not in text or DATA_CLOSE not in text:
        return None
    body = text[text.index(DATA_OPEN) + len(DATA_OPEN):text.index(DATA_CLOSE)]
    return body.replace("&lt;", "<").replace("&amp;", "&")


def redrive_from_retained(trace: Sequence[Record]) -> list[Violation]:
    """An operator's redrive of a given-up run goes out as a newer generation carrying the
    run's newest retained receipt; it never hands the requester a receipt twice; a delivered
    run is never sent again for a redrive (only a newer receipt may reopen it)."""
    newest: dict[str, tuple[int, str | None]] = {}  # run -> (end time, result) retained
    keys: dict[str, set[str]] = {}  # run -> keys handed to the gateway
    top: dict[str, int] = {}  # run -> highest generation handed over
    last_end: dict[str, int] = {}  # run -> the producer end time of its last send
    registry: dict[str, str] = {}  # run -> what the registry last recorded of it
    awaiting: dict[str, Record] = {}  # run -> a redrive of it given up, not yet sent
    barred: dict[str, tuple[Record, int]] = {}  # run -> a redrive of it delivered, its end
    redriven: dict[tuple[str, str], tuple[Record, str | None]] = {}  # (run, key) -> request
    # (reader, run, end time) -> that reader's first take: a fallback reader (DEL-4) never had
    # what the deleted session took before it was deleted.
    taken: dict[tuple[str, str, int], Record] = {}
    violations: list[Violation] = []

    def fail(what: str, *records: Record) -> None:
        violations.append(Violation("redrive-from-retained", "DEL-16", what,
                                    tuple(r.seq for r in records)))

    for r in trace:
        kind = r.kind
        if kind == "child.end":
            newest[r.data["run_id"]] = (r.t_ms, r.data["result"])
        elif kind == "child.correction":
            newest[r.data["run_id"]] = (r.data["ended_at"], r.data["result"])
        elif kind == "delivery.give_up":
            registry[r.data["run_id"]] = "given-up"
        elif kind == "delivery.delivered":
            registry[r.data["run_id"]] = "delivered"
        elif kind == "delivery.reopen":
            registry[r.data["run_id"]] = "pending"
            barred.pop(r.data["run_id"], None)
        elif kind == "delivery.dismiss":
            registry[r.data["run_id"]] = "released"
        elif kind == "world.operator" and r.data["action"] == "redrive" and r.data["run_id"]:
            run_id = r.data["run_id"]
            state = registry.get(run_id)
            if state == "given-up":
                awaiting[run_id] = r
            elif state == "delivered" and run_id in last_end:
                barred[run_id] = (r, last_end[run_id])
        elif kind == "gateway.send":
            run_id, key, ended = r.data["run_id"], r.data["key"], r.data["ended_at"]
            bar = barred.get(run_id)
            if bar is not None and ended <= bar[1]:
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
            registry[run_id] = "sending"  # whatever it recorded before, it sends again
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
    """Once the registry gave a run up, nothing of it is handed to the gateway again but after
    an operator asked to redrive it (a newer receipt only updates the retained payload); once
    an operator dismissed it (its payload released), nothing ever."""
    quiet: dict[str, Record] = {}  # run -> its give-up, no redrive asked since
    released: dict[str, Record] = {}  # run -> its dismissal
    violations: list[Violation] = []
    for r in trace:
        kind = r.kind
        if kind == "delivery.give_up":
            quiet[r.data["run_id"]] = r
        elif kind == "delivery.dismiss":
            released[r.data["run_id"]] = r
        elif kind == "world.operator" and r.data["action"] == "redrive":
            quiet.pop(r.data["run_id"] or "", None)
        elif kind == "gateway.send":
            run_id = r.data["run_id"]
            if run_id in released:
                violations.append(Violation(
                    "given-up-waits-for-operator", "DEL-16",
                    f"{run_id} was sent under {r.data['key']} after an operator dismissed it "
                    "and its payload was released", (released[run_id].seq, r.seq)))
            elif run_id in quiet:
                gave_up = quiet.pop(run_id)
                violations.append(Violation(
                    "given-up-waits-for-operator", "DEL-16",
                    f"{run_id} was given up ({gave_up.data['status']}) at {gave_up.t_ms} ms, "
                    f"yet it was sent again under {r.data['key']} at {r.t_ms} ms with no "
                    "operator redrive asked", (gave_up.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("redrive-from-retained", "DEL-16", "safety",
              "An operator's redrive of a given-up run is a newer generation carrying the "
              "newest retained receipt; it never hands a receipt over twice, and a delivered "
              "run is never redriven.", redrive_from_retained),
    Invariant("given-up-waits-for-operator", "DEL-16", "safety",
              "A given-up run is sent again only on an operator's redrive (a correction after "
              "the give-up only updates its retained payload); a dismissed one never.",
              given_up_waits_for_operator),
)
