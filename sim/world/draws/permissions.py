"""The ``unauthorised`` fault: someone without permission tries to control a session (DEL-17).

When the fault strikes a drawn child, one session-control action (spawn, abort, history, status,
archive read or cleanup) is tried in its requester session, sometime during or after its run, by
a caller that holds no permission there: most often the turn started by that child's own
completion report (the report must not carry the permission of the person who spawned the
child), else a stranger. The session must refuse and record it. On the fault's own stream.
"""

from __future__ import annotations

import attrs

from actors.messages import (
    AbortChild,
    ChildSpec,
    CleanupSession,
    HistoryRead,
    RunHistoryRead,
    Spawn,
    StatusRead,
)
from actors.permissions import Caller
from sim.choices import Chooser

SUB = "fault:unauthorised"
STRANGER = "mallory"
REPORT_SHARE = 0.6
Control = Spawn | AbortChild | HistoryRead | StatusRead | CleanupSession | RunHistoryRead


def draw_attempt(chooser: Chooser, child: ChildSpec) -> tuple[int, Control]:
    """When (virtual ms) and what the unauthorised attempt around ``child`` is."""
    caller = Caller(None, child.id) if chooser.chance(SUB, REPORT_SHARE) else Caller(STRANGER)
    at_ms = child.spawn_at_ms + 1000 * (1 + chooser.choose(SUB, child.run_ms // 1000 + 120))
    kind = chooser.choose(SUB, 6)
    message: Control
    if kind == 0:
        # Another child, asked for in the requester's session by the caller.
        message = Spawn(attrs.evolve(child, id=f"{child.id}-u", session=None, parent=None,
                                     spawn_at_ms=at_ms, caller=caller))
    elif kind == 1:
        message = AbortChild(child.id)
    elif kind == 2:
        message = HistoryRead(child.id)
    elif kind == 3:
        message = StatusRead(child.id)
    elif kind == 4:
        message = RunHistoryRead(child.id)
    else:
        message = CleanupSession(child.id)
    return at_ms, attrs.evolve(message, caller=caller)
