"""Whether a run's current delivery generation was given up, as an outsider can tell (DEL-10,
DEL-16): read by the DEL-16 oracles (``sim/invariants/delivery/redrive.py``) and by YLD-2's
``wake-releases-suspended`` (``sim/invariants/yields/released.py``); neither owns it. Fed spawns,
gateway sends, refusals and faults, requester takes, corrections, operator requests and crashes
(:attr:`GivenUp.KINDS`), never the registry's own give-up records.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from sim.invariants.observations import is_delivery_crash, rejection_class
from sim.invariants.private.completion import Release
from sim.invariants.settled import EXPIRY_MS
from sim.invariants.yields.carried import WakeTakes
from sim.trace import Record


@attrs.define
class GivenUp:
    """Whether a run's current generation was given up, as an outsider can tell: its latest key
    was never taken by its requester, and the gateway refused it for good or its expiry (30
    minutes from the receipt's end the send carries; a private result's from its release,
    PRV-7; a redriven generation's from the operator's request) passed. A restart of the
    delivery process since that key's first send hides it (the new process may count an
    unanswered send as landed, and a refusal that reached only the dead one was never heard):
    then nothing is said."""

    private: dict[str, Release]
    latest: dict[str, Record] = attrs.field(factory=dict)  # run -> its latest key's first send
    taken: set[str] = attrs.field(factory=set)
    refused: set[str] = attrs.field(factory=set)
    hidden: set[str] = attrs.field(factory=set)
    # Runs whose latest key's acknowledgement was lost, slowed or held up in transit on its way
    # back: the registry may not know its requester took it.
    unacked: set[str] = attrs.field(factory=set)
    # Runs whose latest key was taken only after the gateway refused it for good: a copy held
    # on its way (a delayed hand-off) landed once the registry's attempt was over (DEL-10), so
    # its acknowledgement answers nothing the registry still waits for and it may keep the run
    # given up (seeds 46523, 96349; the archive oracle's seed 19381 is the same case).
    late: set[str] = attrs.field(factory=set)
    redriven: dict[str, int] = attrs.field(factory=dict)  # run -> its latest redrive request
    # run -> when its refusal for good came, and when its producer last corrected it: a
    # correction in the refusal's very instant may reach the delivery actor first and reopen
    # it (a newer receipt, DEL-12), the refusal then answering the older generation (seed 15697).
    refused_at: dict[str, int] = attrs.field(factory=dict)
    corrected: dict[str, int] = attrs.field(factory=dict)
    window: dict[str, int] = attrs.field(factory=dict)  # run -> its latest key's window start
    down: bool = False
    # Runs given up whose result a settle wake their requester took carried since (YLD-2: the
    # batch's results count as delivered; reference §b, §c12 release the suspended row, a
    # wave's wake too), with that
    # take and why the run counted as given up then. Its generation is no longer given up: a
    # newer receipt opens the next one, a new delivery (DEL-12), which may be sent. Whether
    # the registry could tell the take landed (an acknowledgement lost, a restart) is
    # ``wake-releases-suspended``'s to judge: here such a run is only no longer judged.
    wakes: WakeTakes = attrs.field(factory=WakeTakes)
    released: dict[str, tuple[Record, str]] = attrs.field(factory=dict)
    # The kinds :meth:`see` reads: an oracle may feed it only these.
    KINDS: ClassVar[tuple[str, ...]] = ("delivery.start", "requester.accept", "requester.duplicate",
                                        "fault", "requester.gone", "gateway.refused", "crash",
                                        "world.operator", "child.correction", "spawn",
                                        "gateway.send")

    def see(self, r: Record) -> None:
        kind = r.kind
        for run_id in self.wakes.see(r):
            why = self.why(run_id, r.t_ms)
            if why is not None:
                self.released[run_id] = (r, why)
        if kind == "delivery.start":
            self.down = False
        if kind in ("requester.accept", "requester.duplicate") and self._latest(r):
            self.taken.add(r.data["run_id"])
            if r.data["run_id"] in self.refused:
                self.late.add(r.data["run_id"])
        elif rejection_class(r) in ("permanent", "sent") and self._latest(r) and not self.down:
            self.refused.add(r.data["run_id"])
            self.refused_at[r.data["run_id"]] = r.t_ms
        elif kind == "child.correction":
            self.corrected[r.data["run_id"]] = r.t_ms
        elif kind == "fault" and (r.data.get("kind") in ("send-ambiguous", "ack-slow") or (
                r.data.get("kind") == "delay" and r.data.get("message") == "CompletionAck"
                and "run_id" in r.data)) and self._latest(r):
            # A take whose acknowledgement was lost, slowed or held up on its way back to the
            # gateway: until it arrives the registry's send is still in flight.
            self.unacked.add(r.data["run_id"])
        elif is_delivery_crash(r):
            self.down = True
            self.hidden.update(self.latest)
        elif kind == "world.operator" and r.data["action"] == "redrive" and r.data["run_id"]:
            self.redriven[r.data["run_id"]] = r.t_ms

    def _latest(self, r: Record) -> bool:
        send = self.latest.get(r.data["run_id"])
        return send is not None and r.data.get("key", send.data["key"]) == send.data["key"]

    def why(self, run_id: str, t_ms: int, asked: bool = False,
            released: bool = False) -> str | None:
        """Why the run counts as given up at ``t_ms`` (None: it does not, or nobody can tell);
        ``asked``: for an operator's request made at ``t_ms``; ``released``: why its own
        delivery gave up even when a wake's take already released it (a take that did not
        count, say a yield's wake with no visible reply, which the batch sends again)."""
        send = self.latest.get(run_id)
        if send is None or run_id in self.taken or run_id in self.hidden \
                or (run_id in self.released and not released):
            return None
        if run_id in self.refused:
            if self.corrected.get(run_id) == self.refused_at.get(run_id):
                return None  # reopened in the refusal's instant, maybe before it was heard
            if asked and self.refused_at.get(run_id) == t_ms:
                # Asked in the refusal's very instant: the registry may hear the refusal after
                # the request (an operator's redrive then finds the send in flight, seed 2538).
                return None
            return "refused for good"
        window = self.window[run_id]
        return f"past its expiry at {window + EXPIRY_MS} ms" if t_ms >= window + EXPIRY_MS \
            else None

    def delivered(self, run_id: str) -> bool:
        """Whether the registry surely knows its requester took the run's latest key."""
        return run_id in self.taken and run_id not in self.unacked \
            and run_id not in self.hidden and run_id not in self.late

    def sent(self, r: Record) -> None:
        run_id = r.data["run_id"]
        self.latest[run_id] = r
        # Its window: from the receipt's end, a private result's release (PRV-7), or the
        # operator's redrive that asked for it (a redriven generation's expiry counts from then).
        release = self.private.get(run_id)
        self.window[run_id] = max(
            r.data["ended_at"] or 0, self.redriven.get(run_id, 0),
            release.at if release is not None and release.at is not None else 0)
        for known in (self.taken, self.refused, self.hidden, self.unacked, self.late):
            known.discard(run_id)
        self.released.pop(run_id, None)
