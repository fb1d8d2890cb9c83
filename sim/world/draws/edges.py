"""Boundary draws (issue 36): children whose answers and transcripts land exactly on a limit of
the model, one under it and one over it, as boundary-value testing draws them.

The plain draws size answers far from every limit (short ones, 10,000-60,000 characters,
150,000 and more: sim/replies.py), so a ``<`` written for ``<=`` at a limit goes unseen. Each
shape here is rare (a few children in a thousand: big payloads cost) and on its own Chooser
stream, ``edge:*``, so the other draws keep still; 2,000 default seeds reach each boundary's
probe several times (docs/oracles.md lists them with their hit counts).

- ``frozen``: the final answer is 102,399, 102,400 or 102,401 bytes of UTF-8 (reference §c14's
  frozen cap; ``child.result-*-frozen-cap``), in ASCII or mostly 3-byte characters.
- ``field``: an earlier step says 3,999, 4,000 or 4,001 UTF-16 units (reference §c16's field
  cut; ``requester.history-field-*-limit``), and the requester reads the run's transcript.
- ``page``: seven to twelve earlier steps each say 4,000 3-byte characters, so the transcript
  passes the 80 KiB page cap by one to six rows and a read of it drops its oldest rows while
  several are left (``requester.history-rows-dropped-several-left``).
- ``chunk``: a top-level child whose requester's channel cuts messages at ``chunk_chars``
  answers with two to four lines of ``chunk_chars - 1``, ``chunk_chars`` or ``chunk_chars + 1``
  characters, line break included: past the block's header each chunk starts at a line, so its
  cut falls on a break one under the limit, at the limit's last character, or one past it
  (``gateway.chunk-break-*-limit``; reference §c11's chunked fallback, docs/fidelity.md).
- ``shared-cap``: a child owed a completion has its final answer sized, as its last step begins
  to stream, so that its announce block is 159,999, 160,000 or 160,001 characters whole (the
  shared cap, FMT-2; sim/world/aims.py; ``announce.*-shared-cap``).
  (The floor's draw, ``edge:floor``, pads a wide batch's tasks: sim/world/turns.py, aims.py.)
- ``tie``: a child spawned in the instant an earlier sibling (same requester, same parent run)
  was and running exactly as long, so both end, settle and are sent in one instant: a wake
  naming both orders them by session key alone (``batch.sections-ordered-by-session-key``)
  and their retry timers fall due together (``delivery.tries-due-in-one-instant``).
- ``tries``: (when the seed turns transient refusals on) a child's sends are refused
  transiently three, four or five times in a row: the fourth and last transport try of the
  first attempt goes through (``delivery.delivered-on-last-transport-try``), or all four are
  refused and the registry backs off (``delivery.transient-retries-exhausted``), once more
  refused on the next attempt's first try (reference §c11: four tries, 5/10/20 s apart).
- ``wake``: (send-transient on) a yielded batch's wake is refused transiently two, three or
  four times: its first two attempts refused and the third taken
  (``batch.taken-on-last-attempt``), or all three refused (``batch.attempts-exhausted``;
  reference §c11 "Batch wake": three attempts, 30 s then 120 s apart).
- ``recovery``: (recovery-fail on) a child whose captured answer is lost has its recovered
  answer's hand-off refused twice (half of them), three or four times: the third and last
  attempt recovers it
  (``delivery.recovered-on-last-attempt``), or recovery stops at its bound
  (``delivery.recovery-bound-reached``; seed 002, DEL-2: three attempts).
- ``ack``: (delay on) a child's first acknowledgement is held on its way back so that it reaches
  the gateway one ms before its send's 120 s answer timeout, at it, or one ms past it
  (sim/faults/ack_aim.py; ``delivery.ack-*-timeout``), half the time (callback-fail on) with its
  receive callback failing, so ``handoff-stays-delivered`` judges the confirmation.
- ``window``: (send-other on) a private child's sends are refused with an unclassified error
  until its 30-minute window from its release runs out; a backoff runs its whole length past
  the window's end (issue 34), so (crash on too) the delivery process is killed so that it
  comes back at the window's end, where the attempt then due gives up
  (sim/faults/expiry_aim.py; ``private.window-ends-at-its-instant``; PRV-7, §c9, §c10).
- ``expiry``: (crash and send-other on) the same for a public child owed a completion: its
  sends are refused until its 30-minute expiry and the restarted process starts its attempt at
  the deadline's instant, where it gives up (``delivery.expiry``; the ``expiry-inclusive`` bug
  sends it: DEL-10, §c11).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from actors.messages import ChildSpec, RunHistoryRead, StepSpec
from actors.private.rules import COMPLETION_TARGET_PARENT
from actors.records.retry import TRANSPORT_TRIES
from actors.yields.turns import TurnEnd, turn_run_id
from sim.choices import Chooser
from sim.faults.armed import ArmedFault
from sim.faults.kinds import FaultKind
from sim.faults.plan import FaultPlan, TimelineEvent
from sim.scenario.turns import LifecycleDef, TurnDef
from sim.world.control import Control

FROZEN_CAP_BYTES = 102_400  # reference §c14
FIELD_LIMIT_UNITS = 4_000  # reference §c16
# The share of drawn children given each shape (of some 12,000 children in 2,000 seeds).
SHARES = {"frozen": 0.0025, "field": 0.0025, "page": 0.003,
          "chunk": 0.02, "tie": 0.05, "tries": 0.02, "shared-cap": 0.08,
          "shared-cap-chunked": 0.02,
          # Of yielded turns with members (send-transient on), of children whose answer is
          # lost (recovery-fail on).
          "wake": 0.25, "recovery": 1.0,
          # Of children owed a completion (delay on).
          "ack": 0.1}
ACK_CALLBACK_FAILS = 0.5  # of aimed acknowledgements (callback-fail on)
# Of private children (send-other on); refusals enough to outlast the window (backoffs of 15 s
# doubling to 300 s: the tenth attempt is past 30 minutes).
WINDOW_SHARE = 0.5
WINDOW_REFUSALS = 20
# Of public children owed a completion with no correction drawn (crash and send-other on).
EXPIRY_SHARE = 0.25
# Attempts of a batch wake and of lost-answer recovery (reference §c11, seed 002).
WAKE_ATTEMPTS = 3
RECOVERY_ATTEMPTS = 3
RECOVERY_UNDER = 0.5  # of aimed recoveries, the share refused exactly twice
CHUNK_LINES = (2, 4)  # lines at the limit's edge: each after the first starts a chunk
PAGE_ROWS = (7, 12)  # earlier steps of 4,000 3-byte characters: 12,000 bytes of JSON each
READ_AFTER_S = (5, 60)  # the transcript read, after the run should have ended
_ASCII = "lorem ipsum dolor sit amet, "
_WIDE = "中文字"

SendAt = Callable[[int, ChildSpec, Control], None]


def tie(chooser: Chooser, child: ChildSpec, drawn: list[ChildSpec]) -> ChildSpec:
    """``child``, maybe spawned and ended in the instant an earlier sibling (same requester,
    same parent run) was (``edge:tie``): two settles at one instant."""
    if not chooser.chance("edge:tie", SHARES["tie"]):
        return child
    twins = [c for c in drawn if c.parent == child.parent and c.requester == child.requester
             and c.run_ms > child.run_ms - child.steps[-1].duration_ms]
    if not twins:
        return child
    twin = twins[chooser.choose("edge:tie", len(twins))]
    last = child.steps[-1]
    rest = child.run_ms - last.duration_ms
    return attrs.evolve(child, spawn_at_ms=twin.spawn_at_ms, steps=(
        *child.steps[:-1], attrs.evolve(last, duration_ms=twin.run_ms - rest)))


def tries(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe arm one under, exactly and one over the transport tries' budget of transient
    refusals of ``child``'s sends (``edge:tries``), when the seed turns them on."""
    if FaultKind.SEND_TRANSIENT not in plan.rates or not child.expects_completion or \
            not chooser.chance("edge:tries", SHARES["tries"]):
        return
    count = TRANSPORT_TRIES + chooser.choose("edge:tries", 3) - 1
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_TRANSIENT, child=child.id),
                                 count))


def recovery(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe refuse the hand-off of ``child``'s recovered answer one under, exactly and one over
    recovery's attempt bound (``edge:recovery``): when its captured answer is lost and the seed
    turns recovery-fail on."""
    if not child.answer_lost or FaultKind.RECOVERY_FAIL not in plan.rates or \
            not chooser.chance("edge:recovery", SHARES["recovery"]):
        return
    # One under half the time: at and over the bound the plain draws reach often (silent runs
    # read three times), two refusals then a hand-off only here.
    count = RECOVERY_ATTEMPTS - 1 if chooser.chance("edge:recovery", RECOVERY_UNDER) else \
        RECOVERY_ATTEMPTS + chooser.choose("edge:recovery", 2)
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.RECOVERY_FAIL, child=child.id),
                                 count))


def ack(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe aim ``child``'s first acknowledgement one ms under, exactly at or one ms over its
    send's answer timeout (``edge:ack``), when the seed turns delays on."""
    if FaultKind.DELAY not in plan.rates or not child.expects_completion or \
            not chooser.chance("edge:ack", SHARES["ack"]):
        return
    plan.ack_aim.arm(child.id, chooser.choose("edge:ack", 3) - 1)
    if FaultKind.CALLBACK_FAIL in plan.rates and chooser.chance("edge:ack", ACK_CALLBACK_FAILS):
        plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.CALLBACK_FAIL, child=child.id),
                                     1))


def window(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe refuse a private ``child``'s sends (unclassified) until its window from its
    release has run out (``edge:window``), when the seed turns send-other on."""
    if child.completion_target != COMPLETION_TARGET_PARENT or \
            FaultKind.SEND_OTHER not in plan.rates or \
            not chooser.chance("edge:window", WINDOW_SHARE):
        return
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_OTHER, child=child.id),
                                 WINDOW_REFUSALS))
    if FaultKind.CRASH in plan.rates:
        plan.expiry_aim.arm(child.id)


def expiry(chooser: Chooser, plan: FaultPlan, child: ChildSpec) -> None:
    """Maybe refuse a public ``child``'s sends (unclassified) until its expiry and restart the
    delivery process at the deadline's instant (``edge:expiry``), when the seed turns crashes
    and unclassified refusals on."""
    if FaultKind.CRASH not in plan.rates or FaultKind.SEND_OTHER not in plan.rates or \
            not child.expects_completion or child.completion_target is not None or \
            child.correction_after_ms is not None or \
            not chooser.chance("edge:expiry", EXPIRY_SHARE):
        return
    plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_OTHER, child=child.id),
                                 WINDOW_REFUSALS))
    plan.expiry_aim.arm(child.id)


def wake(chooser: Chooser, plan: FaultPlan, children: Sequence[ChildSpec],
         turns: Sequence[TurnDef], lifecycle: Sequence[LifecycleDef]) -> None:
    """Maybe refuse a yielded batch's wake transiently one under, exactly and one over its
    attempt budget (``edge:wake``): armed on the batch's run id, which the fault plan matches
    like a child's. Only a yield no lifecycle event touched while its turn ran (so the
    incarnation, and the batch id, are known), when the seed turns send-transient on."""
    if FaultKind.SEND_TRANSIENT not in plan.rates:
        return
    for turn in turns:
        if turn.ends is not TurnEnd.YIELD or turn.end_ms is None or not any(
                c.requester == turn.session and c.turn == turn.id and c.expects_completion
                for c in children):
            continue
        events = [e for e in lifecycle if e.session == turn.session]
        if any(turn.start_ms <= e.at_ms <= turn.end_ms for e in events) or \
                not chooser.chance("edge:wake", SHARES["wake"]):
            continue
        incarnation = 1 + sum(1 for e in events if e.at_ms < turn.start_ms)
        batch = f"batch:{turn_run_id(turn.session, turn.id, incarnation)}"
        count = WAKE_ATTEMPTS + chooser.choose("edge:wake", 3) - 1
        plan.armed.append(ArmedFault(TimelineEvent(0, FaultKind.SEND_TRANSIENT, child=batch),
                                     count))


def draw(chooser: Chooser, child: ChildSpec, send_at: SendAt,
         chunk_chars: int | None = None) -> ChildSpec:
    """``child``, maybe bent into one boundary shape (each on its own stream); ``chunk_chars``:
    the limit of the channel a top-level child's completion is sent to, if it has one."""
    if chooser.chance("edge:frozen", SHARES["frozen"]):
        offset = chooser.choose("edge:frozen", 3) - 1
        wide = chooser.chance("edge:frozen", 0.5)
        last = child.steps[-1]
        text = sized_text(f"{child.id} done.", FROZEN_CAP_BYTES + offset, wide)
        return attrs.evolve(child, steps=(*child.steps[:-1], attrs.evolve(last, text=text)))
    if chooser.chance("edge:field", SHARES["field"]):
        units = FIELD_LIMIT_UNITS + chooser.choose("edge:field", 3) - 1
        child = _with_earlier(child, [_grown(f"{child.id} notes:", units, _ASCII)])
        _read(chooser, "edge:field", child, send_at)
        return child
    if chooser.chance("edge:page", SHARES["page"]):
        low, high = PAGE_ROWS
        rows = low + chooser.choose("edge:page", high - low + 1)
        child = _with_earlier(child, [_grown(f"{child.id} part {n + 1}:", FIELD_LIMIT_UNITS,
                                             _WIDE) for n in range(rows)])
        _read(chooser, "edge:page", child, send_at)
        return child
    if chunk_chars is not None and chooser.chance("edge:chunk", SHARES["chunk"]):
        line = chunk_chars + chooser.choose("edge:chunk", 3) - 1  # its break included
        low, high = CHUNK_LINES
        lines = low + chooser.choose("edge:chunk", high - low + 1)
        last = child.steps[-1]
        return attrs.evolve(child, steps=(*child.steps[:-1], attrs.evolve(
            last, text=f"{child.id} done.\n{chunk_lines(child.id, line, lines)}")))
    # Last, so that the shapes above keep their draws: a child owed a completion whose answer
    # is not lost (sized as its final step begins, sim/world/aims.py); fewer to a requester
    # whose channel cuts messages (a 160,000-character block in 700-character chunks costs).
    share = SHARES["shared-cap" if chunk_chars is None else "shared-cap-chunked"]
    if child.expects_completion and not child.answer_lost and \
            chooser.chance("edge:shared-cap", share):
        return attrs.evolve(child, reply_to_cap=chooser.choose("edge:shared-cap", 3) - 1)
    return child


def chunk_lines(head: str, line: int, count: int) -> str:
    """``count`` lines of ``line`` characters each, the line break included."""
    return "".join(_grown(f"{head} line {n + 1}:", line - 1, _ASCII) + "\n"
                   for n in range(count))


def sized_text(head: str, size: int, wide: bool) -> str:
    """``head``, a newline and filler: exactly ``size`` bytes of UTF-8 (the filler mostly
    3-byte characters when ``wide``, a few ASCII ones first to land on the byte)."""
    text = head + "\n"
    rest = size - len(text.encode("utf-8"))
    if wide:
        text += "x" * (rest % 3)
        return _grown(text, len(text) + rest // 3, _WIDE)
    return _grown(text, len(text) + rest, _ASCII)


def _grown(text: str, length: int, piece: str) -> str:
    """``text`` and ``piece`` repeated: ``length`` characters in all (every character here
    is one UTF-16 unit)."""
    filler = piece * (1 + (length - len(text)) // len(piece))
    return text + filler[: length - len(text)]


def _with_earlier(child: ChildSpec, texts: list[str]) -> ChildSpec:
    """``child`` with steps saying ``texts`` (each calling a tool) before its final step, its
    run no longer than drawn (the final step's time shared out)."""
    last = child.steps[-1]
    earlier = list(child.steps[:-1])
    share = max(1, last.duration_ms // (len(texts) + 1))
    added = [StepSpec(share, text=text, tool_calls=1) for text in texts]
    return attrs.evolve(child, steps=(*earlier, *added,
                                      attrs.evolve(last, duration_ms=max(1, last.duration_ms
                                                                         - share * len(texts)))))


def _read(chooser: Chooser, sub: str, child: ChildSpec, send_at: SendAt) -> None:
    """The requester reads the run's retained transcript, tool rows too, after its end."""
    low, high = READ_AFTER_S
    at = child.spawn_at_ms + child.run_ms + 1000 * (low + chooser.choose(sub, high - low + 1))
    send_at(at, child, RunHistoryRead(child.id, include_tools=True))
