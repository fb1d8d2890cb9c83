"""Builds a world from a scenario and runs it: actors in nurseries under the harness.

Ownership is the nursery tree: the root nursery (the gateway process) owns each requester session
and the delivery actor; each requester session's own nursery owns its children's runs. The store
lives beside the actors, like a database file, and survives a delivery-actor crash.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import trio

from actors import addresses
from actors.delivery.shell import run_delivery
from actors.gateway.core import Route
from actors.gateway.shell import run_gateway
from actors.messages import (
    AbortChild,
    ChildSpec,
    CleanupSession,
    HistoryRead,
    RunHistoryRead,
    StatusRead,
)
from actors.mutants import MUTANT_LANE_NEWEST_FIRST, MUTANT_SESSION_QUEUE_NEWEST_FIRST
from actors.nesting.lane import Lane
from actors.nesting.session_queue import SessionQueue
from actors.permissions import Caller
from actors.requester.shell import run_requester
from actors.runtime import Crash, Port
from actors.store.durable import RunStore
from actors.yields.turns import ReplyMode
from sim import invariants
from sim.choices import Chooser, Schedule
from sim.determinism import seed_trio_scheduler
from sim.faults.findings_hold import answered
from sim.faults.plan import ArmedFault, FaultPlan, TimelineEvent
from sim.kernel import ActorPort, Kernel, run_trio
from sim.scenario import Scenario, SessionDef, WorkloadDef
from sim.trace import Trace
from sim.world import observe as world_observe
from sim.world import turns as world_turns
from sim.world.aims import CapAim
from sim.world.clock import VirtualClock
from sim.world.control import Control, ControlDesk
from sim.world.draws import child as world_child
from sim.world.draws import edges as world_edges
from sim.world.draws import features as world_features
from sim.world.draws import lifecycle as world_lifecycle
from sim.world.draws import reach as world_reach
from sim.world.draws import routes as world_routes
from sim.world.draws import tree as world_tree
from sim.world.draws import workload as world_workload
from sim.world.draws.private import draw_reset_race, draw_status_check, refused
from sim.world.probe_book import ProbeBook
from sim.world.redrive import OperatorDesk
from sim.world.restart import RestartDesk
from sim.world.result import RunResult as RunResult

# Bounds on one run (a limit on everything): agenda steps and trace records, raised for a world
# of more than a few thousand children to this many per child (sim/bench/scale.py).
MAX_STEPS = 200_000
MAX_RECORDS = 1_000_000
PER_CHILD = 100
# The note a model exception leaves: how many kernel steps the run took before it (SPEC §5).
STEPS_NOTE = "kernel steps before the exception: "


def versions() -> dict[str, str]:
    return {"handoff": _version(), "trio": trio.__version__}


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("handoff-sim")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0+source"


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    strategy: str | None = None,
    mutants: Sequence[str] | None = None,
    fault_kinds: Sequence[str] | None = None,
    replay: Schedule | None = None,
    replay_steps: int | None = None,
) -> RunResult:
    """Run ``scenario`` once, in a Trio run of its own (a sweep shares one: sim/world/batch.py).
    ``seed`` etc. override the scenario's own settings.

    ``replay`` follows a recorded schedule; with ``replay_steps`` only its first choices, after
    which the run draws its own from ``seed`` (a branch, SIM-11). Without a schedule, a
    scenario's ``[replay.choices]`` guide the run (a saved shrunk failure; sim/choices.py).
    """
    return execute(prepare(scenario, seed=seed, strategy=strategy, mutants=mutants,
                           fault_kinds=fault_kinds, replay=replay, replay_steps=replay_steps))


def execute(world: World) -> RunResult:
    """Run the world :func:`prepare` built to its end."""
    # One fixed stream for Trio's own batch order, never the run's seed: a batch of two or more
    # tasks (cancelled scopes wake outside the harness's hand-off, e.g. a reset killing several
    # children) is then ordered by what ran before it alone, so a branch that keeps a recorded
    # run's first choices under another seed (explore --from/--at, --guided) replays that
    # prefix exactly. Every ordering worth exploring is the Chooser's, recorded and shrinkable.
    seed_trio_scheduler(0)
    try:
        run_trio(world.main, world.clock)
    except Exception as exc:
        return world.finish(exc)
    return world.finish(None)


def prepare(
    scenario: Scenario,
    *,
    seed: int | None = None,
    strategy: str | None = None,
    mutants: Sequence[str] | None = None,
    fault_kinds: Sequence[str] | None = None,
    replay: Schedule | None = None,
    replay_steps: int | None = None,
) -> World:
    """The world :func:`run` runs, built and drawn up to its ``main``."""
    if replay is not None and (replay_steps is None or seed is None):
        seed = replay.seed
    seed = scenario.seed if seed is None else seed
    if replay is not None:
        # A schedule carries its whole configuration; it replays as it was recorded.
        strategy = replay.strategy
        mutants = replay.mutants
        fault_kinds = replay.fault_kinds
    strategy = strategy or scenario.strategy
    mutant_names = tuple(scenario.mutants if mutants is None else mutants)
    guides = None if replay is not None or scenario.replay is None else dict(scenario.replay)
    chooser = Chooser(seed, strategy, replay=replay, replay_steps=replay_steps, guides=guides)
    return World(scenario, seed, chooser, VirtualClock(), mutant_names,
                  fault_kinds)


class World:
    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        chooser: Chooser,
        clock: VirtualClock,
        mutant_names: tuple[str, ...],
        fault_kinds: Sequence[str] | None,
    ) -> None:
        self.scenario = scenario
        self.seed = seed
        self.chooser = chooser
        self.clock = clock
        self.mutant_names = mutant_names
        self.fault_kinds = None if fault_kinds is None else tuple(fault_kinds)
        self.mutants = mutants = frozenset(mutant_names)
        self.store = RunStore()
        self._children_by_run: dict[str, str] = {}
        self.end_reason = "not-run"
        kinds = scenario.faults.kinds if fault_kinds is None else tuple(fault_kinds)
        workload = scenario.workload
        # Swarm over features (sim/world/draws/features.py): drawn first, each on its own stream.
        self.features = world_features.every(0 if workload is None else workload.children)
        if workload is not None and workload.swarm:
            self.features = world_features.draw(chooser, workload.children)
        self.plan = FaultPlan.draw(chooser, kinds, scenario.faults.swarm,
                                   scenario.faults.heal_at_ms, self._child_of_run)
        if scenario.workload is not None:
            world_reach.long_outage(chooser, self.plan)
        self.kernel = Kernel(chooser, Trace(MAX_RECORDS), clock, self.plan.network,
                             self.plan.crash)
        self.probe_book = self.kernel.probes = ProbeBook(chooser)
        self.plan.kernel = self.kernel
        self.plan.crash_at = lambda at: self.kernel.at(at, "crash delivery", self._crash_parked)
        self.plan.answered = lambda run_id: answered(self.store.get(run_id))
        self._root: trio.Nursery | None = None
        # The top-level sessions as this run configures them (routing drawn by the seed when the
        # workload asks for it), and the number of the harness's last session-control request.
        self.sessions: dict[str, SessionDef] = {s.key: s for s in scenario.sessions}
        self.desk = ControlDesk(self.kernel, self.sessions, chunks="chunks" in self.features)
        self.operator = OperatorDesk(self.kernel, self.store)  # redrives and dismissals (DEL-16)
        self.restarts = RestartDesk(self.kernel, self.store, self.plan, chooser, mutants)
        self._memory: Callable[[], dict[str, Any]] | None = None  # the registry's, DEL-16
        self.limits = scenario.limits
        self.lane = Lane(None)
        self.session_queue = SessionQueue(  # each child session's own lane (one run at once)
            newest_first=MUTANT_SESSION_QUEUE_NEWEST_FIRST in mutants)
        self.specs: list[ChildSpec] = list(scenario.children)

    def _child_of_run(self, run_id: str) -> str | None:
        # Asked for every message the fault plan sees; a run's child never changes, so remember.
        child = self._children_by_run.get(run_id)
        if child is None:
            try:
                child = self._children_by_run[run_id] = self.store.get(run_id).child_id
            except KeyError:
                return None
        return child

    # -- the run -----------------------------------------------------------------------------

    def finish(self, error: Exception | None) -> RunResult:
        """The run's result once :meth:`main` has returned, or ``error`` (the exception it
        raised, a lone one out of its nurseries) re-raised with the steps taken before it."""
        try:
            if error is not None:
                raise error
            runs = tuple(map(self.kernel.trace.share_fields, self.store.each_run()))
        except Exception as exc:  # a model exception: explore still counts the steps it took
            exc.add_note(f"{STEPS_NOTE}{self.kernel.steps}")
            raise
        finally:
            self.store.close()
        trace, chooser, kernel = self.kernel.trace, self.chooser, self.kernel
        return RunResult(
            scenario=self.scenario,
            seed=self.seed,
            strategy=chooser.strategy,
            mutants=self.mutant_names,
            trace=trace,
            schedule=attrs.evolve(chooser.schedule(versions()), mutants=self.mutant_names,
                                  fault_kinds=self.fault_kinds, scenario_path=self.scenario.path,
                                  scenario_text=self.scenario.source or None),
            end_reason=self.end_reason,
            end_ms=kernel.now_ms,
            violations=tuple(invariants.check(trace.records)),
            runs=runs,
            span_marks=chooser.span_marks,
            probes=dict(kernel.probes),
            steps=kernel.steps,
            moments=dict(self.probe_book.moments),
        )

    async def main(self) -> None:
        kernel = self.kernel
        kernel.emit(addresses.HARNESS, "world.start", {
            "scenario": self.scenario.name, "seed": self.seed, "strategy": self.chooser.strategy,
            "mutants": list(self.mutant_names), "faults": dict(self.plan.rates),
            "features": {"on": self.features.names(), "children": self.features.children},
            "versions": versions(), "archive_after_minutes": self.scenario.archive_after_minutes})
        children = list(self.scenario.children)
        workload = self.scenario.workload
        features = self.features
        if workload is not None and workload.draw_routes and "routes" in features:
            self.sessions[workload.requester] = world_routes.draw_routing(
                self.chooser, self.sessions[workload.requester])
        limits = self.scenario.limits
        if self.scenario.draw_limits and "limits" in features:
            limits = world_reach.narrow_lane(self.chooser, world_tree.draw_limits(
                self.chooser, limits))
        kernel.emit(addresses.HARNESS, "world.limits", attrs.asdict(limits))
        self.limits, self.lane = limits, Lane(limits.max_concurrent,
                                              newest_first=MUTANT_LANE_NEWEST_FIRST in self.mutants)
        turns, lifecycle = self.scenario.turns, self.scenario.lifecycle
        timeline = self.scenario.timeline
        reply_modes = {s.key: ReplyMode(s.visible_replies) for s in self.sessions.values()}
        if workload is not None:
            children += world_workload.draw_children(self, workload, len(children))
            world_lifecycle.draw_gateway_restart(self.chooser, self.plan, children, self.restarts)
            if not turns and "turns" in features:  # a scenario's own turns are what it scripts
                children, turns, lifecycle = world_turns.draw(
                    self.chooser, workload.requester, children, workload.run_max_ms,
                    self.scenario.until_ms)
                turns = draw_status_check(self.chooser, children, turns)
                children = world_reach.big_finding(self.chooser, children, turns)
                if "nesting" in features:
                    children, slow = world_reach.wave_descendant(
                        self.chooser, self.plan, limits, children, turns,
                        functools.partial(self._draw_child, workload))
                    timeline += (slow,) if slow is not None else ()
                race = draw_reset_race(self.chooser, children, turns)
                wake = world_reach.wake_race(self.chooser, children, turns,
                                             (*lifecycle, *race.lifecycle))
                lifecycle = self.scenario.lifecycle + lifecycle + race.lifecycle + wake.lifecycle
                timeline += race.timeline + wake.timeline
                world_edges.wake(self.chooser, self.plan, children, turns, lifecycle)
                if self.chooser.chance("workload:turns", 0.45):
                    reply_modes[workload.requester] = ReplyMode.MESSAGE_TOOL
        kernel.trace.limit = max(MAX_RECORDS, PER_CHILD * len(children))
        self.specs = children
        async with trio.open_nursery() as root:
            self._root = root
            for session in self.sessions.values():
                self.desk.record_session(session.key, reply_modes[session.key].value)
                self._start_requester(root, session.key, reply_modes[session.key])
            # A child that spawns children is itself a requester: its session receives their
            # completions as internal updates (DEL-4).
            # So is each top-level session a big workload spreads its children over.
            for key in dict.fromkeys(c.requester for c in children
                                     if c.requester not in self.sessions):
                self.desk.record_session(key)
                self._start_requester(root, key)
            self._start_delivery()
            self._start_gateway(root)
            # A refused spawn never runs, so nothing in its session spawns its children (PRV-4).
            self.desk.never_run({c.id: c for c in reversed(children)}.values(), refused)
            for child in children:
                if child.parent is not None or child.requester not in self.sessions:
                    self.desk.spawn(child)
            # Top-level children are spawned by their session's turns.
            world_turns.schedule(kernel, list(self.sessions), turns, lifecycle, children,
                                 self.desk.spawn_request, self.desk.drop, self.desk.drivers)
            for event in timeline:
                self._schedule_fault(event)
            for t_ms in self.plan.parked_crash_times():
                kernel.at(t_ms, "crash delivery while it waits", self._crash_parked)
            kernel.at(self.scenario.faults.heal_at_ms, "heal",
                      lambda: kernel.emit(addresses.HARNESS, "world.heal", {}))
            until_ms = self.scenario.until_ms
            if (self.operator.late_until_ms or 0) > until_ms:  # a redrive a week on (§c18)
                world_turns.finish_open_turns(kernel, until_ms, self.desk.drivers,
                                              self.desk.spawn_request)
                until_ms = self.operator.late_until_ms or until_ms
            self.end_reason = await kernel.run(until_ms, max(MAX_STEPS, PER_CHILD * len(children)))
            world_observe.emit_final_state(kernel, self.store, self._memory)
            kernel.emit(addresses.HARNESS, "world.end", {"reason": self.end_reason,
                                                 "steps": kernel.steps, "until_ms": until_ms})
            kernel.closed = True
            root.cancel_scope.cancel()

    def _crash_parked(self) -> None:
        self.kernel.crash_parked(addresses.DELIVERY)  # a no-op while it is down or busy

    def _start_requester(self, root: trio.Nursery, session_key: str,
                         reply_mode: ReplyMode = ReplyMode.AUTO) -> None:
        owners = self.desk.owners(session_key)

        async def body(port: ActorPort) -> None:
            await run_requester(port, session_key, self.store, self.mutants, owners,
                                self.limits, self.lane, reply_mode, self.session_queue,
                                self.restarts.gate, CapAim(self.store))

        self.kernel.spawn(root, addresses.requester(session_key), body)

    def _start_gateway(self, root: trio.Nursery) -> None:
        chunks = "chunks" in self.features
        routes = {s.key: Route(s.channel, s.chunk_chars if chunks else None)
                  for s in self.scenario.sessions}

        async def body(port: ActorPort) -> None:
            await run_gateway(port, routes, self.plan, self.mutants)

        self.kernel.spawn(root, addresses.GATEWAY, body)

    def _start_delivery(self) -> None:
        assert self._root is not None
        # The harness's own record of (re)starting the delivery process: the oracles date a
        # restart by it, never by the process's own ``delivery.start`` (issue 36).
        self.kernel.emit(addresses.HARNESS, "world.restart", {"process": addresses.DELIVERY})
        routes = {key: session.routing for key, session in self.sessions.items()}

        def expose(memory: Callable[[], dict[str, Any]]) -> None:
            self._memory = memory

        async def body(port: Port) -> None:
            await run_delivery(port, self.store, self.mutants, routes, expose,
                               60_000 * self.scenario.archive_after_minutes)

        self.kernel.spawn(self._root, addresses.DELIVERY, body, on_crash=self._on_delivery_crash)

    def _on_delivery_crash(self, port: ActorPort, crash: Crash) -> None:
        delay = self.plan.restart_delay_ms()
        self.kernel.at(self.kernel.now_ms + delay, "restart delivery", self._start_delivery)

    def _schedule_fault(self, event: TimelineEvent) -> None:
        kernel = self.kernel
        child = event.child
        if event.fault == "delete-session":
            assert child is not None  # the loader requires it
            kernel.at(event.at_ms, f"delete session of {child}",
                      functools.partial(self._delete_session, child))
            return
        if event.fault in ("redrive", "dismiss"):
            assert child is not None  # the loader requires it
            self.operator.ask(event.at_ms, event.fault, child)
            return
        if event.fault in ("history-read", "abort", "cleanup", "archive-read", "status",
                           "compact", "steer"):
            assert child is not None  # the loader requires it
            spec = next(c for c in self.scenario.children if c.id == child)
            requester = spec.requester
            if event.fault == "steer":
                reply = event.reply or world_lifecycle.STEERED_REPLY.format(child=child)
                return self.desk.steer(event.at_ms, spec, event.run_ms, reply, event.caller)
            if event.fault == "abort":
                return self._schedule_abort(event.at_ms, requester, child, event.caller)
            read: Control = HistoryRead(child, event.limit, event.offset, event.include_tools)
            if event.fault == "cleanup":
                read = CleanupSession(child)
            elif event.fault == "archive-read":
                read = RunHistoryRead(child, event.limit, event.offset, event.include_tools)
            elif event.fault == "status":
                read = StatusRead(child)
            elif event.fault == "compact":
                return world_observe.compact_at(kernel, event.at_ms, requester, child)
            return self.desk.control(event.at_ms, f"{event.fault} {event.child}", requester,
                                     read, event.caller)
        if event.fault == "gateway-restart":
            return self.restarts.scripted(event)
        if event.fault == "crash" and event.point is None:
            def crash_now() -> None:
                self.plan.restart_after_ms = event.restart_after_ms
                if not kernel.crash_parked(addresses.DELIVERY, addresses.TIMELINE):
                    self.plan.restart_after_ms = None
                    kernel.emit(addresses.HARNESS, "timeline.noop", {"fault": "crash",
                                                             "why": "delivery is not running"})
            kernel.at(event.at_ms, "crash delivery", crash_now)
            return
        armed = ArmedFault(event, event.count)

        def arm() -> None:
            kernel.emit(addresses.HARNESS, "timeline.arm",
                        {"fault": event.fault, "child": event.child, "point": event.point})
            self.plan.armed.append(armed)

        kernel.at(event.at_ms, f"arm {event.fault}", arm)

    def _delete_session(self, child_id: str) -> None:
        world_tree.delete_session(self.kernel, self.store, self.specs, child_id,
                                  self.session_queue)

    def _schedule_abort(self, at_ms: int, requester: str, child_id: str,
                        caller: Caller | None = None) -> None:
        """The requester aborts its child at ``at_ms`` (it owns the child's scope)."""
        self.desk.control(at_ms, f"abort {child_id}", requester, AbortChild(child_id), caller)

    # -- seeded workload ---------------------------------------------------------------------

    def _draw_child(self, workload: WorkloadDef, child_id: str, i: int) -> ChildSpec:
        return world_child.draw_child(self.chooser, self.plan, self.features, workload,
                                      child_id, i)

    def _send_at(self, at_ms: int, child: ChildSpec, message: Control) -> None:
        self.desk.control(at_ms, f"{type(message).__name__} {child.id}", child.requester, message)


__all__ = ["RunResult", "run"]
