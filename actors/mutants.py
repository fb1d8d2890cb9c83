"""Known-bug variants of the model, switched on by name (SIM-8).

Each one reintroduces a real failure mode; exploring with it on must find a violation, with none on
must find none. The cores check membership in the frozenset they are given.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.output import ContentBlock, SessionEvent
from actors.registry import MUTANT_FRESH_KEY_AFTER_RESTART

MUTANT_LAST_ASSISTANT_MESSAGE = "last-assistant-message"

MUTANTS: dict[str, str] = {
    MUTANT_FRESH_KEY_AFTER_RESTART: (
        "a restarted delivery actor re-sends pending completions under a fresh idempotency key, "
        "so a completion that reached its requester before the crash reaches it again (DEL-3)"
    ),
    MUTANT_LAST_ASSISTANT_MESSAGE: (
        "the original seed-000 bug: the result reader takes the last assistant message even when "
        "its content is empty, losing the partial answer of a child cut off at its token limit "
        "(OUT-1)"
    ),
}


def last_assistant_message(events: Sequence[SessionEvent]) -> list[ContentBlock]:
    """The seed-000 bug: the content of the last ``assistant/message``, empty or not."""
    for event in reversed(events):
        if event["type"] == "assistant/message":
            return list(event["data"]["message"]["content"])
    return []
