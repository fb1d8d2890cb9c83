"""Fault plans: drawn from the seed (swarm testing) or scripted by a scenario's timeline.

A plan is consulted at each opportunity (a message handed to the network, a crash point, a child's
behaviour) and every draw goes through the run's :class:`~sim.choices.Chooser` with one subsystem
per fault kind, so turning one kind on does not shift another kind's draws. Faults strike only
before the heal time; after it the world runs fault-free so that liveness can be judged (VOPR's
safety phase, then liveness phase).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from actors import addresses
from actors.gateway.core import SENT, ChunkFate, ChunkVerdict
from actors.messages import (
    AbortRun,
    ChildEnded,
    Completion,
    CompletionAck,
    RecoveredAnswer,
    SendRejected,
)
from actors.nesting.lane import LaneGrant
from actors.nesting.session_queue import SessionGrant
from actors.records.send_error import SendError
from sim.choices import Chooser
from sim.faults.ack_aim import AckAim
from sim.faults.armed import ArmedFault as ArmedFault
from sim.faults.armed import ArmedFaults
from sim.faults.armed import TimelineEvent as TimelineEvent
from sim.faults.errors import (
    CALLBACK_ERRORS,
    CHUNK_ERRORS,
    OTHER_ERRORS,
    SEND_FAULTS,
    TRANSIENT_ERRORS,
)
from sim.faults.expiry_aim import ExpiryAim
from sim.faults.findings_hold import FindingsHold
from sim.faults.kinds import FAULT_KINDS as FAULT_KINDS
from sim.faults.kinds import FaultKind as FaultKind

# Rates a seed may give an enabled kind (per opportunity).
RATES = (0.02, 0.05, 0.1, 0.25)
# A crash strikes at every crash point of every restart: high rates make crash loops that only the
# heal ends, which cost much and find little, so crashes draw from lower rates.
KIND_RATES = {"crash": (0.01, 0.03, 0.06, 0.12),
              # One chance per nested child (a few a seed): high rates, or it is hardly seen.
              "delete-session": (0.25, 0.5, 0.75, 1.0)}
DEFAULT_RESTART_MS = 5_000

# A long delay (past the 120 s announce timeout when both legs are slow) strikes this often.
LONG_DELAY_SHARE = 0.125
# Outage lengths a seed may draw, in minutes (the longest outlast the 30-minute expiry).
OUTAGE_MINUTES = (2, 5, 12, 25, 45)
PARKED_CRASH_SPAN_MS = 15 * 60_000
# After a seeded transient refusal, how often the run's next tries go unanswered, and how many.
AMBIGUOUS_AFTER_REFUSAL = 0.25
TRIES_AFTER_REFUSAL = 3
# After a seeded transient refusal (crashes on), how often the delivery process dies during the
# wait before the next transport try (``delivery.crash-in-try-wait``, issue 12).
CRASH_IN_TRY_WAIT = 0.1


_IN_PROCESS = {addresses.DELIVERY, addresses.GATEWAY}
# Tuples, not ``A | B`` unions written in the call: a union is built anew at every message.
_STAYS_IN_PROCESS = (LaneGrant, SessionGrant, SendRejected, AbortRun)
_NAMES_A_RUN = (Completion, CompletionAck)
# A delay's record names the run and key of these (a recovered answer's too: DEL-2's oracle
# counts a held hand-off as an attempt that may have failed).
_NOTED_RUN = (Completion, CompletionAck, RecoveredAnswer)
# How many runs' last hand-off digests a plan remembers (see ``FaultPlan._text_digest``).
SENT_DIGESTS_KEPT = 16


class Emitter(Protocol):
    """What a plan needs of the kernel: the time and a way to leave a trace record."""

    now_ms: int

    def emit(self, actor: str, kind: str, data: dict[str, Any]) -> None: ...


class FaultPlan:
    """Seeded kinds with rates, plus scripted faults armed by the timeline."""

    def __init__(
        self,
        chooser: Chooser,
        rates: dict[str, float],
        heal_ms: int,
        child_of_run: Callable[[str], str | None],
    ) -> None:
        self.chooser = chooser
        self.rates = rates
        self.heal_ms = heal_ms
        self.armed = ArmedFaults()  # sim/faults/armed.py
        # Set by a scripted crash: how long the crashed actor stays down.
        self.restart_after_ms: int | None = None
        self.kernel: Emitter | None = None
        # Set by the world: put a crash of the delivery process (while it waits) on the agenda.
        self.crash_at: Callable[[int], None] | None = None
        # Parents' announcements held at the gateway until a nested child corrects its answer
        # (aimed by the world, sim/faults/findings_hold.py); set by the world: whether a run
        # that ended answered (ok, a visible answer: only then does its producer correct it).
        self.findings = FindingsHold()
        # Acknowledgements aimed at their send's answer timeout (sim/faults/ack_aim.py).
        self.ack_aim = AckAim()
        # Restarts of the delivery process aimed at a deadline (sim/faults/expiry_aim.py; the
        # world sets its ``crash_for`` and ``deadline_of``).
        self.expiry_aim = ExpiryAim()
        self.expiry_aim.heal_ms = heal_ms
        self.answered: Callable[[str], bool] = lambda run_id: False
        self._child_of_run = child_of_run  # run_id -> child_id
        # A seeded gateway outage: [start, end) in virtual ms and the error it answers with.
        self.outage: tuple[int, int, SendError] | None = None
        # The last text each recent run handed to the gateway, with its digest, oldest first.
        self._sent_digests: dict[str, tuple[str, str]] = {}
        if "send-outage" in rates and chooser.chance("fault:send-outage", rates["send-outage"]):
            start = 1000 * chooser.choose("fault:send-outage", 601)
            minutes = OUTAGE_MINUTES[chooser.choose("fault:send-outage", len(OUTAGE_MINUTES))]
            errors = TRANSIENT_ERRORS + OTHER_ERRORS
            self.outage = (start, start + 60_000 * minutes,
                           errors[chooser.choose("fault:send-outage", len(errors))])

    @classmethod
    def draw(
        cls, chooser: Chooser, kinds: Sequence[str], swarm: bool, heal_ms: int,
        child_of_run: Callable[[str], str | None],
    ) -> FaultPlan:
        """Swarm testing: the seed picks which of ``kinds`` are on, and each one's rate."""
        rates: dict[str, float] = {}
        for kind in kinds:
            if swarm and not chooser.chance(f"swarm:{kind}", 0.5):
                continue
            choices = KIND_RATES.get(kind, RATES)
            rates[kind] = choices[chooser.choose(f"swarm:{kind}:rate", len(choices))]
        return cls(chooser, rates, heal_ms, child_of_run)

    # -- helpers ---------------------------------------------------------------------------

    def _now(self) -> int:
        assert self.kernel is not None
        return self.kernel.now_ms

    def strikes(self, kind: str) -> bool:
        """Does a seeded fault of ``kind`` strike at this opportunity (only before the heal)?"""
        rate = self.rates.get(kind)
        if rate is None:  # the kind is off in this run: most opportunities end here
            return False
        assert self.kernel is not None
        if self.kernel.now_ms >= self.heal_ms:
            return False
        return self.chooser.chance(f"fault:{kind}", rate)

    def _note(self, kind: str, data: dict[str, Any]) -> None:
        assert self.kernel is not None
        self.kernel.emit("faults", "fault", {"kind": kind, **data})

    # -- the network -------------------------------------------------------------------------

    def network(self, src: str, dst: str, message: Any) -> Sequence[tuple[int, str, Any]]:
        """Where and when ``message`` arrives: a list of (delay, destination, message)."""
        if isinstance(message, ChildEnded):
            self._child_ended(message.run_id)
        elif isinstance(message, Completion) and dst == addresses.GATEWAY:
            assert self.kernel is not None
            # What the gateway was handed, as an outside observer sees it, stamped when the
            # delivery actor hands it over (before a crash of that process, if one follows).
            self.kernel.emit("gateway", "gateway.send", {
                "run_id": message.run_id, "key": message.key,
                "requester": addresses.requester(message.requester),
                "ended_at": message.ended_at_ms,
                # What the session would read, by digest: a retried hand-off's input (PRV-8).
                "text_sha256": self._text_digest(message.run_id, message.text)})
            child = self._child_of_run(message.run_id)
            self.ack_aim.sent(child, message.run_id, message.key, self.kernel.now_ms)
            self.expiry_aim.sent(child, message.run_id, message.key, self.kernel.now_ms)
        if src == addresses.TIMELINE or {src, dst} == _IN_PROCESS or isinstance(
                message, _STAYS_IN_PROCESS):
            # A lane's or a session queue's wake-up, a session's refusal and an abort's cascade
            # to the aborted run's session stay inside the gateway's process.
            # The delivery actor calls the gateway in its own process: no network between them
            # (the gateway's own faults act on its sends and acknowledgements).
            return ((0, dst, message),)
        child = None
        if isinstance(message, _NAMES_A_RUN):
            # A batch wake's run id stands for its child (an aimed delay names it).
            child = self._child_of_run(message.run_id) or (
                message.run_id if message.run_id.startswith("batch:") else None)
        self.chooser.about(child)  # for the shrinker: the draws below are about this child
        delay = 0
        armed = self.armed.take("delay", child=child)
        aimed = None
        if armed is None and isinstance(message, CompletionAck) and dst == addresses.GATEWAY:
            aimed = self.ack_aim.delay_ms(child, message.run_id, message.key, self._now())
        if armed is not None:
            delay = armed.delay_ms
        elif aimed is not None:
            delay = aimed
        elif self.strikes("delay"):
            delay = 1000 * (1 + self.chooser.choose("fault:delay", 60))
            if self.chooser.chance("fault:delay:long", LONG_DELAY_SHARE):
                delay += 1000 * self.chooser.choose("fault:delay:long", 121)
        if delay:  # a completion's or acknowledgement's names its run and key (redrive oracles)
            about = ({"run_id": message.run_id, "key": message.key}
                     if isinstance(message, _NOTED_RUN) else {})
            self._note("delay", {"dst": dst, "message": type(message).__name__,
                                 "delay_ms": delay, **about})
        deliveries = [(delay, dst, message)]
        if self.armed.take("duplicate", child=child) or self.strikes("duplicate"):
            extra = 1000 * self.chooser.choose("fault:duplicate", 10)
            self._note("duplicate", {"dst": dst, "message": type(message).__name__})
            deliveries.append((delay + extra, dst, message))
        return deliveries

    def _text_digest(self, run_id: str, text: str) -> str:
        """The ``gateway.send`` record's digest of ``text``, which ``run_id`` hands over.

        A run's retries hand over the same text again (three in four hand-offs of a default
        seed repeat their run's previous text; a text runs to 200,000 characters), so the
        digest of each recent run's last text is kept: an equal text costs a comparison
        instead of its UTF-8 encoding and SHA-256. At most ``SENT_DIGESTS_KEPT`` runs are
        kept, the oldest dropped first, so a big run holds no text for long."""
        kept = self._sent_digests.pop(run_id, None)
        if kept is not None and kept[0] == text:
            digest = kept[1]
        else:
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self._sent_digests[run_id] = (text, digest)
        if len(self._sent_digests) > SENT_DIGESTS_KEPT:
            del self._sent_digests[next(iter(self._sent_digests))]
        return digest

    # -- the gateway (actors.gateway.core.GatewayFaults) ---------------------------------------

    def chunk(self, run_id: str, key: str, index: int, total: int) -> ChunkVerdict:
        """The fate of one chunk the gateway sends (the whole send when ``total`` is 1): the
        send faults strike the first, the chunk faults a later one (after earlier ones went)."""
        child = self._child_of_run(run_id)
        self.chooser.about(child)
        if index == 0:
            # A batch wake's run id stands for its child in the armed faults only (an aimed
            # refusal names it, sim/world/draws/edges.py): the seeded draws keep still.
            return self._refusal(run_id, key, child, run_id if child is None and run_id
                                 .startswith("batch:") else None)
        if self.armed.take("chunk-abort", child=child) or self.strikes("chunk-abort"):
            self._note("chunk-abort", {"run_id": run_id, "key": key, "chunk": index})
            return ChunkVerdict(ChunkFate.ABORTED)
        armed = self.armed.take("chunk-fail", child=child)
        if armed is not None or self.strikes("chunk-fail"):
            errors = CHUNK_ERRORS
            error = (armed.error if armed is not None and armed.error else
                     errors[self.chooser.choose("fault:chunk-fail", len(errors))])
            self._note("chunk-fail", {"run_id": run_id, "key": key, "chunk": index,
                                      "error": error.to_json()})
            return ChunkVerdict(ChunkFate.FAILED, error)
        return SENT

    def _refusal(self, run_id: str, key: str, child: str | None,
                 wake: str | None = None) -> ChunkVerdict:
        """The gateway refuses a send at its first chunk: scripted, seeded, or during an outage;
        now and then its answer arrives twice (the copy lands while the next try waits)."""
        now = self._now()
        error = kind = None
        if self.outage is not None and self.outage[0] <= now < min(self.outage[1], self.heal_ms):
            kind, error = "send-outage", self.outage[2]
        for candidate, errors in SEND_FAULTS:
            if kind is not None:
                break
            armed = self.armed.take(candidate, child=child or wake)
            if armed is not None or self.strikes(candidate):
                kind = candidate
                error = (armed.error if armed is not None and armed.error else
                         errors[self.chooser.choose(f"fault:{candidate}", len(errors))])
        if kind is None and self.findings.holds(child):
            # Aimed: the parent's findings wait at the gateway for its child's correction.
            kind, error = FaultKind.SEND_OTHER, OTHER_ERRORS[
                self.chooser.choose("aim:findings-held", len(OTHER_ERRORS))]
        if kind is None or error is None:
            return SENT
        self._note(kind, {"run_id": run_id, "key": key, "error": error.to_json()})
        if (kind == FaultKind.SEND_TRANSIENT and child is not None
                and "send-ambiguous" in self.rates and self.chooser.chance(
                    "fault:send-ambiguous:after-refusal", AMBIGUOUS_AFTER_REFUSAL)):
            # Aimed: the acknowledgements of the run's next tries are lost, so an attempt
            # refused with a concrete error ends unanswered (the blocked warning keeps the
            # concrete one, DEL-9). On its own stream, so other draws keep still.
            self.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_AMBIGUOUS,
                                                       child=child), TRIES_AFTER_REFUSAL))
        if kind == FaultKind.SEND_TRANSIENT and "crash" in self.rates and \
                self.crash_at is not None and self.chooser.chance("aim:crash-in-try-wait",
                                                                  CRASH_IN_TRY_WAIT):
            # Aimed: the process dies while it waits the 5 s before the next transport try.
            self.crash_at(now + 1000 * (1 + self.chooser.choose("aim:crash-in-try-wait", 4)))
        echo = (1000 * self.chooser.choose("fault:duplicate", 5)
                if self.strikes("duplicate") else None)
        return ChunkVerdict(ChunkFate.FAILED, error, echo)

    def ack_delay_ms(self, run_id: str) -> int | None:
        """A session's acknowledgement on its way back: lost, slow (past the announce timeout)
        or at once."""
        child = self._child_of_run(run_id)
        self.chooser.about(child)
        if self.armed.take("send-ambiguous", child=child) or self.strikes("send-ambiguous"):
            self._note("send-ambiguous", {"run_id": run_id, "lost": "ack"})
            return None
        armed = self.armed.take("ack-slow", child=child)
        if armed is not None or self.strikes("ack-slow"):
            delay = (armed.delay_ms if armed is not None and armed.delay_ms else
                     1000 * (121 + self.chooser.choose("fault:ack-slow", 60)))
            self._note("ack-slow", {"run_id": run_id, "delay_ms": delay})
            return delay
        return 0

    def callback_error(self, run_id: str) -> str | None:
        """The receive callback after a confirmed hand-off: it fails now and then (DEL-9)."""
        child = self._child_of_run(run_id)
        self.chooser.about(child)
        armed = self.armed.take("callback-fail", child=child)
        if armed is None and not self.strikes("callback-fail"):
            return None
        error = (armed.error.text() if armed is not None and armed.error else CALLBACK_ERRORS[
            self.chooser.choose("fault:callback-fail", len(CALLBACK_ERRORS))])
        self._note("callback-fail", {"run_id": run_id, "callback_error": error})
        return error

    def mirror_error(self, run_id: str) -> str | None:
        """A direct delivery's transcript mirror: its append fails now and then (DEL-8)."""
        child = self._child_of_run(run_id)
        self.chooser.about(child)
        if self.armed.take("mirror-fail", child=child) is None and not self.strikes(
                "mirror-fail"):
            return None
        error = "transcript mirror append failed: session writer busy"
        self._note("mirror-fail", {"run_id": run_id})
        return error

    def recovery_error(self, run_id: str) -> str | None:
        """Lost-answer recovery's hand-off: refused now and then (DEL-2)."""
        child = self._child_of_run(run_id)
        self.chooser.about(child)
        if self.armed.take("recovery-fail", child=child) is None and not self.strikes(
                "recovery-fail"):
            return None
        error = TRANSIENT_ERRORS[self.chooser.choose("fault:recovery-fail",
                                                     len(TRANSIENT_ERRORS))].text()
        self._note("recovery-fail", {"run_id": run_id, "recovery_error": error})
        return error

    def _child_ended(self, run_id: str) -> None:
        """A child's end or later receipt on its way to the delivery process: when it is the
        correction a held parent waits for, the process dies at its next crash point (after
        the correction was written, before the parent's next send), so the restarted process
        sends the parent's findings again."""
        if self.findings.notice(self._child_of_run(run_id), lambda: self.answered(run_id)):
            self.armed.append(ArmedFault(TimelineEvent(0, FaultKind.CRASH,
                                                       actor=addresses.DELIVERY), 1))

    # -- crashes -----------------------------------------------------------------------------

    def crash(self, actor: str, point: str) -> bool:
        """Does ``actor``'s process die at crash point ``point``?"""
        self.chooser.about(None)
        armed = self.armed.take("crash", actor=actor, point=point)
        if armed is not None:
            self.restart_after_ms = armed.restart_after_ms
            return True
        return actor == addresses.DELIVERY and self.strikes("crash")

    def parked_crash_times(self) -> list[int]:
        """When the delivery process is killed while it waits: up to two instants in the busy
        first 15 minutes (or before the heal, if that is sooner)."""
        self.chooser.about(None)
        if "crash" not in self.rates:
            return []
        count = self.chooser.choose("fault:crash-parked", 3)
        span = min(self.heal_ms, PARKED_CRASH_SPAN_MS) // 1000
        if span < 1:  # healed within the first second: no instant before the heal to die at
            return []
        return [1000 * self.chooser.choose("fault:crash-parked", span) for _ in range(count)]

    def restart_delay_ms(self) -> int:
        """How long a crashed actor stays down: as scripted, else drawn, else 5 s."""
        self.chooser.about(None)
        scripted, self.restart_after_ms = self.restart_after_ms, None
        if scripted is not None:
            return scripted
        if "crash" in self.rates:
            return 1000 * (1 + self.chooser.choose("fault:crash", 30))
        return DEFAULT_RESTART_MS
