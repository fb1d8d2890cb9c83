"""Requester turns in the world: the harness plays each requester's model (it opens turns, spawns
children, checks their status, yields or finishes, resets or deletes the session) and records what
it asked; the default world draws the turns from the seed.

Everything a session is asked at one instant goes to it as one ``SessionActs`` message, in a fixed
order (a turn's end, a reset, the next turn's start, its spawns, its status checks), so the
scheduler's tie-breaking cannot make a spawn arrive before the turn that asks for it. Once a reset
abandoned a turn, the harness asks nothing more of it (the turn is gone; OpenClaw aborts it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from actors import addresses
from actors.messages import (
    CheckStatus,
    ChildSpec,
    EndTurn,
    ResetSession,
    SessionActs,
    Spawn,
    StartTurn,
    StepSpec,
)
from actors.yields.turns import TurnEnd
from sim.choices import Chooser
from sim.kernel import Kernel
from sim.scenario.turns import LifecycleDef, StatusCheckDef, TurnDef
from sim.world.aims import floor_aim

Act = StartTurn | Spawn | CheckStatus | EndTurn | ResetSession
Emit = Callable[[str, dict[str, Any]], None]
_RANK = {EndTurn: 0, ResetSession: 1, StartTurn: 2, Spawn: 3, CheckStatus: 4}


def session_acts(session: str, turns: Sequence[TurnDef], lifecycle: Sequence[LifecycleDef],
                 children: Sequence[ChildSpec]) -> dict[int, list[tuple[Act, str | None]]]:
    """Time -> what ``session`` is asked then, in order, each with the turn asking (None: no
    turn: a reset, or a child spawned outside any turn)."""
    timed: list[tuple[int, int, int, Act, str | None]] = []

    def add(at_ms: int, act: Act, turn: str | None) -> None:
        timed.append((at_ms, _RANK[type(act)], len(timed), act, turn))

    for turn in turns:
        if turn.session != session:
            continue
        add(turn.start_ms, StartTurn(turn.id), turn.id)
        for check in turn.checks:
            add(check.at_ms, CheckStatus(check.child), turn.id)
        if turn.end_ms is not None:
            add(turn.end_ms, EndTurn(turn.id, turn.ends.value), turn.id)
    for event in lifecycle:
        if event.session == session:
            add(event.at_ms, ResetSession(delete=event.event == "delete"), None)
    for child in children:
        if child.requester == session and child.parent is None:
            add(child.spawn_at_ms, Spawn(child), child.turn)
    by_time: dict[int, list[tuple[Act, str | None]]] = {}
    for at_ms, _, _, act, asking in sorted(timed, key=lambda t: t[:3]):
        by_time.setdefault(at_ms, []).append((act, asking))
    return by_time


@attrs.define
class SessionDriver:
    """The harness's side of one requester session: its incarnation and open turn as the
    harness asked for them, so that what it records is what it asked."""

    session: str
    incarnation: int = 1
    open_turn: str | None = None

    def ask(self, acts: list[tuple[Act, str | None]], emit: Emit,
            spawn_request: Callable[[ChildSpec, str | None, int], Spawn],
            drop: Callable[[ChildSpec], None] = lambda child: None) -> SessionActs | None:
        sent: list[Act] = []
        for act, turn in acts:
            if turn is not None and not isinstance(act, StartTurn) and turn != self.open_turn:
                if isinstance(act, Spawn):
                    drop(act.child)  # never spawned: nor are the children it would have spawned
                continue  # its turn was abandoned by a reset: it asks for nothing more
            if isinstance(act, StartTurn):
                self.open_turn = act.turn
                emit("world.turn", {"session": self.session, "turn": act.turn,
                                    "incarnation": self.incarnation})
            elif isinstance(act, Spawn):
                # Numbered and recorded as asked now; sent with the other acts.
                sent.append(spawn_request(act.child, turn, self.incarnation))
                continue
            elif isinstance(act, CheckStatus):
                emit("world.status_check", {"session": self.session, "turn": self.open_turn,
                                            "child": act.child_id})
            elif isinstance(act, EndTurn):
                self.open_turn = None
                emit("world.turn_end", {"session": self.session, "turn": act.turn,
                                        "how": act.how, "incarnation": self.incarnation})
            else:
                self.incarnation += 1
                self.open_turn = None
                emit("world.lifecycle", {"session": self.session,
                                         "event": "delete" if act.delete else "reset",
                                         "incarnation": self.incarnation})
            sent.append(act)
        return SessionActs(tuple(sent)) if sent else None


def schedule(kernel: Kernel, sessions: Sequence[str], turns: Sequence[TurnDef],
             lifecycle: Sequence[LifecycleDef], children: Sequence[ChildSpec],
             spawn_request: Callable[[ChildSpec, str | None, int], Spawn],
             drop: Callable[[ChildSpec], None] = lambda child: None,
             drivers: dict[str, SessionDriver] | None = None) -> None:
    """Put every top-level session's acts on the harness's agenda (``drivers``: filled with
    each session's driver, whose incarnation a steer's replacement is asked in)."""
    def emit(kind: str, data: dict[str, Any]) -> None:
        kernel.emit(addresses.HARNESS, kind, data)

    def ask(driver: SessionDriver, acts: list[tuple[Act, str | None]]) -> None:
        message = driver.ask(acts, emit, spawn_request, drop)
        if message is not None:
            kernel.send(addresses.TIMELINE, addresses.requester(driver.session), message)

    for key in sessions:
        driver = SessionDriver(key)
        if drivers is not None:
            drivers[key] = driver
        for at_ms, acts in session_acts(key, turns, lifecycle, children).items():
            kernel.at(at_ms, f"session {key}", functools.partial(ask, driver, acts))


def finish_open_turns(kernel: Kernel, at_ms: int, drivers: dict[str, SessionDriver],
                      spawn_request: Callable[[ChildSpec, str | None, int], Spawn]) -> None:
    """At ``at_ms``, the harness finishes every top-level turn still open (its model replies).
    A world that runs days past its own length (a redrive drawn a week after a child's end)
    does so only from then on: a turn left open forever keeps a yielded batch's wake refused
    every 30 s (reference §c17) for as long as the world runs, and never lets it quiesce."""
    def emit(kind: str, data: dict[str, Any]) -> None:
        kernel.emit(addresses.HARNESS, kind, data)

    def finish() -> None:
        for driver in drivers.values():  # (insertion order: the sessions' order)
            if driver.open_turn is None:
                continue
            message = driver.ask([(EndTurn(driver.open_turn, TurnEnd.FINISH.value),
                                   driver.open_turn)], emit, spawn_request)
            if message is not None:
                kernel.send(addresses.TIMELINE, addresses.requester(driver.session), message)

    kernel.at(at_ms, "finish open turns", finish)


# -- the default world's draws -----------------------------------------------------------------

_SUB = "workload:turns"
# A gap between spawns this long (or longer) may separate two turns.
MIN_TURN_GAP_MS = 2000
# A requester's turn is an agent run, and the released OpenClaw cuts an agent run off after
# ``DEFAULT_AGENT_TIMEOUT_SECONDS`` (172,800 s, 48 h): no drawn turn outlasts it. A world of
# weeks would otherwise hold one turn open for all of them, and a batch wake its session refuses
# as busy goes again every 30 s as long as the turn lasts (reference §c17). The default world
# (6 h) never reaches it.
AGENT_TIMEOUT_MS = 172_800_000
# A turn starts at most this long before its first spawn (see ``draw``: 500 ms x 0..2).
_LEAD_MS = 1000


def draw(chooser: Chooser, session: str, children: Sequence[ChildSpec], run_max_ms: int,
         until_ms: int = 0
         ) -> tuple[list[ChildSpec], tuple[TurnDef, ...], tuple[LifecycleDef, ...]]:
    """Group the session's top-level children into turns (each turn's spawns within it), draw
    how each turn ends (yield, finish, or still open) and when, status checks, and resets or a
    delete. Returns the children bound to their turns. One seed in ten runs no turns at all
    (children spawned outside any turn), which is also what a shrunk run falls back to.

    No turn outlasts the agent timeout (``AGENT_TIMEOUT_MS``): spawns further apart start a new
    turn, and a turn drawn to end later (or to stay open in a world of ``until_ms`` that runs
    past it) ends at it, finished (a timed-out run yields nothing)."""
    if not chooser.chance(_SUB, 0.9):
        return list(children), (), ()
    own = sorted((i for i, c in enumerate(children)
                  if c.requester == session and c.parent is None),
                 key=lambda i: (children[i].spawn_at_ms, i))
    groups: list[list[ChildSpec]] = []
    indexes: list[list[int]] = []
    for i in own:
        child = children[i]
        if groups and child.spawn_at_ms - groups[-1][0].spawn_at_ms < AGENT_TIMEOUT_MS - _LEAD_MS \
                and (child.spawn_at_ms - groups[-1][-1].spawn_at_ms < MIN_TURN_GAP_MS
                     or len(groups) >= 4 or not chooser.chance(_SUB, 0.3)):
            groups[-1].append(child)
            indexes[-1].append(i)
        else:
            groups.append([child])
            indexes.append([i])
    turns: list[TurnDef] = []
    bound: dict[int, str] = {}
    previous_end = -1
    for n, group in enumerate(groups):
        turn_id = f"t{n + 1}"
        first, last = group[0].spawn_at_ms, group[-1].spawn_at_ms
        start = max(previous_end, first - 500 * chooser.choose(_SUB, 3), 0)
        start = min(start, first)
        next_first = groups[n + 1][0].spawn_at_ms if n + 1 < len(groups) else None
        roll = chooser.choose(_SUB, 20)
        ends = TurnEnd.YIELD if roll < 11 else TurnEnd.FINISH
        if next_first is None:
            # The last turn may yield long after its spawns (after some children ended, some
            # delivered), or stay open.
            room = run_max_ms + 60_000
            end: int | None = last + 1 + 1000 * chooser.choose(_SUB, room // 1000)
            if roll >= 18:
                end = None
        else:
            end = last + 1 + chooser.choose(_SUB, max(1, next_first - last - 1))
        if end is not None and end <= start:
            end = start + 1
        timeout = start + AGENT_TIMEOUT_MS
        if (end is None and timeout <= until_ms) or (end is not None and end > timeout):
            end, ends = timeout, TurnEnd.FINISH
        checks = []
        if chooser.chance(_SUB, 0.2):
            child = group[chooser.choose(_SUB, len(group))]
            limit = end if end is not None else child.spawn_at_ms + run_max_ms
            at = child.spawn_at_ms + chooser.choose(_SUB, max(1, limit - child.spawn_at_ms))
            checks.append(StatusCheckDef(child.id, at))
        turns.append(TurnDef(turn_id, session, start, end, ends if end is not None
                             else TurnEnd.FINISH, tuple(checks)))
        for i in indexes[n]:
            bound[i] = turn_id
        previous_end = end if end is not None else 2**62
    lifecycle: list[LifecycleDef] = []
    if chooser.chance(_SUB, 0.1):
        event = "delete" if chooser.chance(_SUB, 0.25) else "reset"
        at = 1000 * chooser.choose(_SUB, 900)
        yields = [t for t in turns if t.ends is TurnEnd.YIELD and t.end_ms is not None]
        if yields and chooser.chance(_SUB, 0.5):
            # Aimed: shortly after a yield (while its children run), or shortly after its
            # children should have ended (while its wake may travel).
            turn = yields[chooser.choose(_SUB, len(yields))]
            at = turn.end_ms or 0
            if chooser.chance(_SUB, 0.5):
                at = max([at] + [c.spawn_at_ms + c.run_ms for i, c in enumerate(children)
                                 if bound.get(i) == turn.id])
            at += 1000 * chooser.choose(_SUB, 120)
        lifecycle.append(LifecycleDef(at, session, event))
    bound_children = [attrs.evolve(c, turn=bound[i]) if i in bound else c
                      for i, c in enumerate(children)]
    bound_children = _route_changes(chooser, bound_children)
    yields = [t for t in turns if t.ends is TurnEnd.YIELD and t.end_ms is not None]
    if yields and turns[-1].end_ms is not None and chooser.chance("workload:wide", WIDE_SHARE):
        after = max([turns[-1].end_ms] + [c.spawn_at_ms + c.run_ms for c in children])
        wide_turn, wide = _wide_batch(chooser, session, f"t{len(turns) + 1}", after + 1000)
        turns.append(wide_turn)
        bound_children += wide
    return bound_children, tuple(turns), tuple(lifecycle)


# Model-route notices (reference §c9): some runs report one, some long, so that a batch's
# notices reach the 1,024-character cap. On their own stream.
ROUTE_SHARE = 0.15
ROUTE_REASON = "fallback after a rate limit; "


def _route_changes(chooser: Chooser, children: list[ChildSpec]) -> list[ChildSpec]:
    out = []
    for child in children:
        if child.parent is None and chooser.chance("workload:routes", ROUTE_SHARE):
            reasons = ROUTE_REASON * (1 + chooser.choose("workload:routes", 40))
            child = attrs.evolve(child, route_change=(
                f"model route changed for {child.id}: openai/gpt-5 -> anthropic/claude-sonnet; "
                f"{reasons.strip()}"))
        out.append(child)
    return out


# A rare wide batch: so many long answers in one yield that the wake's findings reach the shared
# 160,000-character cap, its floor and its summary line (FMT-2). Costly, so rare. Under the spawn
# limits (maxChildrenPerAgent, the lane) a session cannot have eighty children running at once,
# so the batch is a turn of its own after the session's other children should have ended,
# spawning one child a second, each done before the next; each is announced on its own, then
# corrects its answer after the yield while the last one still runs (DEL-12): the corrections
# are the batch's to deliver, so the wake carries all eighty.
WIDE_SHARE = 0.005
WIDE_CHILDREN = 80
WIDE_SPACING_MS = 1000
WIDE_LAST_AFTER_YIELD_MS = 45_000  # the last child ends this long after the yield
# The batch's size is a choice only a guide makes (sim/choices.py ``optional``): one per child,
# 1 to leave it out, so a free run always has eighty and the shrinker can drop any of them
# (each child's draws are a span labelled ``wide:<child>``; its id and times stay its own).
WIDE_DROP = "workload:wide:drop"
WIDE_SPAN = "wide:"


def _wide_batch(chooser: Chooser, session: str, turn_id: str, start_ms: int
                ) -> tuple[TurnDef, list[ChildSpec]]:
    sub = "workload:wide"
    yield_ms = start_ms + WIDE_CHILDREN * WIDE_SPACING_MS + 1000 * chooser.choose(sub, 60)
    wide = []
    for n in range(WIDE_CHILDREN):
        child_id = f"w{n + 1}"
        with chooser.span(f"{WIDE_SPAN}{child_id}"):
            chars = 2_000 + 100 * chooser.choose(sub, 30)
            spawn_ms = start_ms + n * WIDE_SPACING_MS
            run_ms = 100 * (1 + chooser.choose(sub, 8))
            last = n == WIDE_CHILDREN - 1
            if last:
                run_ms = yield_ms - spawn_ms + WIDE_LAST_AFTER_YIELD_MS
            correction = None if last else (
                yield_ms - spawn_ms - run_ms + 1000 * (1 + chooser.choose(sub, 20)))
        if chooser.optional(WIDE_DROP, 2):
            continue  # its draws are made all the same, so the others' stay where they were
        text = "".join(f"Row {i:05d}: finding < limit & ok.\n" for i in range(chars // 32 + 1))
        wide.append(ChildSpec(child_id, session, f"wide task {n + 1}", spawn_ms,
                              (StepSpec(run_ms, text=text[:chars]),), turn=turn_id,
                              correction_after_ms=correction))
    # Its tasks padded so that the wake's floor-sized heads land on the cap (issue 36).
    return (TurnDef(turn_id, session, start_ms, yield_ms, TurnEnd.YIELD, ()),
            floor_aim(chooser, session, wide))
