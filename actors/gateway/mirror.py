"""Transcript mirrors of direct deliveries (DEL-8): the gateway's per-session lanes. Pure.

Seed 002: a direct child-result delivery records its transcript mirror after the work already
queued on the requester session; the send completes without waiting for that append (so a
requester waiting on its children resumes), and after a successful send the mirror is still
recorded, best effort.

A requester session's lane holds, in order, the inputs the gateway handed it that the session has
not yet confirmed, and the mirrors waiting behind them. When the session confirms a direct
(channel) delivery, the gateway answers the delivery actor at once and queues the mirror of the
text the channel received at the end of the lane; a mirror is appended when nothing queued
before it is still open. An input the session never confirms leaves the lane after the 120 s
announce timeout (the lane does not wait forever on a lost answer). A mirror that fails is
dropped: the delivery it mirrors stays delivered.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Mirror:
    """A mirror due on ``session``: the text its channel received for ``key``."""

    session: str
    run_id: str
    key: str
    text: str
    waited: bool  # it was queued behind open work
    held_ack: object = None  # the known bug (a mutant) holds the send's answer until now


@attrs.frozen
class LaneTimeout:
    """Timer payload: the input ``key`` on ``session`` gets no more waiting than this."""

    session: str
    key: str


@attrs.define
class SessionLanes:
    _lanes: dict[str, list[str | Mirror]] = attrs.field(factory=dict)
    _session_of: dict[str, str] = attrs.field(factory=dict)

    def input_sent(self, session: str, key: str) -> None:
        self._lanes.setdefault(session, []).append(key)
        self._session_of[key] = session

    def session_of(self, key: str) -> str | None:
        return self._session_of.get(key)

    def input_done(self, session: str, key: str) -> list[Mirror]:
        """The session confirmed ``key`` (every resend of it too): the mirrors now due."""
        lane = self._lanes.get(session)
        if lane is None or key not in lane:
            return []
        lane[:] = [item for item in lane if item != key]
        return self._drain(session)

    def holds(self, session: str, key: str) -> bool:
        """Whether ``key`` still holds ``session``'s lane (its timeout has something to expire)."""
        lane = self._lanes.get(session)
        return lane is not None and key in lane

    def input_expired(self, session: str, key: str) -> list[Mirror]:
        """One hand-off of ``key`` waited out its time (a later resend keeps its own)."""
        lane = self._lanes.get(session)
        if lane is None or key not in lane:
            return []
        lane.remove(key)
        return self._drain(session)

    def mirror(self, session: str, run_id: str, key: str, text: str,
               held_ack: object = None) -> list[Mirror]:
        lane = self._lanes.setdefault(session, [])
        lane.append(Mirror(session, run_id, key, text, waited=bool(lane), held_ack=held_ack))
        return self._drain(session)

    def _drain(self, session: str) -> list[Mirror]:
        lane = self._lanes.get(session, [])
        due: list[Mirror] = []
        while lane and isinstance(lane[0], Mirror):
            item = lane.pop(0)
            assert isinstance(item, Mirror)
            due.append(item)
        if not lane:
            self._lanes.pop(session, None)
        return due
