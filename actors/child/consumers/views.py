"""OUT-4: all four consumers' views of one child, so the simulator and tests can check them."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.child.consumers.acp import acp_messages, observe_acp
from actors.child.consumers.activation import capture_activation
from actors.child.consumers.in_process import read_result
from actors.child.consumers.sdk import observe_sdk, sdk_notifications
from actors.child.consumers.turn import SubagentResult
from actors.child.output import JsonObject, SessionEvent


@attrs.frozen
class ConsumerViews:
    in_process: SubagentResult
    activation: JsonObject
    sdk: SubagentResult
    acp: SubagentResult


def consumer_views(session_id: str, events: Sequence[SessionEvent]) -> ConsumerViews:
    """Every consumer's view of one child-owned suffix (one epoch), each from its own transport."""
    sdk = observe_sdk(session_id, sdk_notifications(session_id, events))
    acp = observe_acp(acp_messages(session_id, events))
    return ConsumerViews(read_result(events), capture_activation(events), sdk, acp)
