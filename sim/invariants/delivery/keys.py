"""Reference §a and §c12: the idempotency key each of a run's hand-offs carries.

The gateway and the requester recognise a completion they already have by its key alone, so the
key is the promise that makes a resend harmless: ``announce:v1:<childSessionKey>:<childRunId>``
(reference §a), the same key on every resend of one delivery generation, a restart included
(§c12: "replays the same attempt key"), and ``:g<n>`` after it for a reopened generation
(docs/recovery.md), whose number is one above the run's previous hand-off's when that hand-off
carried an older answer (a correction reopens the run as its next generation, docs/receipts.md;
an operator's redrive, between, is ``redrive-from-retained``'s). ``at-most-once`` sees a wrong
key only when the completion had already reached its requester before the resend; this oracle
sees it on the first hand-off that carries it.

Read from what was asked (``world.spawn``: the requester's session key and the child's label,
restated into the child session key as reference §a builds it; ``spawn`` for the run id that
answered the request), each operator request (``world.operator``) and what the gateway was handed
(``gateway.send``: the run, the key and the producer end time it carries). A batch or wave wake's
key is ``one-wake-per-batch``'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.nesting.limits import child_key
from sim.invariants.observations import asked_runs, is_wake
from sim.trace import Record

_GENERATION = re.compile(r":g([0-9]+)$")


def announce_key(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    last: dict[str, Record] = {}  # run -> its latest hand-off
    # run -> operator requests asked since its latest hand-off that no hand-off has answered
    # yet: each may open one generation. Two asked in one instant both come before either's
    # send in the trace, yet the registry takes them one at a time (seed 17824).
    asked_since: dict[str, int] = {}
    # run -> (when, the end time) of each correction its producer wrote: a correction reopens
    # the run at once under its next generation (docs/receipts.md), so a send of that answer
    # in the correction's instant is the correction's own, even with an operator's request
    # pending: the registry may take a request asked in that instant after the correction, and
    # that request then opens the generation after (seed 90466).
    corrected: set[tuple[str, int, int]] = set()
    violations: list[Violation] = []

    def fail(what: str, *seqs: int) -> None:
        violations.append(Violation("announce-key", "DEL-3", what, seqs))

    for r in of_kinds(trace, ("world.operator", "gateway.send", "child.correction")):
        if r.kind == "child.correction":
            corrected.add((r.data["run_id"], r.t_ms, r.data["ended_at"]))
            continue
        if r.kind == "world.operator":
            run_id = r.data["run_id"]
            asked_since[run_id] = asked_since.get(run_id, 0) + 1  # a redrive may open the next
            continue
        if r.kind != "gateway.send" or is_wake(r.data["key"]):
            continue
        run_id, key = r.data["run_id"], r.data["key"]
        request = asked.get(run_id)
        if request is None:
            continue  # not a spawned run's own hand-off
        spawn = request.request.data
        base = f"announce:v1:{child_key(spawn['requester'], spawn['session'])}:{run_id}"
        suffix = key[len(base):] if key.startswith(base) else None
        found = _GENERATION.fullmatch(suffix) if suffix else None
        if suffix is None or (suffix and (found is None or int(found.group(1)) < 2)):
            fail(f"{run_id} was handed to the gateway under key {key!r}, not {base!r} (with "
                 f"':g<n>' for a reopened generation)", request.request.seq, r.seq)
        before = last.get(run_id)
        reopened = before is not None and before.data["ended_at"] < r.data["ended_at"] \
            and (run_id, r.t_ms, r.data["ended_at"]) in corrected
        if before is not None and asked_since.get(run_id, 0) and not reopened and (
                before.data["key"] != key or before.data["ended_at"] != r.data["ended_at"]):
            asked_since[run_id] -= 1  # an operator's redrive: redrive-from-retained's to judge
            before = None
        generation = 1 if not suffix else int(found.group(1)) if found else None
        if before is not None and generation is not None \
                and before.data["ended_at"] < r.data["ended_at"]:
            # A newer answer opens the next generation (docs/receipts.md: a correction of a
            # receipt in flight or delivered; a restart finding one no generation carried).
            earlier = _generation(before.data["key"])
            if earlier is not None and generation != earlier + 1:
                fail(f"{run_id} was handed to the gateway under key {before.data['key']!r} "
                     f"(generation {earlier}) at {before.t_ms} ms, then a newer answer (ending "
                     f"at {r.data['ended_at']} ms, not {before.data['ended_at']} ms) with no "
                     f"operator request between under {key!r} (generation {generation}), not "
                     f"generation {earlier + 1}", before.seq, r.seq)
        if before is not None and before.data["ended_at"] == r.data["ended_at"] \
                and before.data["key"] != key:
            fail(f"{run_id} was handed to the gateway under key {before.data['key']!r} at "
                 f"{before.t_ms} ms and again, with the same answer (ending at "
                 f"{r.data['ended_at']} ms) and no operator request between, under {key!r} at "
                 f"{r.t_ms} ms", before.seq, r.seq)
        last[run_id] = r
    return violations


def _generation(key: str) -> int | None:
    """The delivery generation a run's own key names: 1 without a suffix."""
    found = _GENERATION.search(key)
    if found is None:
        return 1 if key.startswith("announce:v1:") else None
    return int(found.group(1))


INVARIANTS = (
    Invariant("announce-key", "DEL-3", "safety",
              "Each hand-off of a run carries announce:v1:<child session key>:<run id> (reference "
              "§a), ':g<n>' after it for a reopened generation, and the same key as the run's "
              "previous hand-off of the same answer unless an operator request came between "
              "(§c12: a restart replays the same key); a newer answer goes under the next "
              "generation's key, one above the previous hand-off's.", announce_key),
)
