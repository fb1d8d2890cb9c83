"""Who may control a session's children: the DEL-17 check. Pure.

Session control (spawn, abort, history, status, cleanup, archive reads) needs the *current
caller's own* permission. The caller of a turn is the person whose message started it; a turn
started by a child's completion report has no person behind it, and the report never carries the
permission of the person who spawned that child (seed 002: "完成报告不会转让原始人员的权限").
An unauthorised action is refused and recorded; authorised cleanup stays with the original
requester turn.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import attrs

from actors.mutants import MUTANT_SPAWNER_PERMISSION

REPORT_PREFIX = "report:"
# The person a session's control belongs to when a scenario names no owners.
DEFAULT_OWNER = "owner"


@attrs.frozen
class Caller:
    """Who asks: a ``person`` (a user message's sender), or the turn of child ``report``'s
    completion report (no person)."""

    person: str | None = DEFAULT_OWNER
    report: str | None = None

    @classmethod
    def parse(cls, text: str) -> Caller:
        """``"alice"`` (a person) or ``"report:c1"`` (the turn of c1's completion report)."""
        if text.startswith(REPORT_PREFIX):
            return cls(None, text.removeprefix(REPORT_PREFIX))
        return cls(text)

    def __str__(self) -> str:
        return f"{REPORT_PREFIX}{self.report}" if self.person is None else self.person


# The default caller: the session's owner (when a scenario names no owners).
OWNER = Caller()


def refusal(caller: Caller, action: str, owners: Collection[str],
            spawners: Mapping[str, Caller], mutants: Collection[str] = ()) -> str | None:
    """``None`` when ``caller`` may perform ``action`` on this session, else the refusal the
    session records. ``spawners``: who spawned each child (what the mutant wrongly consults)."""
    person = caller.person
    report = caller.report
    if (person is None and report is not None and report in spawners
            and MUTANT_SPAWNER_PERMISSION in mutants):
        person = spawners[report].person
    if person is None:
        return (f"forbidden: {action} needs the current caller's own permission; the completion "
                f"report of {caller.report} carries none")
    if person not in owners:
        return f"forbidden: {person} may not {action} in this session"
    return None
