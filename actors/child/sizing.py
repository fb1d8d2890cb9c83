"""The world's hook that sizes a child's final answer as its step begins to stream (issue 36's
boundary draws; the world's side is ``sim/world/aims.py``).

Only a child spawned with ``reply_to_cap`` is sized. The child tells the hook what its end will
record besides the text: the instant the step ends if nothing stops it, and the token usage its
earlier messages report; the hook answers the step to stream (its text and token report). The
model never sizes an answer itself: without a hook the step streams as scripted.
"""

from __future__ import annotations

from typing import Protocol

from actors.child.output import JsonObject
from actors.child.steps import token_usage
from actors.messages import ChildSpec, StepSpec


class ReplySizer(Protocol):
    def final_step(self, run_id: str, spec: ChildSpec, step: StepSpec, ends_at_ms: int,
                   usage_before: tuple[int, int] | None) -> StepSpec:
        """The final step to stream in place of ``step``."""


def sized(sizer: ReplySizer | None, run_id: str, spec: ChildSpec, step: StepSpec,
          now_ms: int, events: list[JsonObject]) -> StepSpec:
    """``step`` (the run's last), as the hook sizes it if the child is aimed."""
    if sizer is None or spec.reply_to_cap is None:
        return step
    return sizer.final_step(run_id, spec, step, now_ms + step.duration_ms, token_usage(events))
