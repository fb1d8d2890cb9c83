"""Scenarios as data: a TOML file describing a world, a scripted timeline and expectations.

``model`` holds the loaded types and the documented range of every number; ``loader`` reads and
checks a file; ``timeline`` its scripted faults and expectations. Loading checks everything before
anything runs and reports the first problem as ``file:line: field: what is wrong``. The format is
documented in ``docs/scenarios.md``.
"""

from __future__ import annotations

from actors.messages import ChildSpec
from sim.choices import MAX_SEED
from sim.faults.plan import TimelineEvent
from sim.scenario.loader import filler_text, load, loads, nested_requester
from sim.scenario.model import _REQUIREMENT_ID as _REQUIREMENT_ID
from sim.scenario.model import _TIMELINE_FIELDS as _TIMELINE_FIELDS
from sim.scenario.model import (
    CRASH_POINTS,
    DEFAULT_HEAL_S,
    DEFAULT_UNTIL_S,
    DELIVERY_STATES,
    MAX_CHILDREN,
    MAX_COUNT,
    MAX_REPLY_CHARS,
    MAX_SESSIONS,
    MAX_STEPS_PER_CHILD,
    MAX_TIME_S,
    MAX_TIMELINE,
    MAX_TOOL_CALLS,
    OUTCOMES,
    TIMELINE_EVENTS,
    TIMELINE_FAULTS,
    ChildExpectation,
    Expectation,
    FaultsDef,
    Scenario,
    SessionDef,
    WorkloadDef,
)

__all__ = [
    "CRASH_POINTS",
    "DEFAULT_HEAL_S",
    "DEFAULT_UNTIL_S",
    "DELIVERY_STATES",
    "MAX_CHILDREN",
    "MAX_COUNT",
    "MAX_REPLY_CHARS",
    "MAX_SEED",
    "MAX_SESSIONS",
    "MAX_STEPS_PER_CHILD",
    "MAX_TIMELINE",
    "MAX_TIME_S",
    "MAX_TOOL_CALLS",
    "OUTCOMES",
    "TIMELINE_EVENTS",
    "TIMELINE_FAULTS",
    "ChildExpectation",
    "ChildSpec",
    "Expectation",
    "FaultsDef",
    "Scenario",
    "SessionDef",
    "TimelineEvent",
    "WorkloadDef",
    "filler_text",
    "load",
    "loads",
    "nested_requester",
]
