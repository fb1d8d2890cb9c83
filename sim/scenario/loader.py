"""Loading a scenario file: every field checked for type and range before anything runs.

The first problem is an :class:`~actors.errors.InputError` reading ``file:line: field: what is
wrong``. The format is documented in ``docs/scenarios.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from actors.child.agent_loop import Encoding
from actors.inputs import Node, decode, toml_document
from actors.inputs.files import MAX_SCENARIO_BYTES, read_bounded
from actors.messages import (
    DEFAULT_CORRECTION,
    STEP_FINISHES,
    ChildSpec,
    ExtraReceipt,
    StepSpec,
)
from actors.mutant_catalogue import MUTANTS
from actors.nesting.spawn_limits import CHILDREN_RANGE, CONCURRENT_RANGE, DEPTH_RANGE, SpawnLimits
from actors.requester.session import child_session_key
from actors.states import StepFinish, values
from sim.choices import MAX_SEED, STRATEGIES
from sim.faults.plan import FAULT_KINDS
from sim.scenario import turns as turn_defs
from sim.scenario.model import (
    _REQUIREMENT_ID,
    CLEANUP_MODES,
    DEFAULT_HEAL_S,
    DEFAULT_UNTIL_S,
    MAX_ARCHIVE_MINUTES,
    MAX_CHILDREN,
    MAX_REPLY_CHARS,
    MAX_REPLY_UNIT,
    MAX_SESSIONS,
    MAX_STEPS_PER_CHILD,
    MAX_TIME_S,
    MAX_TOKENS,
    MAX_TOOL_CALLS,
    MAX_TREE_DEPTH,
    MAX_TREE_FAN_OUT,
    OUTCOMES,
    FaultsDef,
    Scenario,
    WorkloadDef,
)
from sim.scenario.private import _PRIVATE_KEYS, completion_target, spawn_options
from sim.scenario.sessions import caller, sessions
from sim.scenario.timeline import expectations, replay_choices, timeline

_TOP_FIELDS = ("name", "description", "covers", "seed", "strategy", "mutants", "until",
               "sessions", "children", "workload", "faults", "timeline", "expect", "replay",
               "limits", "turns", "lifecycle", "archive_after_minutes")


def load(path: str | Path) -> Scenario:
    path = str(path)
    return loads(decode(path, read_bounded(path, MAX_SCENARIO_BYTES)), path)


def loads(text: str, path: str = "<scenario>") -> Scenario:
    doc, root = toml_document(path, text)
    root.check_keys(_TOP_FIELDS)
    name = root.text("name", Path(path).stem)
    covers = root.strings("covers", ())
    for index, requirement in enumerate(covers):
        if not _REQUIREMENT_ID.match(requirement):
            raise root.fail_item("covers", index,
                                 f"{requirement!r} is not a requirement ID like 'DEL-3'")
    mutants = root.strings("mutants", ())
    for index, mutant in enumerate(mutants):
        if mutant not in MUTANTS:
            raise root.fail_item("mutants", index,
                                 f"unknown mutant {mutant!r} (known: {', '.join(MUTANTS)})")
    seed = root.integer("seed", 1, maximum=MAX_SEED)
    until_ms = root.seconds("until", DEFAULT_UNTIL_S, minimum=1, maximum=MAX_TIME_S)

    session_defs = sessions(root)
    session_keys = [s.key for s in session_defs]
    children = _children(root, session_keys)
    child_ids = [c.id for c in children]
    children = tuple(attrs.evolve(c, caller=caller(table, child_ids))
                     for c, table in zip(children, root.nodes("children"), strict=True))
    workload = _workload(root, session_keys, len(children))
    limits, draw_limits = _limits(root)
    turns = turn_defs.turns(root, session_keys, MAX_TIME_S)
    turn_defs.check_children(root, turns, children)
    if not children and workload is None:
        raise doc.error((), "children", "the world has no children (add [[children]] or "
                        "[workload])")
    return Scenario(
        path=path,
        name=name,
        description=root.text("description", ""),
        covers=covers,
        seed=seed,
        strategy=root.text("strategy", "random", choices=STRATEGIES),
        mutants=mutants,
        until_ms=until_ms,
        sessions=session_defs,
        children=children,
        workload=workload,
        faults=_faults(root),
        timeline=timeline(root, child_ids),
        expect=expectations(root, child_ids),
        replay=replay_choices(root),
        limits=limits,
        draw_limits=draw_limits,
        source=text,
        turns=turns,
        lifecycle=turn_defs.lifecycle(root, session_keys, MAX_TIME_S),
        archive_after_minutes=root.integer("archive_after_minutes", 0,
                                           maximum=MAX_ARCHIVE_MINUTES),
    )


def _children(root: Node, session_keys: list[str]) -> tuple[ChildSpec, ...]:
    children: list[ChildSpec] = []
    tables = root.nodes("children")
    if len(tables) > MAX_CHILDREN:
        raise root.fail("children", f"must hold at most {MAX_CHILDREN:,} entries (the limit)")
    for table in tables:
        table.check_keys(("id", "requester", "task", "spawn_at", "run_for", "outcome", "reply",
                          "reply_chars", "reply_unit", "error", "expects_completion",
                          "usage_recorded", "steps", "run_timeout_seconds", "cleanup",
                          "encoding", "timeout", "fork_seed", "earlier_epoch", "session",
                          "parent", "caller", "answer_lost", "correction_after",
                          "correction", "turn", "route_change", "tokens_in", "tokens_out",
                          "receipts", "reply_to_cap", *_PRIVATE_KEYS))
        child_id = table.text("id")
        if not re.match(r"^[A-Za-z0-9_\-]+$", child_id):
            raise table.fail("id", f"{child_id!r} may only use letters, digits, '-' and '_'")
        if any(c.id == child_id for c in children):
            raise table.fail("id", f"child {child_id!r} is defined twice")
        requester = table.text("requester", session_keys[0])
        if requester not in session_keys:
            raise table.fail("requester", f"{requester!r} is not one of the [[sessions]]")
        parent = _parent(table, children)
        if parent is not None:
            requester = nested_requester(parent)
        outcome = table.text("outcome", "ok", choices=OUTCOMES)
        run_ms = table.seconds("run_for", 30, maximum=MAX_TIME_S)
        error = table.text("error", None, max_chars=MAX_REPLY_CHARS)
        timeout_ms = table.seconds("timeout", None, minimum=0.001, maximum=MAX_TIME_S)
        # The spawn's runTimeoutSeconds (reference §c18): 0 means none; the model floors it.
        run_timeout_ms = table.seconds("run_timeout_seconds", None, maximum=MAX_TIME_S)
        if table.has("reply") and table.has("reply_chars"):
            raise table.fail("reply_chars", "give either reply or reply_chars, not both")
        if table.has("reply_unit") and not table.has("reply_chars"):
            raise table.fail("reply_unit", "repeats to make reply_chars characters: give "
                             "reply_chars too")
        if table.has("steps"):
            for one_step in ("reply", "reply_chars", "tokens_in", "tokens_out"):
                if table.has(one_step):
                    raise table.fail(one_step, f"give either {one_step} (one step) or steps, "
                                     "not both")
            steps = [_step(step) for step in table.nodes("steps")]
            if len(steps) > MAX_STEPS_PER_CHILD:
                raise table.fail("steps", f"must hold at most {MAX_STEPS_PER_CHILD:,} entries "
                                 "(the limit)")
            if not steps:
                raise table.fail("steps", "must list at least one step")
        elif table.has("reply_chars"):
            chars = table.integer("reply_chars", minimum=1, maximum=MAX_REPLY_CHARS)
            unit = table.text("reply_unit", None, max_chars=MAX_REPLY_UNIT)
            if unit == "":
                raise table.fail("reply_unit", "must not be empty")
            text = filler_text(chars) if unit is None else repeated_text(unit, chars)
            steps = [StepSpec(run_ms, text=text, tokens=_tokens(table))]
        else:
            steps = [StepSpec(run_ms, text=table.text("reply", "", max_chars=MAX_REPLY_CHARS),
                              tokens=_tokens(table))]
        if outcome == "error":
            # The run fails: its last step's stream breaks.
            steps[-1] = attrs.evolve(steps[-1], finish=StepFinish.STREAM_ERROR)
        elif outcome == "timeout":
            if timeout_ms is None:
                timeout_ms = sum(step.duration_ms for step in steps)
            steps = [attrs.evolve(step, duration_ms=2 * step.duration_ms) for step in steps]
        children.append(ChildSpec(
            id=child_id,
            requester=requester,
            task=table.text("task", f"task of {child_id}"),
            spawn_at_ms=table.seconds("spawn_at", 0, maximum=MAX_TIME_S),
            steps=tuple(steps),
            encoding=table.text("encoding", "v2", choices=values(Encoding)),
            timeout_ms=timeout_ms,
            error=error,
            expects_completion=table.boolean("expects_completion", True),
            usage_recorded=table.boolean("usage_recorded", True),
            fork_seed=table.text("fork_seed", None),
            earlier_epoch=table.text("earlier_epoch", None),
            session=_session_label(table),
            parent=None if parent is None else parent.id,
            answer_lost=table.boolean("answer_lost", False),
            correction_after_ms=table.seconds("correction_after", None, minimum=0.001,
                                              maximum=MAX_TIME_S),
            correction=table.text("correction", DEFAULT_CORRECTION, max_chars=MAX_REPLY_CHARS),
            turn=table.text("turn", None),
            route_change=table.text("route_change", None),
            completion_target=completion_target(table),
            run_timeout_ms=run_timeout_ms,
            cleanup=table.text("cleanup", "keep", choices=CLEANUP_MODES),
            options=spawn_options(table),
            receipts=_receipts(table, outcome),
            # The world sizes its final answer so that its announce block is the shared cap
            # plus this many characters (sim/world/aims.py).
            reply_to_cap=table.integer("reply_to_cap", None, minimum=-1_000, maximum=1_000),
        ))
        if parent is not None and not (
                parent.spawn_at_ms <= children[-1].spawn_at_ms
                < parent.spawn_at_ms + parent.run_ms):
            raise table.fail("spawn_at", f"a nested child is spawned while its parent "
                             f"{parent.id!r} runs ({seconds_text(parent.spawn_at_ms)} to "
                             f"{seconds_text(parent.spawn_at_ms + parent.run_ms)} s)")
    return tuple(children)


def nested_requester(parent: ChildSpec) -> str:
    """A nested child's requester: its parent child's session (DEL-4, DEL-6)."""
    return child_session_key(parent.requester, parent.session or parent.id)


def seconds_text(ms: int) -> str:
    return f"{ms / 1000:g}"


def _parent(table: Node, earlier: list[ChildSpec]) -> ChildSpec | None:
    parent_id: str | None = table.text("parent", None)
    if parent_id is None:
        return None
    if table.has("requester"):
        raise table.fail("parent", "give either requester (a top-level session) or parent, "
                         "not both")
    parent = next((c for c in earlier if c.id == parent_id), None)
    if parent is None:
        raise table.fail("parent", f"{parent_id!r} is not a child defined above this one")
    return parent


def _session_label(table: Node) -> str | None:
    label: str | None = table.text("session", None)
    if label is not None and not re.match(r"^[A-Za-z0-9_\-]+$", label):
        raise table.fail("session", f"{label!r} may only use letters, digits, '-' and '_'")
    return label


def filler_text(chars: int) -> str:
    """A long reply of exactly ``chars`` characters, with characters that need escaping."""
    unit = "Row {:05d}: a < b & c; see </prompt-data> fences.\n"
    rows = (chars // len(unit.format(0))) + 1
    return "".join(unit.format(i) for i in range(rows))[:chars]


def repeated_text(unit: str, chars: int) -> str:
    """``unit`` repeated to exactly ``chars`` characters (the last repeat cut short)."""
    return (unit * (chars // len(unit) + 1))[:chars]


def _step(table: Node) -> StepSpec:
    table.check_keys(("duration", "text", "reasoning", "tool_calls", "finish", "tokens_in",
                      "tokens_out"))
    return StepSpec(
        duration_ms=table.seconds("duration", 10, minimum=0.001, maximum=MAX_TIME_S),
        text=table.text("text", "", max_chars=MAX_REPLY_CHARS),
        reasoning=table.text("reasoning", "", max_chars=MAX_REPLY_CHARS),
        tool_calls=table.integer("tool_calls", 0, maximum=MAX_TOOL_CALLS),
        finish=StepFinish(table.text("finish", "auto", choices=STEP_FINISHES)),
        tokens=_tokens(table),
    )


def _receipts(table: Node, outcome: str) -> tuple[ExtraReceipt, ...]:
    """``[[children.receipts]]``: further receipts of the run (DEL-12), each ``after`` seconds
    after its end (in order), with its own producer end time ``ended_at`` (seconds of world
    time) and ``reply``."""
    receipts: list[ExtraReceipt] = []
    for entry in table.nodes("receipts"):
        entry.check_keys(("after", "ended_at", "reply"))
        after = entry.seconds("after", 0, maximum=MAX_TIME_S)
        if receipts and after < receipts[-1].after_ms:
            raise entry.fail("after", "receipts are listed in the order they are written "
                             "(after must not go back)")
        receipts.append(ExtraReceipt(after, entry.seconds("ended_at", maximum=MAX_TIME_S),
                                     entry.text("reply")))
    if receipts and outcome != "ok":
        raise table.fail("receipts", "only a run that ends ok writes further receipts")
    return tuple(receipts)


def _tokens(table: Node) -> tuple[int, int] | None:
    """``tokens_in`` and ``tokens_out``: the token usage a step (or a one-step child) reports;
    both or neither (a child with no report at all: ``usage_recorded = false``)."""
    given = [table.has("tokens_in"), table.has("tokens_out")]
    if not any(given):
        return None
    if not all(given):
        missing = "tokens_out" if given[0] else "tokens_in"
        raise table.fail(missing, "give tokens_in and tokens_out together")
    return (table.integer("tokens_in", minimum=0, maximum=MAX_TOKENS),
            table.integer("tokens_out", minimum=0, maximum=MAX_TOKENS))


def _workload(root: Node, session_keys: list[str], scripted: int) -> WorkloadDef | None:
    table = root.node("workload", None)
    if table is None:
        return None
    table.check_keys(("children", "requester", "spawn_within", "run_max", "draw_routes",
                      "sessions", "tree_share", "tree_depth", "tree_fan_out", "swarm"))
    requester = table.text("requester", session_keys[0])
    if requester not in session_keys:
        raise table.fail("requester", f"{requester!r} is not one of the [[sessions]]")
    children = table.integer("children", minimum=1, maximum=MAX_CHILDREN - scripted)
    return WorkloadDef(
        children=children,
        requester=requester,
        spawn_within_ms=table.seconds("spawn_within", 60, maximum=MAX_TIME_S),
        run_max_ms=table.seconds("run_max", 600, minimum=1, maximum=MAX_TIME_S),
        draw_routes=table.boolean("draw_routes", False),
        sessions=table.integer("sessions", 1, minimum=1, maximum=MAX_SESSIONS),
        tree_share=float(table.number("tree_share", 0.15, minimum=0.0, maximum=1.0)),
        tree_depth=table.integer("tree_depth", 3, minimum=1, maximum=MAX_TREE_DEPTH),
        tree_fan_out=table.integer("tree_fan_out", 5, minimum=1, maximum=MAX_TREE_FAN_OUT),
        swarm=table.boolean("swarm", False),
    )


def _limits(root: Node) -> tuple[SpawnLimits, bool]:
    """``[limits]`` (reference §c15): each key optional; an absent key leaves that limit off."""
    table = root.node("limits", None)
    if table is None:
        return SpawnLimits(), False
    table.check_keys(("max_spawn_depth", "max_children_per_agent", "max_concurrent", "draw"))
    limits = SpawnLimits(
        table.integer("max_spawn_depth", None, minimum=DEPTH_RANGE[0], maximum=DEPTH_RANGE[1]),
        table.integer("max_children_per_agent", None, minimum=CHILDREN_RANGE[0],
                      maximum=CHILDREN_RANGE[1]),
        table.integer("max_concurrent", None, minimum=CONCURRENT_RANGE[0],
                      maximum=CONCURRENT_RANGE[1]))
    draw = table.boolean("draw", False)
    if draw and root.node("workload", None) is None:
        raise table.fail("draw", "needs a [workload] (the seed draws smaller limits for it)")
    return limits, draw


def _faults(root: Node) -> FaultsDef:
    table = root.node("faults", None)
    if table is None:
        return FaultsDef((), False, DEFAULT_HEAL_S * 1000)
    table.check_keys(("kinds", "swarm", "heal_at"))
    raw = table.data.get("kinds", [])
    if isinstance(raw, str) and raw != "all":
        raise table.fail("kinds", f'must be an array of fault kinds or "all", not {raw!r}')
    kinds = tuple(FAULT_KINDS) if raw == "all" else table.strings("kinds", ())
    for index, kind in enumerate(kinds):
        if kind not in FAULT_KINDS:
            raise table.fail_item("kinds", index, f"unknown fault kind {kind!r} "
                                  f"(known: {', '.join(FAULT_KINDS)}, or \"all\")")
    return FaultsDef(kinds, table.boolean("swarm", False),
                     table.seconds("heal_at", DEFAULT_HEAL_S, maximum=MAX_TIME_S))
