"""The scenario's data: what a TOML scenario file describes, once loaded and checked.

Also the documented range of every number a scenario may hold (``docs/scenarios.md``): each is
checked at load time, before anything runs, so a typo like ``run_for = 1e308`` is a clear error
and not an overflow deep inside a run.
"""

from __future__ import annotations

import re

import attrs

from actors.gateway.routing import SessionRouting
from actors.messages import ChildSpec, Target
from actors.nesting.spawn_limits import NO_LIMITS, SpawnLimits
from actors.permissions import DEFAULT_OWNER
from actors.states import CrashPoint, DeliveryStatus, OutcomeStatus, values
from sim.faults.kinds import FaultKind
from sim.faults.plan import TimelineEvent
from sim.scenario.turns import LifecycleDef, TurnDef

OUTCOMES = tuple(s for s in values(OutcomeStatus) if s != OutcomeStatus.UNKNOWN)
DELIVERY_STATES = values(DeliveryStatus)
# Faults a timeline can script (child outcomes are scripted on the child itself).
TIMELINE_FAULTS: tuple[str, ...] = (
    FaultKind.SEND_TRANSIENT, FaultKind.SEND_PERMANENT, FaultKind.SEND_PARTIAL,
    FaultKind.SEND_OTHER, FaultKind.SEND_AMBIGUOUS, FaultKind.DUPLICATE, FaultKind.DELAY,
    FaultKind.CRASH, FaultKind.ABORT, FaultKind.CHUNK_FAIL, FaultKind.CHUNK_ABORT,
    FaultKind.ACK_SLOW, FaultKind.CALLBACK_FAIL, FaultKind.RECOVERY_FAIL,
    FaultKind.MIRROR_FAIL)
# The fields each scripted fault uses. Another field would silently keep the fault from ever
# matching (an armed fault with an actor or point matches only a crash), so it is an error.
_TIMELINE_FIELDS = {
    "send-transient": ("child", "count", "error", "chain"),
    "send-permanent": ("child", "count", "error", "chain"),
    "send-partial": ("child", "count", "error", "chain"),
    "send-other": ("child", "count", "error", "chain"),
    "send-ambiguous": ("child", "count"),
    "chunk-fail": ("child", "count", "error", "chain"),
    "chunk-abort": ("child", "count"),
    "ack-slow": ("child", "count", "delay"),
    "callback-fail": ("child", "count", "error"),
    "recovery-fail": ("child", "count"),
    "mirror-fail": ("child", "count"),
    "duplicate": ("child", "count"),
    "delay": ("child", "count", "delay"),
    "crash": ("actor", "point", "count", "restart_after"),
    "abort": ("child", "caller"),
    "steer": ("child", "caller", "run_for", "reply"),
    "history-read": ("child", "limit", "offset", "include_tools", "caller"),
    "cleanup": ("child", "caller"),
    "archive-read": ("child", "limit", "offset", "include_tools", "caller"),
    "status": ("child", "caller"),
    "compact": ("child",),
    "delete-session": ("child",),
    "redrive": ("child",),
    "dismiss": ("child",),
    "gateway-restart": ("restart_after", "lost", "notice_fails"),
}
# Timeline entries that are things the world does rather than faults (`event = ...`).
TIMELINE_EVENTS = ("abort", "steer", "history-read", "cleanup", "archive-read", "status", "compact",
                   "delete-session", "redrive", "dismiss", "gateway-restart")
# Where the delivery actor can crash (actors/delivery/shell.py names them).
CRASH_POINTS = values(CrashPoint)
DEFAULT_UNTIL_S = 6 * 3600
# A Gateway restart: how long the Gateway stays down unless ``restart_after`` says (seconds).
DEFAULT_GATEWAY_DOWN_S = 10
DEFAULT_HEAL_S = 20 * 60
_REQUIREMENT_ID = re.compile(r"^(OUT|DEL|YLD|PRV|FMT|SIM)-\d+[a-z]?$")



# Ranges. Times are virtual: up to 30 days of it. Counts stop at what one machine runs in one
# process (`handoff bench` measures runs of 8,000 children).
MAX_TIME_S = 30 * 24 * 3600
MAX_ARCHIVE_MINUTES = MAX_TIME_S // 60
CLEANUP_MODES = ("keep", "delete")
MAX_CHILDREN = 10_000          # [[children]] plus [workload] children, per scenario
MAX_SESSIONS = 1_000
MAX_TREE_DEPTH = 5            # maxSpawnDepth's range (reference §c15)
MAX_TREE_FAN_OUT = 20         # maxChildrenPerAgent's range (reference §c15)
MAX_TIMELINE = 10_000          # [[timeline]] entries
MAX_STEPS_PER_CHILD = 1_000
MAX_TOOL_CALLS = 1_000         # per step
MAX_REPLY_CHARS = 10_000_000   # reply_chars: ten million characters of generated reply
MAX_REPLY_UNIT = 1_000         # reply_unit: the text repeated to make reply_chars
MAX_CHUNK_CHARS = 100_000     # a channel's longest message
MAX_COUNT = 1_000_000          # fault counts, history limit/offset, expected receipts
MAX_TOKENS = 10**12            # a step's (or a one-step child's) reported token usage


@attrs.frozen
class SessionDef:
    """A top-level requester session. ``channel``, ``to``, ``thread``: the requester turn's
    captured origin (``webchat``: internal, ``deliver=false``; no channel: no origin);
    ``chunk_chars`` that channel's longest message (longer text is sent in chunks). ``route``
    (the stored route), ``binding`` and ``hook`` are the other routing facts (DEL-5,
    actors/gateway/routing.py); ``owners`` the persons with session-control permission (DEL-17)."""

    key: str
    channel: str | None = None
    chunk_chars: int | None = None
    to: str | None = None
    thread: str | None = None
    route: Target | None = None
    binding: Target | None = None
    hook: Target | None = None
    owners: tuple[str, ...] = (DEFAULT_OWNER,)
    visible_replies: str = "auto"  # actors.yields.turns.ReplyMode: auto or message_tool

    @property
    def routing(self) -> SessionRouting:
        origin = None if self.channel is None else Target(self.channel, self.to, self.thread)
        return SessionRouting(origin, self.route, self.binding, self.hook)


@attrs.frozen
class WorkloadDef:
    """Children drawn from the seed: how many, for which requester."""

    children: int
    requester: str
    spawn_within_ms: int = 60_000
    run_max_ms: int = 10 * 60_000
    # DEL-5: the seed draws the requester session's routing facts (sim/world/draws/routes.py).
    draw_routes: bool = False
    # The shape of big workloads (sim/world/draws/trees.py): top-level requester sessions the
    # children are spread over, and the trees drawn children grow (the share spawned by an
    # earlier child, the depth counting a top-level child as 1, children per child).
    sessions: int = 1
    tree_share: float = 0.15
    tree_depth: int = 3
    tree_fan_out: int = 5
    # Swarm over features (sim/world/draws/features.py): each run draws which of the world's
    # features are on and how many of the children it runs; off, every feature is on for every
    # run.
    swarm: bool = False


@attrs.frozen
class FaultsDef:
    kinds: tuple[str, ...]
    swarm: bool
    heal_at_ms: int


@attrs.frozen
class ChildExpectation:
    child: str
    delivery: str | None
    received: int | None
    status: str | None
    text: str | None
    line: int | None
    # DEL-5: "channel chat [thread]" every chunk of its completion went to, or "none" (no channel).
    sent_to: str | None = None
    # Nesting (docs/nesting.md): the spawn is refused (never registered); every completion of
    # it is read by this session (a fallback, DEL-4).
    refused: bool = False
    reader: str | None = None
    # PRV-4: the spawn is refused with an error containing this (it never runs).
    refused_with: str | None = None
    # YLD-1: how many settle wakes naming it (a yield batch's or a wave's) the requester took.
    woken: int | None = None


@attrs.frozen
class Expectation:
    violations: tuple[str, ...] = ()
    children: tuple[ChildExpectation, ...] = ()
    refusals: int | None = None  # DEL-17: session-control actions the sessions refused
    # Code probes (actors/probes.py) the run must hit: the moments of the timeline a saved run
    # keeps, so a replay the world's draws moved off that timeline fails instead of passing
    # vacuously (docs/scenarios.md "Saved runs"). ``reaches_line``: where the file says so.
    reaches: tuple[str, ...] = ()
    reaches_line: int | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Scenario:
    path: str
    name: str
    description: str
    covers: tuple[str, ...]
    seed: int
    strategy: str
    mutants: tuple[str, ...]
    until_ms: int
    sessions: tuple[SessionDef, ...]
    children: tuple[ChildSpec, ...]
    workload: WorkloadDef | None
    faults: FaultsDef
    timeline: tuple[TimelineEvent, ...]
    expect: Expectation
    # `[limits]`: spawn limits (reference §c15); off when the table is absent.
    limits: SpawnLimits = NO_LIMITS
    # `[limits] draw = true`: the seeded workload sometimes runs under smaller limits.
    draw_limits: bool = False
    # `[replay.choices]`: a saved run's choices per subsystem, followed leniently
    # (sim/choices.py); a saved shrunk failure is one run whatever the seed.
    replay: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    # The TOML text it was loaded from, so a schedule can carry the scenario with it. Not part of
    # what the scenario is: two texts that say the same thing load to equal scenarios.
    source: str = attrs.field(default="", eq=False, repr=False)
    # Requester turns and session resets/deletes (sim/scenario/turns.py).
    turns: tuple[TurnDef, ...] = ()
    lifecycle: tuple[LifecycleDef, ...] = ()
    # archiveAfterMinutes (reference §c18): a delete-mode run is archived its end + this many
    # minutes (0: never).
    archive_after_minutes: int = 0


