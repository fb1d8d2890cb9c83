"""Actor addresses: the one place that spells them.

Messages are addressed by these names, the trace names its actors by them, and scripted faults
and exports refer to them.
"""

from __future__ import annotations

DELIVERY = "delivery"
TIMELINE = "timeline"  # the scenario's scripted timeline, as a message source
HARNESS = "harness"


def requester(session_key: str) -> str:
    return f"requester:{session_key}"


def child(child_id: str) -> str:
    return f"child:{child_id}"
GATEWAY = "gateway"  # between the delivery actor and requester sessions and channels
