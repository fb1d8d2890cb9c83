"""A scenario's scripted timeline (faults and world events), its expectations, and the saved
choices of a shrunk failure (``[replay.choices]``)."""

from __future__ import annotations

import difflib
import re

from actors import addresses
from actors.inputs import Node
from actors.probes import PROBES
from actors.records.send_error import SendError
from sim.choices import MAX_OPTIONS
from sim.faults.plan import TimelineEvent
from sim.scenario.model import (
    _TIMELINE_FIELDS,
    CRASH_POINTS,
    DEFAULT_GATEWAY_DOWN_S,
    DELIVERY_STATES,
    MAX_COUNT,
    MAX_REPLY_CHARS,
    MAX_TIME_S,
    MAX_TIMELINE,
    OUTCOMES,
    TIMELINE_EVENTS,
    TIMELINE_FAULTS,
    ChildExpectation,
    Expectation,
)
from sim.scenario.sessions import caller


def timeline(root: Node, child_ids: list[str]) -> tuple[TimelineEvent, ...]:
    events: list[TimelineEvent] = []
    tables = root.nodes("timeline")
    if len(tables) > MAX_TIMELINE:
        raise root.fail("timeline", f"must hold at most {MAX_TIMELINE:,} entries (the limit)")
    for table in tables:
        table.check_keys(("at", "fault", "event", "child", "actor", "point", "count", "error",
                          "chain", "delay", "restart_after", "limit", "offset", "include_tools",
                          "caller", "run_for", "reply", "lost", "notice_fails"))
        if table.has("event"):
            if table.has("fault"):
                raise table.fail("event", "a timeline entry is either a fault or an event")
            kind_key = "event"
            fault = table.text("event", choices=TIMELINE_EVENTS)
        else:
            kind_key = "fault"
            fault = table.text("fault", choices=TIMELINE_FAULTS)
        for key in table.data:
            if key not in ("at", kind_key, *_TIMELINE_FIELDS[fault]):
                raise table.fail(key, f"does not apply to a {fault!r} {kind_key} (it takes: at, "
                                 f"{kind_key}, {', '.join(_TIMELINE_FIELDS[fault])})")
        child = table.text("child", None)
        if child is not None and child not in child_ids:
            raise table.fail("child", f"{child!r} is not one of the [[children]]")
        actor = table.text("actor", None)
        if fault == "crash":
            if actor not in (None, addresses.DELIVERY):
                raise table.fail("actor", f"only the {addresses.DELIVERY!r} actor can crash")
            actor = addresses.DELIVERY
        if fault in TIMELINE_EVENTS and child is None and fault != "gateway-restart":
            what = {"abort": "an abort names the child to abort",
                    "steer": "a steer names the child to steer",
                    "cleanup": "a cleanup names the child whose session it deletes",
                    "status": "a status read names the child it asks about",
                    "compact": "a compaction names a child whose requester session compacts",
                    "delete-session": "a session deletion names the child whose session it "
                                      "deletes",
                    "redrive": "a redrive names the child whose latest run an operator redrives",
                    "dismiss": "a dismissal names the child whose given-up run an operator "
                               "discards"}.get(
                fault, "a history read names the child whose transcript it reads")
            raise table.fail("child", what)
        point = table.text("point", None)
        if point is not None and point not in CRASH_POINTS:
            raise table.fail("point", f"{point!r} is not a crash point (known: "
                             f"{', '.join(CRASH_POINTS)})")
        events.append(TimelineEvent(
            at_ms=table.seconds("at", maximum=MAX_TIME_S),
            fault=fault,
            child=child,
            actor=actor,
            point=point,
            count=table.integer("count", 1, minimum=1, maximum=MAX_COUNT),
            error=_send_error(table),
            delay_ms=table.seconds("delay", 0, maximum=MAX_TIME_S),
            restart_after_ms=table.seconds(
                "restart_after", DEFAULT_GATEWAY_DOWN_S if fault == "gateway-restart" else None,
                minimum=0.001 if fault == "gateway-restart" else 0.0, maximum=MAX_TIME_S),
            # sessions_history reads a positive integer (openclaw 2026.9.6, reference §c19).
            limit=table.integer("limit", None, minimum=1, maximum=MAX_COUNT),
            # Absent is not 0: only a read given an offset is answered with paging fields.
            offset=table.integer("offset", None, maximum=MAX_COUNT),
            include_tools=table.boolean("include_tools", False),
            caller=caller(table, child_ids),
            run_ms=table.seconds("run_for", 30, minimum=0.001, maximum=MAX_TIME_S),
            reply=table.text("reply", None, max_chars=MAX_REPLY_CHARS),
            lost=_lost(table, child_ids),
            notice_fails=table.integer("notice_fails", 0, maximum=MAX_COUNT),
        ))
    return tuple(events)


def _lost(table: Node, child_ids: list[str]) -> tuple[str, ...]:
    """A Gateway restart's children whose execution context is lost (each named once)."""
    lost: tuple[str, ...] = table.strings("lost", ())
    for index, child in enumerate(lost):
        if child not in child_ids:
            raise table.fail_item("lost", index, f"{child!r} is not one of the [[children]]")
        if child in lost[:index]:
            raise table.fail_item("lost", index, f"{child!r} is named twice")
    return lost


def _send_error(table: Node) -> SendError | None:
    """A send fault's error: ``error = "..."`` (one message) or ``[[timeline.chain]]`` links,
    outermost first, each with ``message`` and optional send evidence or platform error type."""
    if table.has("error") and table.has("chain"):
        raise table.fail("chain", "give either error (one message) or chain, not both")
    if not table.has("chain"):
        message = table.text("error", None)
        return None if message is None else SendError(message)
    links = table.nodes("chain")
    if not links:
        raise table.fail("chain", "must list at least one link")
    error: SendError | None = None
    for link in reversed(links):
        link.check_keys(("message", "sent_before_error", "visible_reply_sent", "platform_error"))
        error = SendError(
            message=link.text("message"),
            cause=error,
            sent_before_error=link.boolean("sent_before_error", False),
            visible_reply_sent=link.boolean("visible_reply_sent", False),
            platform_error=link.text("platform_error", None),
        )
    return error


def expectations(root: Node, child_ids: list[str]) -> Expectation:
    table = root.node("expect", None)
    if table is None:
        return Expectation()
    table.check_keys(("violations", "children", "refusals", "reaches"))
    from sim.invariants import BY_NAME  # the names scenarios may expect

    violations = table.strings("violations", ())
    for index, name in enumerate(violations):
        if name not in BY_NAME:
            raise table.fail_item("violations", index, f"unknown invariant {name!r} "
                                  f"(known: {', '.join(BY_NAME)})")
    found = []
    for child_table in table.nodes("children"):
        child_table.check_keys(("child", "delivery", "received", "status", "text", "sent_to",
                                "refused", "reader", "refused_with", "woken"))
        child = child_table.text("child")
        if child not in child_ids:
            raise child_table.fail("child", f"{child!r} is not one of the [[children]]")
        found.append(ChildExpectation(
            child=child,
            delivery=child_table.text("delivery", None, choices=DELIVERY_STATES),
            received=child_table.integer("received", None, maximum=MAX_COUNT),
            status=child_table.text("status", None, choices=(*OUTCOMES, "unknown")),
            text=child_table.text("text", None),
            line=child_table.line,
            sent_to=_sent_to(child_table),
            refused=child_table.boolean("refused", False),
            reader=child_table.text("reader", None),
            refused_with=child_table.text("refused_with", None),
            woken=child_table.integer("woken", None, maximum=MAX_COUNT),
        ))
    return Expectation(violations, tuple(found),
                       table.integer("refusals", None, maximum=MAX_COUNT),
                       _reaches(table),
                       table.doc.line((*table.path, "reaches")) if table.has("reaches") else None)


def _reaches(table: Node) -> tuple[str, ...]:
    """``reaches``: declared code probes (actors/probes.py), each named once."""
    names = table.strings("reaches", (), non_empty=table.has("reaches"))
    for index, name in enumerate(names):
        if name not in PROBES:
            near = difflib.get_close_matches(name, list(PROBES), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise table.fail_item("reaches", index, f"unknown probe {name!r} (the probes are "
                                  f"declared in actors/probes.py{hint})")
        if name in names[:index]:
            raise table.fail_item("reaches", index, f"probe {name!r} is named twice")
    return tuple(names)


def _sent_to(table: Node) -> str | None:
    sent_to: str | None = table.text("sent_to", None)
    if sent_to is not None and sent_to != "none" and not 2 <= len(sent_to.split(" ")) <= 3:
        raise table.fail("sent_to", f"{sent_to!r} is not 'channel chat', 'channel chat thread' "
                         "or 'none'")
    return sent_to


# Far above any run's choice count (a run is bounded by its agenda steps), far below a memory risk.
MAX_REPLAY_CHOICES = 1_000_000
_SUBSYSTEM = re.compile(r"^[a-z][a-z0-9_-]*(:[a-z0-9_-]+)*$")


def replay_choices(root: Node) -> tuple[tuple[str, tuple[int, ...]], ...] | None:
    """``[replay.choices]``: a saved run's choice indices per subsystem (``handoff shrink``)."""
    table = root.node("replay", None)
    if table is None:
        return None
    table.check_keys(("choices",))
    choices = table.node("choices", None)
    if choices is None:
        raise table.fail("choices", "is missing ([replay.choices], one array per subsystem)")
    guides = []
    total = 0
    for subsystem in choices.data:
        if not _SUBSYSTEM.match(subsystem):
            raise choices.fail(subsystem, "is not a subsystem name like 'schedule' or "
                               "'fault:crash'")
        values = choices.integers(subsystem, minimum=0, maximum=MAX_OPTIONS)
        total += len(values)
        if total > MAX_REPLAY_CHOICES:
            raise choices.fail(subsystem, f"more than {MAX_REPLAY_CHOICES:,} choices in all "
                               "(the limit)")
        guides.append((subsystem, tuple(values)))
    return tuple(guides)
