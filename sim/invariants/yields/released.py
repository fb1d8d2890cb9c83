"""YLD-2 from the registry's side: a batch's results, once its wake is taken, count as delivered
(seed 002: after ``sessions_yield`` no single child's cleanup may expire or suspend them; reference
§b, §c12: a successful batch-wake receipt releases a suspended row to ``delivered``).

Restated from what was seen: each yield wake a requester took (``requester.accept`` keyed
``announce:requester-settle:...:yield-...``), the runs its key names and the child session each
of its findings sections names, the later attempts of the same batch (``gateway.send``), the
producers' corrections (``child.correction``), the operator's requests (``world.operator``) and
the registry's rows when the world stopped (``world.rows``). Waves (settle wakes with no yield)
are not judged: seed 002 speaks of the batch after ``sessions_yield``, and a wave's wake may go
out to a channel in chunks whose partial failure closes it undelivered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.observations import is_wake, key_runs
from sim.trace import Record

_SECTION = re.compile(r"^\d+\. .*\nsession_key: (.*)\nstatus: ", re.M)


def wake_releases_suspended(trace: Sequence[Record]) -> list[Violation]:
    """When the world stops, no run whose result a taken yield wake carried (its session's
    section in the wake's findings) is recorded ``suspended``, unless the batch sent a later
    attempt under another key (the outbox took that wake as undelivered). Left out: a run with a
    newer receipt (a correction: the wake may have carried an older one, which releases
    nothing), one an operator asked about (a redrive starts a new generation), and a session key
    the wake names for more than one run (which run a section is cannot be told)."""
    if not trace or trace[-1].kind != "world.end" or trace[-1].data["reason"] != "quiescent":
        return []
    last_key: dict[str, tuple[str, int]] = {}  # a wake's key without ":retry-n" -> last sent
    session_of: dict[str, str] = {}
    corrected: set[str] = set()
    asked: set[str] = set()
    carried: dict[str, Record] = {}  # run -> the first taken wake that carried it
    rows: dict[str, str] = {}
    for r in trace:
        kind = r.kind
        if kind == "spawn":
            session_of[r.data["run_id"]] = r.data["child_session_key"]
        elif kind == "child.correction":
            corrected.add(r.data["run_id"])
        elif kind == "world.operator" and r.data.get("run_id"):
            asked.add(r.data["run_id"])
        elif kind == "gateway.send" and is_wake(r.data["key"]):
            last_key[_base(r.data["key"])] = (r.data["key"], r.seq)
        elif kind == "requester.accept" and is_wake(r.data["key"]) and ":yield-" in r.data["key"]:
            runs = [run for run in key_runs(r.data["key"]) if run in session_of]
            keys = [session_of[run] for run in runs]
            shown = set(_SECTION.findall(r.data["text"]))
            for run in runs:
                if keys.count(session_of[run]) == 1 and session_of[run] in shown:
                    carried.setdefault(run, r)
        elif kind == "world.rows":
            rows = {row["run_id"]: row["delivery_status"] for row in r.data["rows"]}
    violations = []
    for run, wake in carried.items():
        # A later attempt under another key: the outbox took this one as undelivered (a
        # visible reply was missing), so it was no successful receipt.
        if last_key.get(_base(wake.data["key"]), (wake.data["key"], 0))[0] != wake.data["key"]:
            continue
        if rows.get(run) == "suspended" and run not in corrected and run not in asked:
            violations.append(Violation(
                "wake-releases-suspended", "YLD-2",
                f"{run}'s result was carried by the wake {wake.data['key']} that "
                f"{wake.actor} took at {wake.t_ms} ms, yet its row still reads suspended",
                (wake.seq,)))
    return violations


def _base(key: str) -> str:
    head, _, tail = key.rpartition(":retry-")
    return head if head and tail.isdigit() else key


INVARIANTS = (
    Invariant("wake-releases-suspended", "YLD-2", "safety",
              "A run whose result a taken yield wake carried is not left suspended: the "
              "batch's results count as delivered (a newer receipt or an operator's request "
              "aside).", wake_releases_suspended),
)
