"""The harness is the scheduler: a virtual-time agenda that wakes exactly one actor at a time.

Actors are Trio tasks in nurseries that mirror ownership, but they never race: every actor parks in
:meth:`ActorPort.receive` or :meth:`ActorPort.sleep`, and only the harness wakes them, one hand-off
at a time, in an order the :class:`~sim.choices.Chooser` picks among the events due at the same
virtual instant. Time moves only when the harness jumps the clock to the next agenda entry, so there
is one task switch per hand-off and no Trio sleeps at all (an autojump sleep costs two epoll calls;
see ``shared/reference/trio-determinism.md``). Ties at equal time keep insertion order (a
heap keyed by ``(time, seq)``, as SimPy's) and the chooser may permute them.

An exception escaping an actor (other than a modelled :class:`Crash`) crashes the whole run: a bug
must never vanish into a quiet result.
"""

from __future__ import annotations

import enum
import heapq
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import attrs
import outcome
import trio
import trio.lowlevel

from actors import probes
from actors.events import Event
from actors.runtime import Crash
from sim.choices import Chooser
from sim.determinism import cancelled, others_runnable
from sim.determinism import run_trio as run_trio
from sim.trace import Trace

# How many events due at the same instant the chooser may pick from. Bounded so that a burst of
# thousands of simultaneous events costs O(1) per step instead of O(n).
CHOICE_WINDOW = 16


class EndReason(enum.StrEnum):
    """Why :meth:`Kernel.run` stopped."""

    QUIESCENT = "quiescent"  # nothing left to do
    TIME_LIMIT = "time-limit"
    STEP_LIMIT = "step-limit"


class Parked(enum.StrEnum):
    """Where a parked actor waits."""

    RECEIVE = "receive"
    SLEEP = "sleep"


# The agenda's entries. Each names the actor it is for (what the chooser picks among) and
# dispatches itself (one call a step, not a chain of type tests), unless *inert* when due: a timer
# of a dead incarnation or not ``wanted`` (its actor would find nothing to do, as after a
# ``clearTimeout``), a wake-up of a sleep that already ended. An inert entry is dropped unseen
# and is no step (SPEC §5); it still takes its place in a tie (``_pick_tie``), as if dispatched.


@attrs.define(eq=False)
class _Deliver:
    src: str
    dst: str
    message: Any

    def inert(self) -> bool:
        return False

    def target(self) -> str:
        return self.dst

    def dispatch(self, kernel: Kernel) -> None:
        port = kernel._ports.get(self.dst)
        if port is None or not port.alive:
            kernel.emit("network", "drop", {"src": self.src, "dst": self.dst,
                                            "message": type(self.message).__name__})
        else:
            kernel._hand_to(port, self.message)


@attrs.define(eq=False)
class _Timer:
    port: ActorPort
    payload: Any
    wanted: Callable[[], bool] | None = None  # asked when due: does it still matter?

    def inert(self) -> bool:
        return not self.port.alive or (self.wanted is not None and not self.wanted())

    def target(self) -> str:
        return self.port.name

    def dispatch(self, kernel: Kernel) -> None:  # alive and wanted (``inert``)
        kernel._hand_to(self.port, self.payload)


@attrs.define(eq=False)
class _Wake:
    port: ActorPort
    token: int

    def inert(self) -> bool:
        port = self.port
        return not (port.alive and port.waiting is Parked.SLEEP and port.sleep_token == self.token)

    def target(self) -> str:
        return self.port.name

    def dispatch(self, kernel: Kernel) -> None:  # its sleeper still sleeps (``inert``)
        kernel._wake(self.port, outcome.Value(None))


@attrs.define(eq=False)
class _Action:
    label: str
    fn: Callable[[], None]

    def inert(self) -> bool:
        return False

    def target(self) -> str:
        return "harness:" + self.label

    def dispatch(self, kernel: Kernel) -> None:
        self.fn()


_Entry = _Deliver | _Timer | _Wake | _Action
_Item = tuple[int, int, _Entry]  # (due time, insertion order, entry): the agenda's order

# Where and when a message arrives: (delay, destination, message) for each copy; () loses it.
NetworkHook = Callable[[str, str, Any], Sequence[tuple[int, str, Any]]]
CrashHook = Callable[[str, str], bool]


class Clock(Protocol):  # Trio's clock as the kernel moves it (sim/world/clock.py's)
    def jump(self, seconds: float) -> None: ...


def _perfect_network(src: str, dst: str, message: Any) -> Sequence[tuple[int, str, Any]]:
    return ((0, dst, message),)


def _no_crash(actor: str, point: str) -> bool:
    return False


# The mailbox of every dead incarnation: holds nothing (an append is dropped).
_NO_MAIL: deque[Any] = deque(maxlen=0)


@attrs.define(eq=False)
class ActorPort:
    """One incarnation of one actor: its mailbox and how the harness wakes it."""

    kernel: Kernel
    name: str
    incarnation: int
    task: trio.lowlevel.Task | None = None
    mailbox: deque[Any] = attrs.field(factory=deque)
    waiting: Parked | None = None  # while parked
    alive: bool = True
    sleep_token: int = 0

    @property
    def now_ms(self) -> int:
        return self.kernel.now_ms

    async def receive(self) -> Any:
        if self.mailbox:
            return self.mailbox.popleft()
        self.waiting = Parked.RECEIVE
        return await self.kernel._park(self)

    async def sleep(self, delay_ms: int) -> None:
        assert delay_ms >= 0
        self.sleep_token += 1
        self.kernel._push(self.kernel.now_ms + delay_ms, _Wake(self, self.sleep_token))
        self.waiting = Parked.SLEEP
        await self.kernel._park(self)

    def send(self, dst: str, message: Any) -> None:
        self.kernel.send(self.name, dst, message)

    def set_timer(self, delay_ms: int, payload: Any,
                  wanted: Callable[[], bool] | None = None) -> None:
        assert delay_ms >= 0
        self.kernel._push(self.kernel.now_ms + delay_ms, _Timer(self, payload, wanted))

    def crash_point(self, point: str) -> None:
        if self.kernel.crash_hook(self.name, point):
            raise Crash(point)

    def choose(self, subsystem: str, n: int) -> int:
        return self.kernel.chooser.choose(subsystem, n)

    def emit(self, event: Event) -> None:
        kernel = self.kernel
        if not kernel.closed:
            kernel.trace.append(kernel.now_ms, self.name, event.kind, event.to_json())

    def probe(self, name: str) -> None:
        self.kernel.probe(name)

    def spawn(self, nursery: trio.Nursery, name: str,
              body: Callable[[ActorPort], Awaitable[None]]) -> None:
        self.kernel.spawn(nursery, name, body)

    def _abort(self, raise_cancel: Any) -> trio.lowlevel.Abort:
        # Cancelling the actor's scope (a child run aborted by its requester, or the end of the
        # world) wakes it outside the harness's own hand-off, so count it as running.
        self.waiting = None
        self.kernel._running += 1
        return trio.lowlevel.Abort.SUCCEEDED


class Kernel:
    """Virtual time, the agenda, the actors' ports and the trace of one run."""

    def __init__(self, chooser: Chooser, trace: Trace | None = None, clock: Clock | None = None,
                 network: NetworkHook = _perfect_network,
                 crash_hook: CrashHook = _no_crash) -> None:
        self.chooser = chooser
        self.trace = trace if trace is not None else Trace()
        self.clock = clock
        self.network = network
        self.crash_hook = crash_hook
        self.now_ms = 0
        self.steps = 0
        self.closed = False
        # A heap of (time, seq, entry); seq is unique, so entries themselves are never compared.
        self._agenda: list[_Item] = []
        self._seq = 0
        self._ports: dict[str, ActorPort] = {}
        self._incarnations: dict[str, int] = {}
        self._running = 0
        self._harness: trio.lowlevel.Task | None = None
        # While run() waits: its bounds (the actor parking last takes entries, _take_entries),
        # and what the harness must return or raise when woken.
        self._bounds: tuple[int, int] | None = None
        self._ended: EndReason | BaseException | None = None
        # The actor whose park is taking agenda entries, and what it is woken with if one of
        # them is for itself (it cannot be rescheduled before it has suspended).
        self._parking: ActorPort | None = None
        self._self_wake: outcome.Outcome[Any] | None = None
        # Code probes hit in this run: name -> hits, in the order first hit (actors/probes.py).
        self.probes: Counter[str] = Counter()

    # -- trace ---------------------------------------------------------------------------------

    def emit(self, actor: str, kind: str, data: dict[str, Any]) -> None:
        if not self.closed:
            self.trace.append(self.now_ms, actor, kind, data)

    def probe(self, name: str) -> None:
        if name not in self.probes:  # its first hit (a name is checked once a run)
            probes.check(name)
        if not self.closed:  # the world's end cancelling everyone is not a condition of the model
            self.probes[name] += 1

    # -- actors --------------------------------------------------------------------------------

    def spawn(self, nursery: trio.Nursery, name: str,
              body: Callable[[ActorPort], Awaitable[None]],
              on_crash: Callable[[ActorPort, Crash], None] | None = None) -> ActorPort:
        """Start a new incarnation of actor ``name`` in ``nursery`` (which owns it)."""
        old = self._ports.get(name)
        assert old is None or not old.alive, f"actor {name} is already running"
        incarnation = self._incarnations.get(name, 0) + 1
        self._incarnations[name] = incarnation
        port = ActorPort(self, name, incarnation)
        self._ports[name] = port
        self._running += 1
        nursery.start_soon(self._actor_main, port, body, on_crash, name=f"actor:{name}")
        return port

    async def _actor_main(self, port: ActorPort, body: Callable[[ActorPort], Awaitable[None]],
                          on_crash: Callable[[ActorPort, Crash], None] | None) -> None:
        port.task = trio.lowlevel.current_task()
        ended = False  # its body returned or crashed as modelled (not cancelled, not a bug)
        try:
            await body(port)
            ended = True
        except Crash as crash:
            port.alive = False
            self.emit(port.name, "crash", {"point": crash.point, "incarnation": port.incarnation})
            if on_crash is not None and not self.closed:
                on_crash(port, crash)
            ended = True
        finally:
            port.alive = False
            # A dead incarnation is never woken or handed mail again (the kernel checks
            # ``alive`` first), and its port stays in ``_ports`` to the end of the run: it
            # lets go of its Trio task and its mailbox (a big run keeps every child's port).
            port.task = None
            port.mailbox = _NO_MAIL
            self._running -= 1
            if self._running == 0 and self._harness is not None:
                self._take_entries(ended)

    def crash_parked(self, name: str, point: str = "parked") -> bool:
        """Kill actor ``name`` where it waits (its mailbox and timers die with it)."""
        port = self._ports.get(name)
        if port is None or not port.alive or port.waiting is None or port.task is None:
            return False
        self._wake(port, outcome.Error(Crash(point)))
        return True

    async def _park(self, port: ActorPort) -> Any:
        self._running -= 1
        if self._running == 0 and self._harness is not None:
            self._parking = port
            try:
                self._take_entries(not cancelled())
            finally:
                self._parking = None
            woken, self._self_wake = self._self_wake, None
            if woken is not None:
                # Woken by its own entry. It yields first only if another task would share
                # the next batch with it (alone, that batch would be its own).
                if others_runnable():
                    await trio.lowlevel.cancel_shielded_checkpoint()
                return woken.unwrap()
        return await trio.lowlevel.wait_task_rescheduled(port._abort)

    def _take_entries(self, here: bool) -> None:
        """Every actor is parked or gone: take the harness's next entries in the task that
        parked last (one Trio batch per hand-off, not two), exactly as the harness would. It is
        woken to end the run, to raise what taking an entry raised, or, not ``here`` (a task
        already cancelled, or ending in an error), to take the entries itself."""
        if here and self._bounds is not None:
            reason: EndReason | BaseException | None
            try:
                reason = self._advance(*self._bounds)
            except BaseException as exc:  # the harness's error, raised where it waits
                reason = exc
            if reason is None:
                return
            self._ended = reason
        task, self._harness = self._harness, None
        assert task is not None
        trio.lowlevel.reschedule(task)

    def _hand_to(self, port: ActorPort, value: Any) -> None:
        """Wake a receiving actor with ``value``; a sleeping one finds it in its mailbox."""
        if port.waiting is Parked.RECEIVE:
            self._wake(port, outcome.Value(value))
        else:
            port.mailbox.append(value)

    def _wake(self, port: ActorPort, what: outcome.Outcome[Any]) -> None:
        assert port.task is not None
        port.waiting = None
        self._running += 1
        if port is self._parking:  # still running its park: it picks this up there
            self._self_wake = what
        else:
            trio.lowlevel.reschedule(port.task, what)

    # -- the agenda ----------------------------------------------------------------------------

    def _push(self, t_ms: int, entry: _Entry) -> None:
        self._seq += 1
        heapq.heappush(self._agenda, (t_ms, self._seq, entry))

    def send(self, src: str, dst: str, message: Any) -> None:
        for delay, to, what in self.network(src, dst, message):
            self._push(self.now_ms + delay, _Deliver(src, to, what))

    def at(self, t_ms: int, label: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the harness at virtual time ``t_ms`` (scripted timeline events)."""
        self._push(max(t_ms, self.now_ms), _Action(label, fn))

    async def settle(self) -> None:
        """Wait until every actor is parked or gone."""
        if self._running > 0:
            self._harness = trio.lowlevel.current_task()

            def abort(_: Any) -> trio.lowlevel.Abort:
                self._harness = None
                return trio.lowlevel.Abort.SUCCEEDED

            await trio.lowlevel.wait_task_rescheduled(abort)

    async def run(self, until_ms: int, max_steps: int) -> EndReason:
        """Dispatch agenda entries until nothing is left, time runs out, or the step budget does;
        returns why it stopped. While it waits, the actor that parks last takes the entries."""
        self._bounds = (until_ms, max_steps)
        self._ended = None
        try:
            while True:
                await self.settle()
                reason, self._ended = self._ended, None
                if reason is None:  # every actor parked and none took the next entries
                    reason = self._advance(until_ms, max_steps)
                if isinstance(reason, BaseException):
                    raise reason
                if reason is not None:
                    return reason
        finally:
            self._bounds = None

    def _advance(self, until_ms: int, max_steps: int) -> EndReason | None:
        """Dispatch agenda entries until one wakes an actor (None) or the run must stop."""
        agenda = self._agenda
        while self._running == 0:
            if not agenda:
                return EndReason.QUIESCENT
            t_ms = agenda[0][0]
            if t_ms > until_ms:
                # Only housekeeping timers (``housekeeping = True``: the registry's sweeper,
                # days away) left past the end: the world did all it had to do.
                return EndReason.QUIESCENT if all(
                    isinstance(e, _Timer) and getattr(e.payload, "housekeeping", False)
                    for _, _, e in agenda) else EndReason.TIME_LIMIT
            if self.steps >= max_steps:
                return EndReason.STEP_LIMIT
            first = heapq.heappop(agenda)
            if agenda and agenda[0][0] == t_ms:
                first = self._pick_tie(first)
            entry = first[2]
            if t_ms != self.now_ms:
                if self.clock is not None:
                    self.clock.jump((t_ms - self.now_ms) / 1000)
                self.now_ms = t_ms
            if entry.inert():
                continue  # dispatching it would do nothing
            self.steps += 1
            entry.dispatch(self)
            if isinstance(entry, _Action) and self._parking is not None and cancelled():
                return None  # it cancelled the parking actor: Cancelled as that suspends
        return None

    def _pick_tie(self, first: _Item) -> _Item:
        """The chooser picks among the first entries due at ``first``'s time (popped in
        (time, seq) order); the others go back."""
        agenda = self._agenda
        ties = [first]
        while agenda and agenda[0][0] == first[0] and len(ties) < CHOICE_WINDOW:
            ties.append(heapq.heappop(agenda))
        try:
            picked = ties.pop(self.chooser.pick_event([e[2].target() for e in ties]))
        finally:
            for item in ties:
                heapq.heappush(agenda, item)
        return picked
