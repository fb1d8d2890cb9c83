"""OUT-4..6: the four consumers of a child's output, all on the one rule in ``actors.child.output``.

Each consumer is a fold over what it really sees, so a long run or a big log is read once, and
each lives in its own module; the names are re-exported here:

* :mod:`~actors.child.consumers.in_process`: the in-process result reader folds the child-owned
  session events (``readResult``);
* :mod:`~actors.child.consumers.activation`: the continuable activation capture folds one
  epoch's events into ``subagent/end`` data;
* :mod:`~actors.child.consumers.sdk`: the SDK observer folds ``session.event`` notifications for
  the child's session id only;
* :mod:`~actors.child.consumers.acp`: the ACP observer folds ``agent_message_chunk`` text only,
  never whole messages.

The three that see session events share one turn fold (:mod:`~actors.child.consumers.turn`).
The wire views the two out-of-process backends receive are derived from the child's events by
:func:`sdk_notifications` and :func:`acp_messages`, so one simulated run can be checked across
all four (:mod:`~actors.child.consumers.views`). Each consumer keeps the real stop reason,
through its own mapping (OUT-6).
"""

from actors.child.consumers.acp import (
    ACP_PROMPT_ID,
    ACP_UPDATE_METHOD,
    AcpObserver,
    acp_messages,
    observe_acp,
)
from actors.child.consumers.activation import (
    ActivationCapture,
    LastEpochCapture,
    capture_activation,
)
from actors.child.consumers.in_process import InProcessReader, read_result
from actors.child.consumers.sdk import SDK_EVENT_METHOD, SdkObserver, observe_sdk, sdk_notifications
from actors.child.consumers.turn import SubagentResult, TurnFold, end_data, feed, turn_end_reason
from actors.child.consumers.views import ConsumerViews, consumer_views

__all__ = [
    "ACP_PROMPT_ID",
    "ACP_UPDATE_METHOD",
    "SDK_EVENT_METHOD",
    "AcpObserver",
    "ActivationCapture",
    "ConsumerViews",
    "InProcessReader",
    "LastEpochCapture",
    "SdkObserver",
    "SubagentResult",
    "TurnFold",
    "acp_messages",
    "capture_activation",
    "consumer_views",
    "end_data",
    "feed",
    "observe_acp",
    "observe_sdk",
    "read_result",
    "sdk_notifications",
    "turn_end_reason",
]
