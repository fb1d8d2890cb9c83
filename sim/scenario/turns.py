"""A scenario's requester turns (``[[turns]]``) and session lifecycle events (``[[lifecycle]]``).

A turn belongs to one session, opens at ``start`` and ends at ``end`` by finishing normally or by
``sessions_yield``; a turn with no ``end`` stays open. Its children name it (``turn = "t1"``) and
are spawned by it, at a time within it; ``[[turns.checks]]`` are status checks it makes. A
lifecycle event resets (``/new``) or deletes a session at ``at``. Checked at load time.
"""

from __future__ import annotations

import attrs

from actors.inputs import Node
from actors.messages import ChildSpec
from actors.yields.turns import TurnEnd

LIFECYCLE_EVENTS = ("reset", "delete")
MAX_TURNS = 10_000
MAX_LIFECYCLE = 10_000


@attrs.frozen
class StatusCheckDef:
    child: str
    at_ms: int


@attrs.frozen
class TurnDef:
    id: str
    session: str
    start_ms: int
    end_ms: int | None  # None: still open when the world stops
    ends: TurnEnd
    checks: tuple[StatusCheckDef, ...] = ()


@attrs.frozen
class LifecycleDef:
    at_ms: int
    session: str
    event: str  # reset | delete


def turns(root: Node, session_keys: list[str], max_time_s: int) -> tuple[TurnDef, ...]:
    found: list[TurnDef] = []
    tables = root.nodes("turns")
    if len(tables) > MAX_TURNS:
        raise root.fail("turns", f"must hold at most {MAX_TURNS:,} entries (the limit)")
    for table in tables:
        table.check_keys(("id", "session", "start", "end", "ends", "checks"))
        turn_id = table.text("id")
        if any(t.id == turn_id for t in found):
            raise table.fail("id", f"turn {turn_id!r} is defined twice")
        session = table.text("session", session_keys[0])
        if session not in session_keys:
            raise table.fail("session", f"{session!r} is not one of the [[sessions]]")
        start = table.seconds("start", 0, maximum=max_time_s)
        end = table.seconds("end", None, maximum=max_time_s)
        if end is not None and end <= start:
            raise table.fail("end", "must come after the turn's start")
        ends = TurnEnd(table.text("ends", "finish", choices=tuple(TurnEnd)))
        if table.has("ends") and end is None:
            raise table.fail("ends", "needs an end (a turn without one stays open)")
        for other in found:
            if other.session == session and _overlap(other, start, end):
                raise table.fail("start", f"overlaps turn {other.id!r} of the same session "
                                 "(a session runs one turn at a time)")
        checks = []
        for check in table.nodes("checks"):
            check.check_keys(("child", "at"))
            at = check.seconds("at", maximum=max_time_s)
            if at < start or (end is not None and at >= end):
                raise check.fail("at", "a status check happens while its turn is open")
            checks.append(StatusCheckDef(check.text("child"), at))
        found.append(TurnDef(turn_id, session, start, end, ends, tuple(checks)))
    return tuple(found)


def _overlap(turn: TurnDef, start: int, end: int | None) -> bool:
    far = 2**62
    return start < (turn.end_ms if turn.end_ms is not None else far) and \
        turn.start_ms < (end if end is not None else far)


def check_children(root: Node, turns_: tuple[TurnDef, ...],
                   children: tuple[ChildSpec, ...]) -> None:
    """Each child naming a turn is a top-level child of that turn's session, spawned within it;
    each status check names a child."""
    by_id = {t.id: t for t in turns_}
    tables = root.nodes("children")
    for table, child in zip(tables, children, strict=False):
        if child.turn is None:
            continue
        turn = by_id.get(child.turn)
        if turn is None:
            raise table.fail("turn", f"{child.turn!r} is not one of the [[turns]]")
        if child.parent is not None:
            raise table.fail("turn", "a nested child is spawned by its parent run, not a turn")
        if child.requester != turn.session:
            raise table.fail("turn", f"turn {turn.id!r} belongs to {turn.session!r}, not to "
                             f"the child's requester {child.requester!r}")
        if child.spawn_at_ms < turn.start_ms or (
                turn.end_ms is not None and child.spawn_at_ms >= turn.end_ms):
            raise table.fail("spawn_at", f"a child of turn {turn.id!r} is spawned while the "
                             "turn is open")
    ids = {c.id for c in children}
    for table, turn in zip(root.nodes("turns"), turns_, strict=False):
        for check_table, check in zip(table.nodes("checks"), turn.checks, strict=False):
            if check.child not in ids:
                raise check_table.fail("child", f"{check.child!r} is not one of the [[children]]")


def lifecycle(root: Node, session_keys: list[str], max_time_s: int) -> tuple[LifecycleDef, ...]:
    found: list[LifecycleDef] = []
    tables = root.nodes("lifecycle")
    if len(tables) > MAX_LIFECYCLE:
        raise root.fail("lifecycle", f"must hold at most {MAX_LIFECYCLE:,} entries (the limit)")
    for table in tables:
        table.check_keys(("at", "session", "event"))
        session = table.text("session", session_keys[0])
        if session not in session_keys:
            raise table.fail("session", f"{session!r} is not one of the [[sessions]]")
        found.append(LifecycleDef(table.seconds("at", maximum=max_time_s), session,
                                  table.text("event", choices=LIFECYCLE_EVENTS)))
    return tuple(found)
