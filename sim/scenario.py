"""Scenarios as data: a TOML file describing a world, a scripted timeline and expectations.

Loading checks everything before anything runs and reports the first problem as
``file:line: field: what is wrong`` (an :class:`~actors.errors.InputError`). The format is
documented in ``docs/scenarios.md``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from actors import addresses
from actors.agent_loop import Encoding
from actors.errors import InputError
from actors.messages import STEP_FINISHES, ChildSpec, StepSpec
from actors.mutants import MUTANTS
from actors.states import CrashPoint, DeliveryStatus, OutcomeStatus, StepFinish, values
from sim.choices import STRATEGIES
from sim.faults import FAULT_KINDS, FaultKind, TimelineEvent
from sim.tomlpos import Positions

OUTCOMES = tuple(s for s in values(OutcomeStatus) if s != OutcomeStatus.UNKNOWN)
DELIVERY_STATES = values(DeliveryStatus)
# Faults a timeline can script (child outcomes are scripted on the child itself).
TIMELINE_FAULTS: tuple[str, ...] = (
    FaultKind.SEND_TRANSIENT, FaultKind.SEND_PERMANENT, FaultKind.SEND_AMBIGUOUS,
    FaultKind.DUPLICATE, FaultKind.DELAY, FaultKind.CRASH, FaultKind.ABORT)
# The fields each scripted fault uses. Another field would silently keep the fault from ever
# matching (an armed fault with an actor or point matches only a crash), so it is an error.
_TIMELINE_FIELDS = {
    "send-transient": ("child", "count", "error"),
    "send-permanent": ("child", "count", "error"),
    "send-ambiguous": ("child", "count"),
    "duplicate": ("child", "count"),
    "delay": ("child", "count", "delay"),
    "crash": ("actor", "point", "count", "restart_after"),
    "abort": ("child",),
    "history-read": ("child", "limit", "offset", "include_tools"),
    "cleanup": ("child",),
    "archive-read": ("child", "limit", "offset", "include_tools"),
}
# Timeline entries that are things the world does rather than faults (`event = ...`).
TIMELINE_EVENTS = ("abort", "history-read", "cleanup", "archive-read")
# Where the delivery actor can crash (actors/delivery.py names them).
CRASH_POINTS = values(CrashPoint)
DEFAULT_UNTIL_S = 6 * 3600
DEFAULT_HEAL_S = 20 * 60
_REQUIREMENT_ID = re.compile(r"^(OUT|DEL|YLD|PRV|FMT|SIM)-\d+[a-z]?$")


@attrs.frozen
class SessionDef:
    key: str


@attrs.frozen
class WorkloadDef:
    """Children drawn from the seed: how many, for which requester."""

    children: int
    requester: str
    spawn_within_ms: int = 60_000
    run_max_ms: int = 10 * 60_000


@attrs.frozen
class FaultsDef:
    kinds: tuple[str, ...]
    swarm: bool
    heal_at_ms: int


@attrs.frozen
class ChildExpectation:
    child: str
    delivery: str | None
    received: int | None
    status: str | None
    text: str | None
    line: int | None


@attrs.frozen
class Expectation:
    violations: tuple[str, ...] = ()
    children: tuple[ChildExpectation, ...] = ()


@attrs.frozen
class Scenario:
    path: str
    name: str
    description: str
    covers: tuple[str, ...]
    seed: int
    strategy: str
    mutants: tuple[str, ...]
    until_ms: int
    sessions: tuple[SessionDef, ...]
    children: tuple[ChildSpec, ...]
    workload: WorkloadDef | None
    faults: FaultsDef
    timeline: tuple[TimelineEvent, ...]
    expect: Expectation
    # `[replay.choices]`: a saved run's choices per subsystem, followed leniently
    # (sim/choices.py); a saved shrunk failure is one run whatever the seed.
    replay: tuple[tuple[str, tuple[int, ...]], ...] | None = None


class _Table:
    """Typed, located access to one TOML table; unknown keys are errors (typos must not pass)."""

    def __init__(self, loader: _Loader, data: dict[str, Any], path: tuple[str | int, ...]) -> None:
        self.loader = loader
        self.data = data
        self.path = path

    def field_name(self, key: str) -> str:
        parts: list[str] = []
        for p in self.path:
            if isinstance(p, int):
                parts[-1] = f"{parts[-1]}[{p}]"
            else:
                parts.append(p)
        return ".".join([*parts, key])

    def fail(self, key: str, message: str) -> InputError:
        return self.loader.error((*self.path, key), self.field_name(key), message)

    def fail_item(self, key: str, index: int, message: str) -> InputError:
        """An error in one element of the array at ``key`` (located on that element's line)."""
        return self.loader.error((*self.path, key, index), self.field_name(key), message)

    def check_keys(self, allowed: Sequence[str]) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.fail(key, f"unknown field (expected one of: {', '.join(allowed)})")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., *,
            required: bool = False) -> Any:
        if key not in self.data:
            if required or default is ...:
                raise self.loader.error(self.path, self.field_name(key), "is required")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # bool is an int in Python; a TOML boolean is not a number here.
        if isinstance(value, bool) and bool not in kinds:
            raise self.fail(key, f"must be {_kind_names(kinds)}, not a boolean")
        if not isinstance(value, kinds):
            raise self.fail(key, f"must be {_kind_names(kinds)}, not {_toml_kind(value)}")
        return value

    def text(self, key: str, default: Any = ..., *, choices: Sequence[str] | None = None) -> Any:
        value = self.get(key, str, default)
        if value is not None and choices is not None and value not in choices:
            raise self.fail(key, f"{value!r} is not one of: {', '.join(choices)}")
        return value

    def seconds(self, key: str, default: Any = ..., *, minimum: float = 0.0) -> Any:
        """A duration or instant given in seconds (default also in seconds), returned in ms."""
        value = self.get(key, (int, float), default)
        if value is None:
            return None
        if not math.isfinite(value):
            raise self.fail(key, "must be a finite number of seconds")
        if value < minimum:
            raise self.fail(key, f"must be at least {minimum:g} seconds")
        return round(value * 1000)

    def count(self, key: str, default: Any = ..., *, minimum: int = 0) -> Any:
        value = self.get(key, int, default)
        if isinstance(value, int) and value < minimum:
            raise self.fail(key, f"must be at least {minimum}")
        return value

    def strings(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self.get(key, list, default)
        if not isinstance(value, list):
            return tuple(value)
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail_item(key, index,
                                     f"must be an array of strings; {item!r} is not a string")
        return tuple(value)

    def tables(self, key: str) -> list[_Table]:
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail(key, "must be an array of tables ([[" + self.field_name(key) + "]])")
        return [_Table(self.loader, v, (*self.path, key, i)) for i, v in enumerate(value)]

    def table(self, key: str) -> _Table | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table ([" + self.field_name(key) + "])")
        return _Table(self.loader, value, (*self.path, key))


def _toml_kind(value: object) -> str:
    """What a TOML value is, in TOML's words (``tomllib`` gives dates, times, lists, dicts)."""
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
             list: "an array", dict: "a table"}
    if kinds == (int, float):
        return "a number"
    return " or ".join(names.get(k, k.__name__) for k in kinds)


class _Loader:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.positions = Positions(text)

    def error(self, at: tuple[str | int, ...], field: str, message: str) -> InputError:
        return InputError(self.path, self.positions.line(*at), field, message)


def load(path: str | Path) -> Scenario:
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, None, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, line, "", f"not UTF-8 text: {exc.reason}") from None
    return loads(text, path)


def loads(text: str, path: str = "<scenario>") -> Scenario:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        # "(at end of document)": the last line.
        line = int(match.group(1)) if match else text.rstrip("\n").count("\n") + 1
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "",
                         str(exc)) or "invalid TOML"
        raise InputError(path, line, "", f"invalid TOML: {message}") from None
    loader = _Loader(path, text)
    root = _Table(loader, data, ())
    root.check_keys(("name", "description", "covers", "seed", "strategy", "mutants", "until",
                     "sessions", "children", "workload", "faults", "timeline", "expect",
                     "replay"))
    name = root.text("name", Path(path).stem)
    covers = root.strings("covers", ())
    for index, requirement in enumerate(covers):
        if not _REQUIREMENT_ID.match(requirement):
            raise root.fail_item("covers", index,
                                 f"{requirement!r} is not a requirement ID like 'DEL-3'")
    mutants = root.strings("mutants", ())
    for index, mutant in enumerate(mutants):
        if mutant not in MUTANTS:
            raise root.fail_item("mutants", index,
                                 f"unknown mutant {mutant!r} (known: {', '.join(MUTANTS)})")
    seed = root.count("seed", 1)
    until_ms = root.seconds("until", DEFAULT_UNTIL_S, minimum=1)

    sessions = _sessions(root)
    session_keys = [s.key for s in sessions]
    children = _children(root, session_keys)
    child_ids = [c.id for c in children]
    workload = _workload(root, session_keys)
    if not children and workload is None:
        raise loader.error((), "children", "the world has no children (add [[children]] or "
                           "[workload])")
    return Scenario(
        path=path,
        name=name,
        description=root.text("description", ""),
        covers=covers,
        seed=seed,
        strategy=root.text("strategy", "random", choices=STRATEGIES),
        mutants=mutants,
        until_ms=until_ms,
        sessions=sessions,
        children=children,
        workload=workload,
        faults=_faults(root),
        timeline=_timeline(root, child_ids),
        expect=_expect(root, child_ids),
        replay=_replay(root),
    )


def _sessions(root: _Table) -> tuple[SessionDef, ...]:
    sessions: list[SessionDef] = []
    for table in root.tables("sessions"):
        table.check_keys(("key",))
        key = table.text("key")
        if not re.match(r"^agent:[^:\s]+:\S+$", key):
            raise table.fail("key", f"{key!r} is not a session key like 'agent:main:main'")
        if any(s.key == key for s in sessions):
            raise table.fail("key", f"session {key!r} is defined twice")
        sessions.append(SessionDef(key))
    if not sessions:
        raise root.loader.error((), "sessions", "at least one [[sessions]] is required")
    return tuple(sessions)


def _children(root: _Table, session_keys: list[str]) -> tuple[ChildSpec, ...]:
    children: list[ChildSpec] = []
    for table in root.tables("children"):
        table.check_keys(("id", "requester", "task", "spawn_at", "run_for", "outcome", "reply",
                          "reply_chars", "error", "expects_completion", "usage_recorded", "steps",
                          "encoding", "timeout", "fork_seed", "earlier_epoch", "session"))
        child_id = table.text("id")
        if not re.match(r"^[A-Za-z0-9_\-]+$", child_id):
            raise table.fail("id", f"{child_id!r} may only use letters, digits, '-' and '_'")
        if any(c.id == child_id for c in children):
            raise table.fail("id", f"child {child_id!r} is defined twice")
        requester = table.text("requester", session_keys[0])
        if requester not in session_keys:
            raise table.fail("requester", f"{requester!r} is not one of the [[sessions]]")
        outcome = table.text("outcome", "ok", choices=OUTCOMES)
        run_ms = table.seconds("run_for", 30)
        error = table.text("error", None)
        timeout_ms = table.seconds("timeout", None, minimum=0.001)
        if "reply" in table.data and "reply_chars" in table.data:
            raise table.fail("reply_chars", "give either reply or reply_chars, not both")
        if "steps" in table.data:
            for one_step in ("reply", "reply_chars"):
                if one_step in table.data:
                    raise table.fail(one_step, f"give either {one_step} (one step) or steps, "
                                     "not both")
            steps = [_step(step) for step in table.tables("steps")]
            if not steps:
                raise table.fail("steps", "must list at least one step")
        elif "reply_chars" in table.data:
            steps = [StepSpec(run_ms, text=filler_text(table.count("reply_chars", minimum=1)))]
        else:
            steps = [StepSpec(run_ms, text=table.text("reply", ""))]
        if outcome == "error":
            # The run fails: its last step's stream breaks.
            steps[-1] = attrs.evolve(steps[-1], finish=StepFinish.STREAM_ERROR)
        elif outcome == "timeout":
            if timeout_ms is None:
                timeout_ms = sum(step.duration_ms for step in steps)
            steps = [attrs.evolve(step, duration_ms=2 * step.duration_ms) for step in steps]
        children.append(ChildSpec(
            id=child_id,
            requester=requester,
            task=table.text("task", f"task of {child_id}"),
            spawn_at_ms=table.seconds("spawn_at", 0),
            steps=tuple(steps),
            encoding=table.text("encoding", "v2", choices=values(Encoding)),
            timeout_ms=timeout_ms,
            error=error,
            expects_completion=table.get("expects_completion", bool, True),
            usage_recorded=table.get("usage_recorded", bool, True),
            fork_seed=table.text("fork_seed", None),
            earlier_epoch=table.text("earlier_epoch", None),
            session=_session_label(table),
        ))
    return tuple(children)


def _session_label(table: _Table) -> str | None:
    label: str | None = table.text("session", None)
    if label is not None and not re.match(r"^[A-Za-z0-9_\-]+$", label):
        raise table.fail("session", f"{label!r} may only use letters, digits, '-' and '_'")
    return label


def filler_text(chars: int) -> str:
    """A long reply of exactly ``chars`` characters, with characters that need escaping."""
    unit = "Row {:05d}: a < b & c; see </prompt-data> fences.\n"
    rows = (chars // len(unit.format(0))) + 1
    return "".join(unit.format(i) for i in range(rows))[:chars]


def _step(table: _Table) -> StepSpec:
    table.check_keys(("duration", "text", "reasoning", "tool_calls", "finish"))
    return StepSpec(
        duration_ms=table.seconds("duration", 10, minimum=0.001),
        text=table.text("text", ""),
        reasoning=table.text("reasoning", ""),
        tool_calls=table.count("tool_calls", 0),
        finish=StepFinish(table.text("finish", "auto", choices=STEP_FINISHES)),
    )


def _workload(root: _Table, session_keys: list[str]) -> WorkloadDef | None:
    table = root.table("workload")
    if table is None:
        return None
    table.check_keys(("children", "requester", "spawn_within", "run_max"))
    requester = table.text("requester", session_keys[0])
    if requester not in session_keys:
        raise table.fail("requester", f"{requester!r} is not one of the [[sessions]]")
    return WorkloadDef(
        children=table.count("children", minimum=1),
        requester=requester,
        spawn_within_ms=table.seconds("spawn_within", 60),
        run_max_ms=table.seconds("run_max", 600, minimum=1),
    )


def _faults(root: _Table) -> FaultsDef:
    table = root.table("faults")
    if table is None:
        return FaultsDef((), False, DEFAULT_HEAL_S * 1000)
    table.check_keys(("kinds", "swarm", "heal_at"))
    raw = table.data.get("kinds", [])
    if isinstance(raw, str) and raw != "all":
        raise table.fail("kinds", f'must be an array of fault kinds or "all", not {raw!r}')
    kinds = tuple(FAULT_KINDS) if raw == "all" else table.strings("kinds", ())
    for index, kind in enumerate(kinds):
        if kind not in FAULT_KINDS:
            raise table.fail_item("kinds", index, f"unknown fault kind {kind!r} "
                                  f"(known: {', '.join(FAULT_KINDS)}, or \"all\")")
    return FaultsDef(kinds, table.get("swarm", bool, False),
                     table.seconds("heal_at", DEFAULT_HEAL_S))


def _timeline(root: _Table, child_ids: list[str]) -> tuple[TimelineEvent, ...]:
    events: list[TimelineEvent] = []
    for table in root.tables("timeline"):
        table.check_keys(("at", "fault", "event", "child", "actor", "point", "count", "error",
                          "delay", "restart_after", "limit", "offset", "include_tools"))
        if "event" in table.data:
            if "fault" in table.data:
                raise table.fail("event", "a timeline entry is either a fault or an event")
            kind_key = "event"
            fault = table.text("event", choices=TIMELINE_EVENTS)
        else:
            kind_key = "fault"
            fault = table.text("fault", choices=TIMELINE_FAULTS)
        for key in table.data:
            if key not in ("at", kind_key, *_TIMELINE_FIELDS[fault]):
                raise table.fail(key, f"does not apply to a {fault!r} {kind_key} (it takes: at, "
                                 f"{kind_key}, {', '.join(_TIMELINE_FIELDS[fault])})")
        child = table.text("child", None)
        if child is not None and child not in child_ids:
            raise table.fail("child", f"{child!r} is not one of the [[children]]")
        actor = table.text("actor", None)
        if fault == "crash":
            if actor not in (None, addresses.DELIVERY):
                raise table.fail("actor", f"only the {addresses.DELIVERY!r} actor can crash")
            actor = addresses.DELIVERY
        if fault in TIMELINE_EVENTS and child is None:
            what = {"abort": "an abort names the child to abort",
                    "cleanup": "a cleanup names the child whose session it deletes"}.get(
                fault, "a history read names the child whose transcript it reads")
            raise table.fail("child", what)
        point = table.text("point", None)
        if point is not None and point not in CRASH_POINTS:
            raise table.fail("point", f"{point!r} is not a crash point (known: "
                             f"{', '.join(CRASH_POINTS)})")
        events.append(TimelineEvent(
            at_ms=table.seconds("at"),
            fault=fault,
            child=child,
            actor=actor,
            point=point,
            count=table.count("count", 1, minimum=1),
            error=table.text("error", None),
            delay_ms=table.seconds("delay", 0),
            restart_after_ms=table.seconds("restart_after", None),
            limit=table.count("limit", None),
            offset=table.count("offset", 0),
            include_tools=table.get("include_tools", bool, False),
        ))
    return tuple(events)


def _expect(root: _Table, child_ids: list[str]) -> Expectation:
    table = root.table("expect")
    if table is None:
        return Expectation()
    table.check_keys(("violations", "children"))
    from sim.invariants import BY_NAME  # the names scenarios may expect

    violations = table.strings("violations", ())
    for index, name in enumerate(violations):
        if name not in BY_NAME:
            raise table.fail_item("violations", index, f"unknown invariant {name!r} "
                                  f"(known: {', '.join(BY_NAME)})")
    expectations = []
    for child_table in table.tables("children"):
        child_table.check_keys(("child", "delivery", "received", "status", "text"))
        child = child_table.text("child")
        if child not in child_ids:
            raise child_table.fail("child", f"{child!r} is not one of the [[children]]")
        expectations.append(ChildExpectation(
            child=child,
            delivery=child_table.text("delivery", None, choices=DELIVERY_STATES),
            received=child_table.count("received", None),
            status=child_table.text("status", None, choices=(*OUTCOMES, "unknown")),
            text=child_table.text("text", None),
            line=root.loader.positions.line(*child_table.path),
        ))
    return Expectation(violations, tuple(expectations))


# Far above any run's choice count (a run is bounded by its agenda steps), far below a memory risk.
MAX_REPLAY_CHOICES = 1_000_000
_SUBSYSTEM = re.compile(r"^[a-z][a-z0-9_-]*(:[a-z0-9_-]+)*$")


def _replay(root: _Table) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    """``[replay.choices]``: a saved run's choice indices per subsystem (``handoff shrink``)."""
    table = root.table("replay")
    if table is None:
        return None
    table.check_keys(("choices",))
    choices = table.table("choices")
    if choices is None:
        raise table.fail("choices", "is required ([replay.choices], one array per subsystem)")
    guides = []
    total = 0
    for subsystem in choices.data:
        if not _SUBSYSTEM.match(subsystem):
            raise choices.fail(subsystem, "is not a subsystem name like 'schedule' or "
                               "'fault:crash'")
        values = choices.get(subsystem, list)
        total += len(values)
        if total > MAX_REPLAY_CHOICES:
            raise choices.fail(subsystem, f"more than {MAX_REPLAY_CHOICES} choices in all")
        for index, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise choices.fail_item(subsystem, index,
                                        f"must be an array of integers >= 0; {value!r} is not")
        guides.append((subsystem, tuple(values)))
    return tuple(guides)
