"""Which runs' results each settle wake a requester took carried (a yield batch's, YLD-2, or an
unfrozen wave's, which takes the same receipt rule), as an outsider reads them: the runs the
wake's key names (``announce:requester-settle:...:<run,run>[:yield-<g>]``) whose
child session has a section in the wake's findings (``session_key: ...``; runs sharing a retained
child session told apart by the section's task line, the spawn request's task), and when the batch's
first wake went out (its findings were rendered then, and a retry or replay sends the same
text). Read by the DEL-16 give-up reading (``sim/invariants/delivery/redrive.py``: a suspended
member such a wake carried is released) and by ``wake-releases-suspended``; neither owns it.
"""

from __future__ import annotations

import re
from typing import ClassVar

import attrs

from sim.invariants.observations import is_wake, key_runs
from sim.trace import Record

_SECTION = re.compile(r"^\d+\. (.*)\nsession_key: (.*)\nstatus: ", re.M)
_RETRY = re.compile(r":retry-\d+$")


def batch_of(key: str) -> str:
    """A wake key without its ``:retry-n``: the same batch's every attempt shares it."""
    return _RETRY.sub("", key)


@attrs.define
class WakeTakes:
    """Fed spawns, gateway sends and requester takes in trace order (:attr:`KINDS`)."""

    session_of: dict[str, str] = attrs.field(factory=dict)  # run -> its child session key
    task_of: dict[str, str] = attrs.field(factory=dict)  # run -> its task line, as spawned
    first_sent: dict[str, int] = attrs.field(factory=dict)  # batch -> its first wake's send
    KINDS: ClassVar[tuple[str, ...]] = ("spawn", "gateway.send", "requester.accept")

    def see(self, r: Record) -> tuple[str, ...]:
        """The runs whose results ``r`` (a settle wake's take) carried; () for anything else. A
        session key the wake names for more than one run (runs in one retained session) is
        told apart by the section's task line; when that is shared too, the run is left out
        (which run a section is cannot be told)."""
        kind = r.kind
        if kind == "spawn":
            self.session_of[r.data["run_id"]] = r.data["child_session_key"]
            # The task line folds whitespace to single spaces (reference §c5, §c16); a task the
            # line shortens or neutralises matches no section, and its run is left out.
            self.task_of[r.data["run_id"]] = " ".join(str(r.data.get("task") or "").split())
        elif kind == "gateway.send" and is_wake(r.data["key"]):
            self.first_sent.setdefault(batch_of(r.data["key"]), r.t_ms)
        elif kind == "requester.accept" and is_wake(r.data["key"]):
            runs = [run for run in key_runs(r.data["key"]) if run in self.session_of]
            keys = [self.session_of[run] for run in runs]
            named = [(self.task_of[run], self.session_of[run]) for run in runs]
            sections = _SECTION.findall(r.data["text"])
            shown = {key for _, key in sections}
            return tuple(run for run in runs if (
                self.session_of[run] in shown if keys.count(self.session_of[run]) == 1
                else named.count((self.task_of[run], self.session_of[run])) == 1
                and (self.task_of[run], self.session_of[run]) in sections))
        return ()

    def rendered_at(self, take: Record) -> int:
        """When the findings ``take`` carried were rendered: its batch's first wake send."""
        return self.first_sent.get(batch_of(take.data["key"]), take.t_ms)
