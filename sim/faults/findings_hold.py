"""An aimed fault (DEL-6 x DEL-12): a parent's announcement, its findings already rendered and
handed to the gateway, is held there until its nested child corrects its answer; then the
delivery process dies, and the restarted process must resend the findings as first rendered
under the key it already handed over (a registry that renders them again shows the correction
there: the ``findings-rerendered`` mutant).

Reaching that order by drawn instants missed nearly always (docs/oracles.md): a child's spawn,
end and correction, and the parent's first hand-off, move with the lane, the session queue and
the seeded crashes, so a refusal count and a crash instant drawn beforehand seldom fell between
the parent's first rendering and its next send. So the hold reacts to what happens: the world
aims it when it draws a nested child that corrects its answer (sim/world/draws/receipts.py); the
plan (sim/faults/plan.py) asks it at each of the parent's sends, and tells it of each end or
later receipt of an aimed child on its way to the delivery process.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from actors.records.run_record import RunRecord
from actors.states import OutcomeStatus

# How many of the parent's sends a hold refuses at most: a refused send backs off 15 s, 30 s,
# 60 s, 120 s, 240 s, then 300 s (actors/records/retry.py), so seven span 1,065 s, past the
# latest aimed correction (690 s after the child's end: 90 s drawn, 600 s more aimed,
# sim/world/draws/receipts.py).
HELD_SENDS = 7


@attrs.define
class FindingsHold:
    # An aimed child -> its parent (child ids), and how many of its completion notices (its end,
    # then each later receipt) went to the delivery process.
    _parent: dict[str, str] = attrs.field(factory=dict)
    _notices: dict[str, int] = attrs.field(factory=dict)
    # A parent -> its aimed children that ended and have not corrected yet.
    _waiting: dict[str, list[str]] = attrs.field(factory=dict)
    # A parent -> how many of its sends were refused.
    _refused: dict[str, int] = attrs.field(factory=dict)

    def aim(self, parent: str, child: str) -> None:
        self._parent[child] = parent

    def holds(self, parent: str | None) -> bool:
        """Is this send of ``parent``'s refused: one of its aimed children ended, its
        correction is still to come, and the hold has sends left."""
        if parent is None or not self._waiting.get(parent):
            return False
        refused = self._refused.get(parent, 0)
        if refused >= HELD_SENDS:
            return False
        self._refused[parent] = refused + 1
        return True

    def notice(self, child: str | None, answered: Callable[[], bool]) -> bool:
        """An aimed child's completion notice is on its way to the delivery process: its end
        (the parent now waits for its correction, if it ``answered``: a producer corrects only
        an ok run's visible answer), or a later receipt. True when the delivery process should
        die now: the correction came after the parent handed over its findings (a held
        send)."""
        parent = None if child is None else self._parent.get(child)
        if child is None or parent is None:
            return False
        seen = self._notices[child] = self._notices.get(child, 0) + 1
        waiting = self._waiting.setdefault(parent, [])
        if seen == 1:
            if answered():
                waiting.append(child)
            return False
        if child not in waiting:
            return False  # a receipt after the first correction: the hold is done with it
        waiting.remove(child)
        return self._refused.get(parent, 0) > 0


def answered(record: RunRecord) -> bool:
    """Whether an ended run answered: ok, with a visible answer (what its producer may correct
    later, actors/child/receipts.py)."""
    text = record.result_text
    return record.outcome_status is OutcomeStatus.OK and text is not None and \
        text.strip() not in ("", "NO_REPLY", "ANNOUNCE_SKIP")
