"""The trace: an append-only list of frozen records, the only thing invariants and exports read."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import attrs
from attrs import AttrsInstance

from sim.textout import printable

T = TypeVar("T", bound=AttrsInstance)


@attrs.frozen(slots=True)
class Record:
    """One thing that happened: at virtual time ``t_ms``, ``actor`` did or saw ``kind``.

    ``data`` holds JSON values only and is never mutated after the record is made.
    """

    seq: int
    t_ms: int
    actor: str
    kind: str
    data: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "t_ms": self.t_ms, "actor": self.actor, "kind": self.kind,
                "data": dict(self.data)}

    def jsonl(self) -> str:
        # A lone surrogate is written as its JSON escape, so the line always encodes as UTF-8.
        return printable(json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")))


class _Appending(Record):
    """A :class:`Record` while :meth:`Trace.append` fills it in: the same slots, plain writes
    (object's ``__setattr__`` and ``__delattr__`` give CPython's generic setter, whose stores are
    specialised; attrs' frozen ones write each field through ``object.__setattr__``). Its class
    is set to ``Record`` before anyone sees it."""

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


_new = object.__new__
# ``append`` writes every field itself: that makes what ``Record(...)`` makes only while
# ``__init__`` does nothing else.
if any(f.validator is not None or f.converter is not None for f in attrs.fields(Record)) \
        or hasattr(Record, "__attrs_post_init__"):
    raise AssertionError("Trace.append writes Record's slots: no validator, converter or hook")


# What the harness itself records (the model's own kinds are in ``actors/events/__init__.py``):
# kind -> the fields its records carry. ``fault`` records carry ``kind`` plus the fault's details.
HARNESS_KINDS: dict[str, tuple[str, ...]] = {
    "world.start": ("scenario", "seed", "strategy", "mutants", "faults", "features", "versions",
                    "archive_after_minutes"),
    "world.heal": (),
    # ``until_ms``: the time limit the world ran under (work due after it never ran).
    "world.end": ("reason", "steps", "until_ms"),
    "timeline.arm": ("fault", "child", "point"),
    "timeline.noop": ("fault", "why"),
    "fault": ("kind", "run_id", "key", "error", "lost", "dst", "message", "delay_ms",
              "chunk", "callback_error", "recovery_error"),
    # What was asked (each spawn request with its options), what the gateway was handed, and the
    # registry's rows when the world stops: the delivery oracles' outside view.
    "world.spawn": ("child", "requester", "actor", "required", "task", "caller", "request",
                    "answer_lost", "session", "turn", "incarnation",
                    "route_change", "completion_target", "options", "run_timeout_seconds",
                    "timeout_ms", "cleanup", "plan"),
    "gateway.send": ("run_id", "key", "requester", "ended_at", "text_sha256"),
    "world.rows": ("rows",),
    "world.memory": ("runs",),
    "crash": ("point", "incarnation"),
    # The harness (re)starting the delivery process (sim/world/core.py), after a crash too.
    "world.restart": ("process",),
    "drop": ("src", "dst", "message"),
    # Each session's configuration (routing facts, owners) and each session-control request as
    # the harness sent it (DEL-5, DEL-17; sim/world/control.py).
    "world.session": ("key", "nested", "owners", "reply_mode", "origin", "route", "binding",
                      "hook", "channel", "chunk_chars"),
    "world.action": ("request", "session", "actor", "action", "child", "caller",
                     "limit", "offset", "include_tools"),  # (the last three: reads only)
    # Nesting (docs/nesting.md): the limits a world runs under, and a nested session deleted.
    "world.limits": ("max_spawn_depth", "max_children_per_agent", "max_concurrent"),
    "world.delete-session": ("child", "session"),
    # A Gateway restart (sim/world/restart.py): when it is back, the runs whose execution
    # context it lost, how many resumed notices fail; and each notice attempt that failed.
    "world.gateway-restart": ("back_ms", "lost", "notice_fails"),
    "world.notice-fail": ("run_id",),
    # Each operator request as the harness sent it to the registry (sim/world/redrive.py).
    "world.operator": ("request", "action", "child", "run_id"),
    # What the harness asked of each requester session (sim/world/turns.py): turns, their end
    # (finish or sessions_yield), status checks, /new and deletes.
    "world.turn": ("session", "turn", "incarnation"),
    "world.turn_end": ("session", "turn", "how", "incarnation"),
    "world.status_check": ("session", "turn", "child"),
    "world.lifecycle": ("session", "event", "incarnation"),
}


# Strings at least this long are shared between records (see ``Trace._share``).
SHARED_STRING_MIN = 24
# ``append`` shares a record's strings from a trace of this many records: a default-world seed's
# few hundred records gain no memory that matters, and looking through every record's data was
# ~3 % of a seed's instructions (callgrind, seeds 1..10); a big run shares all but its first few.
SHARE_STRINGS_FROM = 2_000
# ``share_fields`` shares from a trace of this many records: a big run's (a default-world seed's
# few hundred records and runs gain nothing that matters, for ~0.7 % of its CPU).
SHARE_FIELDS_FROM = 5_000


class Trace:
    """Append-only; bounded so that a runaway run fails loudly instead of eating memory."""

    def __init__(self, limit: int = 1_000_000) -> None:
        self._records: list[Record] = []
        self.limit = limit
        self._strings: dict[str, str] = {}

    @property
    def limit(self) -> int:
        """How many records the trace holds before :meth:`append` raises."""
        return self._limit

    @limit.setter
    def limit(self, limit: int) -> None:
        self._limit = limit
        # Below this many records ``append`` has nothing to check (one test per record).
        self._plain_below = min(limit, SHARE_STRINGS_FROM)

    def append(self, t_ms: int, actor: str, kind: str, data: Mapping[str, Any]) -> Record:
        records = self._records
        seq = len(records)
        if seq >= self._plain_below:
            if seq >= self._limit:
                raise OverflowError(f"trace exceeded {self._limit} records")
            if seq >= SHARE_STRINGS_FROM:
                self._share(data, 0)
        # Built as in actors/records/run_record.py's ``apply``: plain slot stores into an
        # ``_Appending``, then made a ``Record`` (0.4 µs instead of attrs' frozen ``__init__``'s
        # 1.0 µs, ~300 records a seed); ``Record(...)`` makes the same record.
        building: Any = _new(_Appending)  # Any: the type checker sees frozen fields
        building.seq = seq
        building.t_ms = t_ms
        building.actor = actor
        building.kind = kind
        building.data = data
        building.__class__ = Record
        records.append(building)
        return building  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self._records)

    def _share(self, value: Any, depth: int) -> None:
        """Put one copy of each long string into the records: a child's answer is recorded
        several times over as equal but separate strings (streamed, folded, each consumer's view,
        the end), a third of a big run's trace strings (docs/performance-log.md). Only a string is
        swapped for an equal one, in the dicts and lists of the record's data, before the
        record exists; nothing else about the data changes."""
        if depth > 3:
            return
        strings = self._strings
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            return
        for key, item in items:
            if isinstance(item, str):
                if len(item) >= SHARED_STRING_MIN:
                    shared = strings.setdefault(item, item)
                    if shared is not item:
                        value[key] = shared
            elif isinstance(item, dict | list):
                self._share(item, depth + 1)

    def share_fields(self, value: T) -> T:
        """``value`` (a frozen attrs instance: a run record ``world.run`` returns beside the
        trace) with each long string field the trace's equal copy, where it holds one: the same
        value. A big run's returned records were fresh copies of the texts its trace holds."""
        if len(self._records) < SHARE_FIELDS_FROM:
            return value
        strings = self._strings
        changes = {}
        for field in attrs.fields(type(value)):
            item = getattr(value, field.name)
            if type(item) is str and len(item) >= SHARED_STRING_MIN:
                shared = strings.get(item, item)
                if shared is not item:
                    changes[field.alias] = shared
        return attrs.evolve(value, **changes) if changes else value  # type: ignore[misc]

    def __iter__(self) -> Iterator[Record]:
        return iter(self._records)

    def __getitem__(self, index: int) -> Record:
        return self._records[index]

    @property
    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def digest(self) -> str:
        """A stable hash of the whole trace: the SHA-256 of its JSONL form."""
        h = hashlib.sha256()
        for record in self._records:
            h.update(record.jsonl().encode())
            h.update(b"\n")
        return h.hexdigest()


def first_difference(a: Trace, b: Trace) -> int | None:
    """Index of the first record that differs (or where one trace ends), else None."""
    for i, (ra, rb) in enumerate(zip(a, b, strict=False)):
        if ra != rb:
            return i
    if len(a) != len(b):
        return min(len(a), len(b))
    return None
