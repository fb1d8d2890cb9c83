"""YLD-1 for unfrozen waves (reference §c9 "Unfrozen batch"), restated from what was asked and
what was seen.

What was asked: each spawn request (``world.spawn``: its requester, whether a completion is
required, whether it is private). What the requester session showed: the run each request
became and the turn that asked (``spawn``), and how each turn ended (``requester.turn_end``:
``finish`` or ``yield``; a turn still open when the session's next one starts,
``requester.turn``, has finished; a reset or delete, ``requester.lifecycle``, abandons it).
What was seen of each child: its start (``child.start``, or ``lane.started`` when it waited for
the lane or its session's earlier run) and its own end record
(``child.end``), when its own delivery may have settled as an outsider tells (taken, owed nothing,
refused for good, expired: ``sim/invariants/settled.py``; never the registry's ``run.cleanup``),
whether its own result reached the requester (``requester.accept`` on
its own key), whether its own send may have landed unbeknown to the registry (an acknowledgement
lost or slowed, ``fault``; a crash of the delivery process after it), an operator's redrive of it
(``world.operator``); and every settle wake the gateway
was handed (``gateway.send`` keyed ``announce:requester-settle:...`` without ``:yield-``: a
wave's wake, naming its members).

A wave's siblings are the required, public children of one top-level requester session (not a
sub-agent's, not a cron requester's) spawned by turns that ended normally (never yielded), in
one session incarnation. Two siblings overlap when each started before the other ended. The
first send of each wave wake must show:

* its members are such siblings, all of one session and incarnation;
* each member ended and may have settled (its own delivery) before the send, and a result
  of its own that reached the requester reached it before the send (unless its own send may
  have landed unbeknown to the registry by then, or an operator redrove it since);
* the members are connected by overlapping intervals (through siblings that had settled by
  then: a member an earlier wave carried links a late joiner);
* no sibling overlapping a member is left out: each one whose turn had ended when the wave was
  surely decided (the send; or, when the delivery process died between the members' settling
  and the send, the last of them settling: the wave is frozen at its first dispatch and a
  restart replays it, reference §c9, §c11) was settled, and is named by this wake or an earlier
  one, or had settled before the member's own turn ended (an earlier wave could carry it, or
  consume it alone, only then);
* no run is named by two different wave wakes; a wake of one member carries a result that did
  not reach the requester on its own (its latest generation sent before the wake: a take of an
  older one does not count), or whose send may have landed unbeknown to the registry (exactly
  one delivered child is consumed without a wake).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash, is_wake, key_runs
from sim.invariants.settled import settles
from sim.invariants.yields.seen import _memo
from sim.trace import Record

ANSWER_MS = 120_000  # a send's answer timeout (announceTimeoutMs, reference §c11)

PARENT = "parent"


@attrs.define
class _Child:
    run_id: str
    session: str
    incarnation: int
    turn: str | None
    eligible_request: bool  # required, public, of a top-level requester
    start: Record | None = None
    end: Record | None = None
    # The earliest (time, trace position) its own delivery may have settled at, as an outsider
    # tells (sim/invariants/settled.py; at most its end plus the expiry, the earliest its
    # give-up can come: the give-up itself may come up to one backoff later), never the
    # registry's cleanup record.
    settle: tuple[int, int] | None = None
    own_accept: Record | None = None
    # Its own send may have landed unbeknown to the registry (an acknowledgement lost or slowed,
    # or the delivery process died after a send of it), or a newer generation of it was sent
    # after its requester took it: the registry may give it up, and a wave may then carry it.
    # Never the registry's own give-up record.
    unsure: Record | None = None
    sent: bool = False
    sends: list[Record] = attrs.field(factory=list)  # its own sends (not wakes), in order
    redriven: Record | None = None  # an operator asked to redrive it (DEL-16)

    def interval(self) -> tuple[int, int]:
        start = self.start.t_ms if self.start is not None else 0
        return start, self.end.t_ms if self.end is not None else 2**62


def _overlap(a: _Child, b: _Child) -> bool:
    (a0, a1), (b0, b1) = a.interval(), b.interval()
    return a0 < b1 and b0 < a1


def _top_level(session: str) -> bool:
    return ":subagent:" not in session and ":cron:" not in session


@attrs.frozen
class _Seen:
    children: dict[str, _Child]
    finished: dict[str, Record]  # turn run -> its normal end
    yielded: set[str]  # turn runs that yielded
    wakes: list[Record]  # the first send of each wave wake (by base key), in order
    crashes: list[int]  # trace positions of the delivery process's crashes


def _base(key: str) -> str:
    head, _, tail = key.rpartition(":retry-")
    return head if head and tail.isdigit() else key


def _read(trace: Sequence[Record]) -> _Seen:
    """What both wave oracles read (wave-woken too), once per trace."""
    return _memo(trace, "wave-children", _read_waves)  # type: ignore[return-value]


# What :func:`_read_waves` reads (the runs' settles: :func:`settles`).
_WAVE_KINDS = ("spawn", "child.start", "lane.started", "child.end",
               "requester.accept", "fault", "crash", "gateway.send", "world.operator",
               "requester.turn", "requester.lifecycle", "requester.turn_end")


def _read_waves(trace: Sequence[Record]) -> _Seen:
    asked = asked_runs(trace)
    children: dict[str, _Child] = {}
    finished: dict[str, Record] = {}
    yielded: set[str] = set()
    wakes: dict[str, Record] = {}
    open_turn: dict[str, str] = {}  # requester actor -> its open turn run
    crashes: list[int] = []
    for r in of_kinds(trace, _WAVE_KINDS):
        kind = r.kind
        if kind == "spawn":
            run_id = r.data["run_id"]
            request = asked.get(run_id)
            session = r.data["requester"]
            children[run_id] = _Child(
                run_id, session, r.data.get("incarnation", 1), r.data.get("turn_run_id"),
                request is not None and request.required and _top_level(session)
                and request.request.data.get("completion_target") != PARENT)
        elif kind == "child.start" and r.data["run_id"] in children:
            child = children[r.data["run_id"]]
            child.start = child.start or r
        elif kind == "lane.started" and r.data["run_id"] in children:
            # A run told to wait (for the lane, or for its session's earlier run) starts
            # executing only now: its interval begins here, not at its spawn.
            children[r.data["run_id"]].start = r
        elif kind == "child.end" and r.data["run_id"] in children:
            child = children[r.data["run_id"]]
            child.end = child.end or r
        elif kind == "requester.accept" and r.data["run_id"] in children \
                and not is_wake(r.data["key"]):
            child = children[r.data["run_id"]]
            child.own_accept = child.own_accept or r
        elif kind == "fault" and (r.data.get("kind") in ("send-ambiguous", "ack-slow") or (
                r.data.get("kind") == "delay" and int(r.data.get("delay_ms") or 0) >= ANSWER_MS)) \
                and r.data.get("run_id") in children and not is_wake(str(r.data.get("key") or "")):
            # Also a send or its answer held past the 120 s answer timeout: the try is given
            # up as unanswered and the copy may land after a later try's refusal (seed 60671).
            child = children[r.data["run_id"]]
            child.unsure = child.unsure or r
        elif is_delivery_crash(r):
            crashes.append(r.seq)
            for child in children.values():
                if child.sent:
                    child.unsure = child.unsure or r
        elif kind == "gateway.send" and r.data["run_id"] in children \
                and not is_wake(r.data["key"]):
            child = children[r.data["run_id"]]
            child.sent = True
            child.sends.append(r)
            if child.own_accept is not None and child.own_accept.data["key"] != r.data["key"]:
                child.unsure = child.unsure or r  # a newer generation (DEL-12): owed again
        elif kind == "world.operator" and r.data["action"] == "redrive" \
                and r.data["run_id"] in children:
            child = children[r.data["run_id"]]
            child.redriven = child.redriven or r
        elif kind == "requester.turn":
            # One turn at a time: a turn still open when the next one starts has finished.
            before = open_turn.pop(r.actor, None)
            if before is not None:
                finished.setdefault(before, r)
            open_turn[r.actor] = r.data["turn_run_id"]
        elif kind == "requester.lifecycle":
            open_turn.pop(r.actor, None)  # a reset or delete abandons it
        elif kind == "requester.turn_end":
            open_turn.pop(r.actor, None)
            if r.data["how"] == "finish":
                finished.setdefault(r.data["turn_run_id"], r)
            elif r.data["how"] == "yield":
                yielded.add(r.data["turn_run_id"])
        elif kind == "gateway.send" and is_wake(r.data["key"]) \
                and ":yield-" not in r.data["key"]:
            # The gateway handed it as the delivery process sends it (a message delayed on its
            # way must not make a sibling whose turn ended meanwhile look left out).
            wakes.setdefault(_base(r.data["key"]), r)
    settle = settles(trace)
    for child in children.values():
        child.settle = settle.earliest(child.run_id)
    return _Seen(children, finished, yielded, list(wakes.values()), crashes)


def _sibling(seen: _Seen, child: _Child, before: int) -> bool:
    """A wave sibling whose turn had ended normally before trace position ``before``."""
    if not child.eligible_request or child.turn is None or child.turn in seen.yielded:
        return False
    ended = seen.finished.get(child.turn)
    return ended is not None and ended.seq < before


def _settled(child: _Child, before: Record) -> bool:
    """Whether the child may have settled before the record ``before``."""
    return child.settle is not None and child.settle < (before.t_ms, before.seq)


def _latest_key(child: _Child, before: Record) -> str | None:
    """The key of the child's own latest send before ``before``: a take of an older one,
    arriving late, is not the result the wave had to wait for (a newer generation, DEL-12)."""
    keys = [r.data["key"] for r in child.sends if r.seq < before.seq]
    return keys[-1] if keys else None


def _decided(seen: _Seen, members: list[_Child], send: Record) -> int:
    """The trace position by which the wave's members were surely decided.

    The wave is frozen at its first dispatch (its outbox row saved ``dispatching`` with its
    members, docs/yield.md) and a restarted process replays that row on the same key (reference
    §c9: restored rows coalesce; §c11: the send may have landed). The freeze and the first send
    are one step, unless the delivery process died in between: the members then may have been
    decided at any moment after the last of them settled and its turn ended, before the crash,
    and a sibling whose turn ended after that moment joins late (its own wave), as it would had
    the wake gone out then (seeds 1119 with children drawn 1..8,
    scenarios/regressions/wave-frozen-before-crash-seed-1119.toml)."""
    floor = max(max(m.settle[1] if m.settle is not None else send.seq,
                    seen.finished[m.turn].seq if m.turn in seen.finished else send.seq)
                for m in members)
    if any(floor < crash < send.seq for crash in seen.crashes):
        return floor
    return send.seq


def _connected(members: list[_Child], links: list[_Child]) -> bool:
    """Whether the members are connected by overlaps, through members and ``links``."""
    if not members:
        return True
    nodes = {c.run_id: c for c in [*members, *links]}
    reached = {members[0].run_id}
    frontier = [members[0]]
    while frontier:
        current = frontier.pop()
        for other in nodes.values():
            if other.run_id not in reached and _overlap(current, other):
                reached.add(other.run_id)
                frontier.append(other)
    return all(m.run_id in reached for m in members)


def wave_is_overlapping_set(trace: Sequence[Record]) -> list[Violation]:
    seen = _read(trace)
    violations: list[Violation] = []
    carried: dict[str, Record] = {}  # run -> the wave wake that named it first

    def fail(message: str, *records: Record) -> None:
        violations.append(Violation("wave-is-overlapping-set", "YLD-1", message,
                                    tuple(r.seq for r in records)))

    for send in seen.wakes:
        key = send.data["key"]
        names = key_runs(key)
        members = [seen.children[n] for n in names if n in seen.children]
        if len(members) != len(names):
            fail(f"the wave wake {key} names runs no requester spawned", send)
            continue
        for m in members:
            if not _sibling(seen, m, send.seq) or m.session != members[0].session \
                    or m.incarnation != members[0].incarnation:
                fail(f"the wave wake {key} names {m.run_id}, which is not a required public "
                     f"child of a turn of {members[0].session} (incarnation "
                     f"{members[0].incarnation}) that ended normally before it", send)
            elif not _settled(m, send):
                fail(f"the wave wake {key} was sent at {send.t_ms} ms, before its member "
                     f"{m.run_id} had ended and settled", send)
            elif m.own_accept is not None and m.own_accept.seq > send.seq and (
                    m.unsure is None or m.unsure.seq > send.seq) and (
                    m.redriven is None or m.redriven.seq > m.own_accept.seq) and \
                    _latest_key(m, send) in (None, m.own_accept.data["key"]):
                fail(f"the wave wake {key} was sent at {send.t_ms} ms, before {m.run_id}'s own "
                     f"result reached the requester ({m.own_accept.t_ms} ms)", send,
                     m.own_accept)
            if m.run_id in carried:
                fail(f"{m.run_id} was carried by two wave wakes: {carried[m.run_id].data['key']} "
                     f"and {key}", carried[m.run_id], send)
        had = members[0].own_accept if len(members) == 1 else None
        unsure = members[0].unsure
        if had is not None and had.seq < send.seq and (unsure is None or unsure.seq > send.seq) \
                and _latest_key(members[0], send) in (None, had.data["key"]):
            # (A result whose send may have landed unbeknown to the registry may be owed:
            # repeating it is the safe side, as wake-message says. A take of an older generation
            # than the one last sent is not the result the wave carries: seeds 4396, 4891.)
            fail(f"the wave wake {key} carries one child whose result already reached the "
                 "requester on its own (it is consumed without a wake)", had, send)
        siblings = [c for c in seen.children.values() if c.run_id not in names
                    and c.session == members[0].session
                    and c.incarnation == members[0].incarnation and _sibling(seen, c, send.seq)]
        links = [c for c in siblings if _settled(c, send)]
        if not _connected(members, links):
            fail(f"the wave wake {key} names runs whose execution intervals are not one "
                 "connected overlapping set", send)
        # Owed to the wave only what was a sibling when it was surely decided (_decided).
        decided = _decided(seen, members, send)
        owed = [c for c in siblings if _sibling(seen, c, decided)]
        for m in members:
            turn_end = seen.finished.get(m.turn or "")
            for other in owed:
                if not _overlap(m, other):
                    continue
                if not _settled(other, send):
                    fail(f"the wave wake {key} went at {send.t_ms} ms while {other.run_id}, "
                         f"overlapping {m.run_id}, had not settled", send)
                elif other.run_id not in carried and turn_end is not None \
                        and other.settle is not None \
                        and other.settle > (turn_end.t_ms, turn_end.seq):
                    fail(f"the wave wake {key} leaves out {other.run_id}, which overlaps "
                         f"{m.run_id} and settled with it", send)
        for m in members:
            carried.setdefault(m.run_id, send)
    return violations


INVARIANTS = (
    Invariant("wave-is-overlapping-set", "YLD-1", "safety",
              "An unfrozen wave's settle wake names exactly the connected set of settled "
              "siblings with overlapping execution intervals (less what an earlier wave "
              "carried), comes once, and only after every member's own result reached the "
              "requester.", wave_is_overlapping_set),
)
