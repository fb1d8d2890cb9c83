"""The announce context block (FMT-1, reference §c5): the internal-runtime-context wrapper, one
``[Internal task completion event]`` per child run (several joined with ``---``), each with its
result data block, stats line (FMT-4) and reply instruction, fitted by the shared layout engine."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from actors.announce.labels import UNKNOWN, single_line, status_line, task_line
from actors.announce.layout import (
    DEFAULT_CAP,
    HEAD_FLOOR,
    FormattedPayload,
    Section,
    delivery_order,
    layout,
    section_text,
)
from actors.announce.result import ChildResult, Source
from actors.announce.stats import format_stats_line

CONTEXT_BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
CONTEXT_END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
CONTEXT_HEADER = "OpenClaw runtime context (internal):"
CONTEXT_NOTICE = (
    "This context is runtime-generated, not user-authored. Keep internal details private."
)
EVENT_HEADER = "[Internal task completion event]"
EVENT_SEPARATOR = "\n\n---\n\n"
INSTRUCTION_HEADER = "Instruction:"

ANNOUNCE_TYPES: dict[Source, str] = {"subagent": "subagent task", "cron": "cron job"}


class RequesterKind(enum.Enum):
    """Who reads the announce; decides the reply instruction (reference §c5, DEL-4)."""

    NESTED = "nested"
    TOP_LEVEL_COMPLETION = "top_level_completion"
    TOP_LEVEL = "top_level"


# Wording is ours: the reference only paraphrases it (docs/announce.md records the choice).
REPLY_INSTRUCTIONS: dict[RequesterKind, str] = {
    RequesterKind.NESTED: (
        "A child run you spawned has finished. Turn its result into a short internal update for "
        "your own requester: what was done, what is still open, and any concrete blocker. "
        "Continue unfinished work yourself before reporting. "
        "Reply NO_REPLY only if this exact update was already sent."
    ),
    RequesterKind.TOP_LEVEL_COMPLETION: (
        "A child run has finished and its result is ready for your review. Verify the result "
        "before you treat the original task as done. If more work is needed, continue it or "
        "record a follow-up; otherwise give the user a truthful update. "
        "Reply NO_REPLY only if this exact result is already visible to the user in this turn."
    ),
    RequesterKind.TOP_LEVEL: (
        "A child run has finished and its result is ready for your review. Verify the result "
        "before you treat the original task as done. If more work is needed, continue it or "
        "record a follow-up; otherwise give the user a truthful update in your normal voice. "
        "Do not copy this event text verbatim and keep session keys, stats and other internal "
        "details private. "
        "Reply NO_REPLY only if this exact result is already visible to the user in this turn."
    ),
}



def format_announce(
    children: Iterable[ChildResult],
    requester: RequesterKind,
    *,
    private: bool = False,
    cap: int = DEFAULT_CAP,
    floor: int = HEAD_FLOOR,
    cut_at_cap: bool = False,
) -> FormattedPayload:
    """The announce context block (FMT-1) for one or more completion events.

    ``private`` (``completionTarget: "parent"``) leaves the stats line out so that a retried
    hand-off carries exactly the same input (PRV-8); ``cut_at_cap``: the known-bug variant of
    :func:`actors.announce.layout.layout`."""
    ordered = delivery_order(children)
    instruction = REPLY_INSTRUCTIONS[requester]
    sections: list[Section] = []
    for child in ordered:
        key_field = single_line(child.session_key, UNKNOWN)
        before = (
            f"{EVENT_HEADER}\n"
            f"source: {child.source}\n"
            f"session_key: {key_field}\n"
            f"session_id: {single_line(child.session_id, UNKNOWN)}\n"
            f"type: {ANNOUNCE_TYPES[child.source]}\n"
            f"task: {task_line(child.task)}\n"
            f"status: {status_line(child.status, child.error)}\n"
            "\n"
        )
        stats = "" if private else f"\n\n{format_stats_line(child)}"
        after = f"{stats}\n\n{INSTRUCTION_HEADER}\n{instruction}"
        text, escaped_len = section_text(child)
        sections.append(Section(before, after, key_field, text, escaped_len))
    header = f"{CONTEXT_BEGIN}\n{CONTEXT_HEADER}\n{CONTEXT_NOTICE}\n\n"
    return layout(
        sections,
        [c.session_key for c in ordered],
        header=header,
        footer=f"\n{CONTEXT_END}",
        separator=EVENT_SEPARATOR,
        cap=cap,
        floor=floor,
        cut_at_cap=cut_at_cap,
    )
