"""What was asked and what an outsider saw, read from the trace for the delivery oracles.

The harness records each spawn request with its options (``world.spawn``), every completion the
gateway was handed (``gateway.send``) and every rejection it answered with (``fault`` records
carrying an ``error``), the delivery process's crashes, and the registry's rows when the world
stops (``world.rows``). A run is tied to its request by order: the n-th run the requester's actor
started for a child answers the n-th request for that child. Nothing here reads a value the model
computed about itself (its ``required`` flag, its error class, its attempt counter).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from sim.invariants.delivery.send_errors import chain_class
from sim.trace import Record


def error_class(error: str | Mapping[str, Any]) -> str:
    """``sent``, ``permanent``, ``transient`` or ``other``: an error chain (or a bare message)
    classed as reference §c16 restates it (see send_errors.chain_class)."""
    return chain_class({"message": error} if isinstance(error, str) else error)


SETTLE_PREFIX = "announce:requester-settle:"


def is_wake(key: str) -> bool:
    """Whether a completion key is a batch wake's (YLD-1), not one run's own."""
    return key.startswith(SETTLE_PREFIX)


def key_runs(key: str) -> tuple[str, ...]:
    """The run ids a batch-wake key names (``...:<run,run,...>[:yield-g][:retry-n]``)."""
    for part in key[len(SETTLE_PREFIX):].split(":"):
        if part.startswith("run-"):
            return tuple(part.split(","))
    return ()


@attrs.frozen
class Asked:
    """One spawn request as the world made it, and the run that answered it."""

    run_id: str
    child: str
    actor: str  # the requester's actor: where the completion must arrive
    required: bool
    request: Record


# Several oracles read the requests of the same trace one after another; remember the last one
# (holding the trace itself, so its identity cannot be reused while it is remembered).
_last: tuple[Sequence[Record], int, dict[str, Asked]] | None = None


def asked_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    global _last
    if _last is not None and _last[0] is trace and _last[1] == len(trace):
        return _last[2]
    asked = _asked_runs(trace)
    _last = (trace, len(trace), asked)
    return asked


def _asked_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    waiting: dict[tuple[str, str], list[Record]] = {}
    asked: dict[str, Asked] = {}
    for r in trace:
        if r.kind == "world.spawn":
            waiting.setdefault((r.data["actor"], r.data["child"]), []).append(r)
        elif r.kind == "spawn.refused":
            # Refused (reference §c15; an invalid private request, PRV-4): that request never
            # runs; the next one may.
            refused = waiting.get((r.actor, r.data["child"]))
            if refused:
                refused.pop(0)
        elif r.kind == "spawn":
            requests = waiting.get((r.actor, r.data["child"]))
            if requests:
                request = requests.pop(0)
                asked[r.data["run_id"]] = Asked(r.data["run_id"], request.data["child"],
                                                request.data["actor"], request.data["required"],
                                                request)
    return asked


def final_rows(trace: Sequence[Record]) -> dict[str, str]:
    """run_id -> delivery status in the registry when the world stopped ({} if not recorded)."""
    for r in reversed(trace):
        if r.kind == "world.rows":
            return {row["run_id"]: row["delivery_status"] for row in r.data["rows"]}
    return {}


def is_rejection(r: Record) -> bool:
    """A send fault, or a deleted session refusing a completion that reached it (DEL-4)."""
    return ((r.kind == "fault" and "error" in r.data and "run_id" in r.data)
            or r.kind == "requester.gone")


def rejection_class(r: Record) -> str | None:
    """How the gateway refused a send, if ``r`` is a refusal: a broken later chunk (a
    ``chunk-fail`` or ``chunk-abort`` fault) comes after earlier chunks reached the channel, so it
    is ``sent`` whatever the platform's error said; any other send fault is classed by its chain."""
    if r.kind == "fault" and r.data.get("kind") in ("chunk-fail", "chunk-abort"):
        return "sent"
    return error_class(r.data["error"]) if is_rejection(r) else None


def is_delivery_crash(r: Record) -> bool:
    return r.kind == "crash" and r.actor == "delivery"


def announces_nothing(result: str | None) -> bool:
    """An exact ANNOUNCE_SKIP reply (surrounding white space aside): delivered by announcing
    nothing (reference §c1)."""
    return result is not None and result.strip() == "ANNOUNCE_SKIP"
