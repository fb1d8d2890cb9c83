"""A scenario written back as a TOML file that ``sim.scenario.load`` reads as the same world.

Used to save shrunk failures (``handoff shrink --save``). Children are written with explicit steps
(an ``outcome`` was already folded into them when the source was loaded); fields at their defaults
are left out so a saved file reads like a hand-written one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs
import tomli_w

from actors.gateway.routing import WEBCHAT
from actors.messages import ChildSpec, StepSpec
from actors.permissions import DEFAULT_OWNER
from actors.records.send_error import SendError
from actors.states import StepFinish
from sim.faults.plan import TimelineEvent
from sim.scenario import _TIMELINE_FIELDS, TIMELINE_FAULTS, Scenario, SessionDef, WorkloadDef
from sim.scenario.turns import TurnDef


def seconds(ms: int) -> int | float:
    """Milliseconds as the loader's seconds: whole seconds as integers (it rounds back to ms)."""
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def dumps(scenario: Scenario) -> str:
    top: dict[str, Any] = {
        "name": scenario.name,
        "description": scenario.description,
        "covers": list(scenario.covers),
        "seed": scenario.seed,
        "strategy": scenario.strategy,
        "mutants": list(scenario.mutants),
        "until": seconds(scenario.until_ms),
    }
    if scenario.archive_after_minutes:
        top["archive_after_minutes"] = scenario.archive_after_minutes
    parts = [_table(None, top)]
    parts += [_table("[[sessions]]", _session(s)) for s in scenario.sessions]
    parts += [_table("[[children]]", _child(c)) for c in scenario.children]
    if scenario.workload is not None:
        w = scenario.workload
        parts.append(_table("[workload]", {
            "children": w.children, "requester": w.requester,
            "spawn_within": seconds(w.spawn_within_ms), "run_max": seconds(w.run_max_ms),
            **({"draw_routes": True} if w.draw_routes else {}),
            # The shape knobs, where they differ from their defaults (the default world's
            # tree_share does).
            **{key: value for key, value in (
                ("sessions", w.sessions), ("tree_share", w.tree_share),
                ("tree_depth", w.tree_depth), ("tree_fan_out", w.tree_fan_out),
                ("swarm", w.swarm))
               if value != attrs.fields_dict(WorkloadDef)[key].default}}))
    limits = {key: value for key, value in attrs.asdict(scenario.limits).items()
              if value is not None}
    if limits or scenario.draw_limits:
        parts.append(_table("[limits]", {**limits, **(
            {"draw": True} if scenario.draw_limits else {})}))
    f = scenario.faults
    parts.append(_table("[faults]", {"kinds": list(f.kinds), "swarm": f.swarm,
                                     "heal_at": seconds(f.heal_at_ms)}))
    parts += [_table("[[timeline]]", _event(e)) for e in scenario.timeline]
    parts += [_table("[[turns]]", _turn(t)) for t in scenario.turns]
    parts += [_table("[[lifecycle]]", {"at": seconds(e.at_ms), "session": e.session,
                                       "event": e.event}) for e in scenario.lifecycle]
    if scenario.replay is not None:
        parts.append("[replay.choices]\n" + "".join(
            f"{_key(subsystem)} = {_ints(values)}\n" for subsystem, values in scenario.replay))
    assert not scenario.expect.children, "child expectations are not written back"
    reaches = {"reaches": list(scenario.expect.reaches)} if scenario.expect.reaches else {}
    parts.append(_table("[expect]", {"violations": list(scenario.expect.violations),
                                     **reaches}))
    return "\n".join(parts)


CHOICES_PER_LINE = 30


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _value(key)


def _ints(values: Sequence[int]) -> str:
    if len(values) <= CHOICES_PER_LINE:
        return "[" + ", ".join(map(str, values)) + "]"
    rows = [", ".join(map(str, values[i:i + CHOICES_PER_LINE]))
            for i in range(0, len(values), CHOICES_PER_LINE)]
    return "[\n" + "".join(f"  {row},\n" for row in rows) + "]"


def _table(header: str | None, fields: dict[str, Any]) -> str:
    lines = [] if header is None else [header]
    for key, value in fields.items():
        if key == "steps":  # one step per line
            lines.append("steps = [\n" + "".join(f"  {_value(v)},\n" for v in value) + "]")
        else:
            lines.append(f"{key} = {_value(value)}")
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    """One TOML value, inline; tomli_w spells the scalars (string escapes are its business)."""
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def _child(child: ChildSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"id": child.id, "requester": child.requester, "task": child.task,
                           "spawn_at": seconds(child.spawn_at_ms), "encoding": child.encoding}
    if child.parent is not None:  # a nested child names its parent, not the parent's session
        del out["requester"]
        out["parent"] = child.parent
    if child.timeout_ms is not None:
        out["timeout"] = seconds(child.timeout_ms)
    if child.run_timeout_ms is not None:
        out["run_timeout_seconds"] = seconds(child.run_timeout_ms)
    if child.cleanup != "keep":
        out["cleanup"] = child.cleanup
    if child.error is not None:
        out["error"] = child.error
    if not child.expects_completion:
        out["expects_completion"] = False
    if not child.usage_recorded:
        out["usage_recorded"] = False
    if child.answer_lost:
        out["answer_lost"] = True
    if child.reply_to_cap is not None:  # the world sizes its answer (sim/world/aims.py)
        out["reply_to_cap"] = child.reply_to_cap
    for key in ("fork_seed", "earlier_epoch", "session", "turn", "route_change",
                "completion_target"):
        if getattr(child, key) is not None:
            out[key] = getattr(child, key)
    if child.caller is not None:
        out["caller"] = str(child.caller)
    if child.correction_after_ms is not None:  # DEL-12: a later receipt of the same run
        out["correction_after"] = seconds(child.correction_after_ms)
        out["correction"] = child.correction
    default = type(child.options)()
    for key, value in attrs.asdict(child.options).items():  # PRV-4's refused combinations
        if value != getattr(default, key):
            out[key] = str(value) if isinstance(value, str) else value
    out["steps"] = [_step(s) for s in child.steps]
    if child.receipts:  # DEL-12's further receipts, in the order they are written
        out["receipts"] = [{"after": seconds(r.after_ms), "ended_at": seconds(r.ended_at_ms),
                            "reply": r.text} for r in child.receipts]
    return out


def _step(step: StepSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"duration": seconds(step.duration_ms)}
    if step.text:
        out["text"] = step.text
    if step.reasoning:
        out["reasoning"] = step.reasoning
    if step.tool_calls:
        out["tool_calls"] = step.tool_calls
    if step.finish != StepFinish.AUTO:
        out["finish"] = step.finish.value
    if step.tokens is not None:
        out["tokens_in"], out["tokens_out"] = step.tokens
    return out


def _event(event: TimelineEvent) -> dict[str, Any]:
    kind_key = "fault" if event.fault in TIMELINE_FAULTS else "event"
    out: dict[str, Any] = {"at": seconds(event.at_ms), kind_key: event.fault}
    fields = _TIMELINE_FIELDS[event.fault]
    error, chain = _error_fields(event.error)
    values: dict[str, Any] = {
        "child": event.child, "actor": event.actor, "point": event.point,
        "count": None if event.count == 1 else event.count, "error": error, "chain": chain,
        "delay": seconds(event.delay_ms) if event.delay_ms else None,
        "restart_after": (None if event.restart_after_ms is None
                          else seconds(event.restart_after_ms)),
        "limit": event.limit, "offset": event.offset,
        "include_tools": event.include_tools or None,
        "caller": None if event.caller is None else str(event.caller),
        "run_for": seconds(event.run_ms) if event.fault == "steer" else None,
        "reply": event.reply,
        "lost": list(event.lost) or None, "notice_fails": event.notice_fails or None,
    }
    for key in fields:
        if values[key] is not None:
            out[key] = values[key]
    return out


def _error_fields(error: SendError | None) -> tuple[str | None, list[dict[str, Any]] | None]:
    """A send fault's chain as ``error = "..."`` when it is one plain message, else as the
    ``chain`` links, outermost first."""
    if error is None:
        return None, None
    if error.cause is None and error == SendError(error.message):
        return error.message, None
    links: list[dict[str, Any]] = []
    for link in error.chain():
        out: dict[str, Any] = {"message": link.message}
        if link.sent_before_error:
            out["sent_before_error"] = True
        if link.visible_reply_sent:
            out["visible_reply_sent"] = True
        if link.platform_error is not None:
            out["platform_error"] = link.platform_error
        links.append(out)
    return None, links


def _session(session: SessionDef) -> dict[str, Any]:
    out: dict[str, Any] = {"key": session.key}
    if session.channel is not None:
        out["channel"] = session.channel
    if session.channel not in (None, WEBCHAT):
        out["to"] = session.to or ""  # "": the origin names only its channel
        if session.thread is not None:
            out["thread"] = session.thread
    if session.chunk_chars is not None:
        out["chunk_chars"] = session.chunk_chars
    for key, target in (("route", session.route), ("binding", session.binding),
                        ("hook", session.hook)):
        if target is not None:
            out[key] = {k: v for k, v in target.to_json().items() if v is not None}
    if session.owners != (DEFAULT_OWNER,):
        out["owners"] = list(session.owners)
    if session.visible_replies != "auto":
        out["visible_replies"] = session.visible_replies
    return out


def _turn(turn: TurnDef) -> dict[str, Any]:
    out: dict[str, Any] = {"id": turn.id, "session": turn.session,
                           "start": seconds(turn.start_ms)}
    if turn.end_ms is not None:
        out["end"] = seconds(turn.end_ms)
        out["ends"] = turn.ends.value
    if turn.checks:
        out["checks"] = [{"child": c.child, "at": seconds(c.at_ms)} for c in turn.checks]
    return out
