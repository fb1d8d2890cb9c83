"""A requester session's turns and lifecycle: which turn is open, which incarnation the session is
in, and which children each turn spawned. Pure (no IO, clock or randomness).

A requester session runs one turn at a time. A turn spawns children (each records the turn and the
session incarnation that spawned it: OpenClaw's ``requesterTurnRunId`` and the requester's
session id / lifecycle revision, reference §a), may check a child's status, and ends either
normally (``finish``) or by calling ``sessions_yield`` (``yield``): the turn then waits, paused,
for its batch's wake (reference §c9). ``/new`` (a reset) starts a new incarnation of the session:
an open or yielded turn of the old one is abandoned. A delete removes the session entry; the key
may be used again later, as a new incarnation.

Reply modes (reference §c9 flags): in ``auto`` mode the requester's final text is its visible
reply; with ``visibleReplies: "message_tool"`` only a message-tool call is visible, so a turn that
forgets to call it leaves the user without a visible reply.
"""

from __future__ import annotations

import enum

import attrs


class ReplyMode(enum.StrEnum):
    AUTO = "auto"
    MESSAGE_TOOL = "message_tool"


class TurnState(enum.StrEnum):
    OPEN = "open"
    YIELDED = "yielded"  # paused by sessions_yield until its batch's wake
    FINISHED = "finished"
    ABANDONED = "abandoned"  # the session was reset or deleted under it


class TurnEnd(enum.StrEnum):
    FINISH = "finish"
    YIELD = "yield"


def turn_run_id(session_key: str, turn: str, incarnation: int) -> str:
    """The requester turn's run id as a child's record keeps it (``requesterTurnRunId``)."""
    return f"turn:{session_key}:{incarnation}:{turn}"


@attrs.define
class Turn:
    id: str
    run_id: str
    incarnation: int
    state: TurnState = TurnState.OPEN
    children: list[str] = attrs.field(factory=list)  # run ids, in spawn order
    checked: list[str] = attrs.field(factory=list)  # run ids whose status it read


@attrs.frozen
class Binding:
    """What a spawn records about the turn that asked for it."""

    turn_run_id: str | None
    incarnation: int


@attrs.define
class TurnCore:
    session_key: str
    reply_mode: ReplyMode = ReplyMode.AUTO
    incarnation: int = 1
    deleted: bool = False
    open_turn: Turn | None = None
    turns: dict[str, Turn] = attrs.field(factory=dict)  # by turn run id

    def start(self, turn: str) -> Turn:
        """A new turn opens (a message from the user). A deleted session's key comes back as a
        new session entry."""
        if self.open_turn is not None:
            # One turn at a time: a turn still open when the next starts has finished.
            self.open_turn.state = TurnState.FINISHED
        self.deleted = False
        opened = Turn(turn, turn_run_id(self.session_key, turn, self.incarnation),
                      self.incarnation)
        self.turns[opened.run_id] = self.open_turn = opened
        return opened

    def bind(self, turn: str | None, run_id: str) -> Binding:
        """A child run spawned by ``turn`` (None: outside any turn, as a nested child's parent
        run spawns it) is bound to that turn, if it is the open one, and to this incarnation."""
        opened = self.open_turn
        if turn is not None and opened is not None and opened.id == turn:
            opened.children.append(run_id)
            return Binding(opened.run_id, self.incarnation)
        return Binding(None, self.incarnation)

    def check_status(self, run_id: str) -> Turn | None:
        """The open turn reads a child's status (it consumes nothing)."""
        if self.open_turn is not None:
            self.open_turn.checked.append(run_id)
        return self.open_turn

    def end(self, turn: str, how: TurnEnd) -> Turn | None:
        """The open turn ends; None when ``turn`` is not the open one (reset meanwhile)."""
        opened = self.open_turn
        if opened is None or opened.id != turn:
            return None
        opened.state = TurnState.YIELDED if how is TurnEnd.YIELD else TurnState.FINISHED
        self.open_turn = None
        return opened

    def reset(self, delete: bool = False) -> list[Turn]:
        """``/new`` (or a delete): a new incarnation; the open and the yielded turns of the old
        one are abandoned (returned)."""
        abandoned = [t for t in self.turns.values()
                     if t.incarnation == self.incarnation
                     and t.state in (TurnState.OPEN, TurnState.YIELDED)]
        for turn in abandoned:
            turn.state = TurnState.ABANDONED
        self.open_turn = None
        self.incarnation += 1
        self.deleted = delete
        return abandoned

    def yielded(self, turn_run_id: str) -> bool:
        """Whether that turn is still paused in this incarnation, waiting for its wake."""
        turn = self.turns.get(turn_run_id)
        return turn is not None and turn.state is TurnState.YIELDED

    def resume(self, turn_run_id: str) -> Turn | None:
        """The wake resumes a yielded turn: it finishes (its reply is the consolidated one)."""
        turn = self.turns.get(turn_run_id)
        if turn is None or turn.state is not TurnState.YIELDED:
            return None
        turn.state = TurnState.FINISHED
        return turn
