"""YLD oracles: yield batches and their wakes, restated from what was asked and what was seen.

What was asked: each spawn request with the turn and session incarnation that asked
(``world.spawn``), each turn's end (``world.turn_end``, ``how = "yield"`` for ``sessions_yield``)
and each reset or delete (``world.lifecycle``). What was seen: each child's end (``child.end``),
every completion the gateway was handed (``gateway.send``) and how it was answered: what each
requester's transcript took (``requester.accept``, ``requester.duplicate``) or the session
refused to take (``requester.wake_refused``, ``requester.gone``), the gateway's refusals and its
lost or slow acknowledgements (``fault`` records), the delivery process's crashes and restarts,
and the faults the world injected; after a wake, what the resumed turn wrote
(``requester.turn_answer``) and what the session's conversation received from it
(``conversation.reply``: a wake was answered visibly exactly when its turn's reply reached the
conversation). A batch is the required children one turn asked for before it yielded; its wake
is the completion keyed ``announce:requester-settle:...`` whose key names exactly those runs.
No oracle here reads a verdict of the registry (its settle, hand-over, give-up or cleanup
records) nor what the session said of itself (``visible_reply``, a refusal's ``reason``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.lineage import killed_silently
from sim.invariants.observations import SETTLE_PREFIX as SETTLE_PREFIX
from sim.invariants.observations import Asked, asked_runs
from sim.invariants.observations import is_wake as is_wake
from sim.invariants.observations import key_runs as key_runs
from sim.invariants.settled import UNKNOWN, own_settle
from sim.invariants.yields.seen import Batch as Batch
from sim.invariants.yields.seen import _descendants as _descendants
from sim.invariants.yields.seen import _overlap as _overlap
from sim.invariants.yields.seen import _Seen as _Seen
from sim.invariants.yields.seen import _seen as _seen
from sim.invariants.yields.seen import _turn_over as _turn_over
from sim.invariants.yields.seen import _wake_of as _wake_of
from sim.invariants.yields.seen import batches as batches
from sim.invariants.yields.seen import wave_batches as wave_batches
from sim.invariants.yields.seen import yielded_members as yielded_members
from sim.trace import Record

# A frozen batch whose members settled while a descendant of theirs had not is rechecked every
# 30 s (reference §c9: "Unsettled owned descendants, on a frozen batch: defer 30 s"): its wake
# goes out at the first recheck after that descendant settled, so up to 30 s after it. A batch
# whose members settled last is checked as the last one settles: its wake goes out then, no
# later (besides time the delivery process was down, late notices and a busy requester).
RECHECK_MS = 30_000
# A batch whose descendants stay unsettled, none of them running, through this many rechecks
# closes without a wake (reference §c9: "deferred too many times").
DEFERRAL_LIMIT = 10


def _settled_at(batch: Batch, seen: _Seen, asked: dict[str, Asked]
                ) -> tuple[int, int, int] | None:
    """When the batch's members and their descendants had all settled, as far as an observer
    can tell, the latest moment a descendant was still running, and when the members alone had
    settled (None: some never did, or the trail does not say when)."""
    # An operator's request about a member after the yield (a redrive: a new generation)
    # starts a delivery of its own, which says nothing of when the batch's member settled
    # (seed 1078: a redrive after the batch closed); one before the yield is part of what the
    # frozen member still owes. A redrive before the batch had settled reopens the member while
    # the batch still waits: the batch waits for that delivery too, up to the member's next
    # request after the batch settled (seed 67650; a second redrive after the batch closed
    # by its deferral limit starts a delivery of its own again: seed 4399). The batch is over
    # when it settled or, whichever is first, when its deferral limit may have closed it (its
    # descendants still unsettled 9 rechecks past the members and the last running one): a
    # request at or after that is a delivery of the member's own, which must not date the
    # member's settle past the close the oracle then excuses (seeds 30564, 85852: a member
    # redriven long after its batch closed deferred, while a descendant settled later still).
    requests = {run_id: sorted(t for t in seen.operator.get(request.child, [])
                               if t >= batch.yielded.t_ms)
                for run_id in batch.members if (request := asked.get(run_id)) is not None}
    since = {run_id: times[0] if times else 2**62 for run_id, times in requests.items()}
    settled = _settled_with(batch, seen, asked, since)
    for _ in range(1 + sum(len(times) for times in requests.values())):
        if settled is None:
            return None
        over = min(settled[0], _deferral_close(settled[1], settled[2]))
        later = {run_id: next((t for t in times if t >= over), 2**62)
                 for run_id, times in requests.items()}
        if later == since:
            return settled
        since = later
        settled = _settled_with(batch, seen, asked, since)
    return settled


def _settled_with(batch: Batch, seen: _Seen, asked: dict[str, Asked],
                  since: dict[str, int]) -> tuple[int, int, int] | None:
    """:func:`_settled_at`, reading each member's trail before ``since`` (its redrive) only."""
    ready = batch.yielded.t_ms
    running = 0
    descendants: list[str] = []
    # One private member makes the batch private, and a public sibling in a private batch keeps
    # its own delivery (reference §c10, PRV-5): nothing hands it over, so a refusal it may retry
    # after settles it no more than it settles a descendant (seeds 3769, 4827).
    private = any(_is_private(asked.get(run_id)) for run_id in batch.members)
    for run_id in batch.members:
        request = asked.get(run_id)
        cut = since.get(run_id, 2**62)
        own = own_settle(seen.ends.get(run_id),
                         [r for r in seen.trail.get(run_id, []) if r.t_ms < cut],
                         request,
                         member=not private or _is_private(request),
                         crashes=[down for down, _ in seen.downtime])
        if own is None or own == UNKNOWN:
            return None
        ready = max(ready, own)
        descendants += _descendants(seen, run_id)
    members_ready = ready
    for run_id in descendants:
        own = own_settle(seen.ends.get(run_id), seen.trail.get(run_id, []),
                         asked.get(run_id), member=False,
                         crashes=[down for down, _ in seen.downtime])
        if own is None or own == UNKNOWN:
            return None
        ready = max(ready, own)
        running = max(running, seen.ends[run_id].t_ms)
    return ready, running, members_ready


def _may_close_deferred(ready: int, running: int, members_ready: int) -> bool:
    """Descendants unsettled long after the members settled and the last descendant stopped
    running: the batch may have run out of deferrals and closed without a wake (reference §c9:
    "deferred too many times"; a deferral counts only while no descendant runs)."""
    return ready > _deferral_close(running, members_ready)


def _deferral_close(running: int, members_ready: int) -> int:
    """The earliest moment the deferral limit may close a batch whose descendants stay
    unsettled: 9 rechecks past the later of its members' settle and its last running
    descendant's end (the tenth deferral closes it, reference §c9)."""
    return max(running, members_ready) + (DEFERRAL_LIMIT - 1) * RECHECK_MS


def wake_owed(trace: Sequence[Record], batch: Batch) -> bool:
    """Whether an outsider can tell the batch's wake was owed: every member and every member's
    descendant settled as far as the trail says, and not so late that the deferral limit may
    have closed the batch without a wake (the batches ``wake-not-delayed`` asks a wake of)."""
    seen = _seen(trace)
    settled = _settled_at(batch, seen, asked_runs(trace))
    return settled is not None and not _may_close_deferred(*settled)


def may_close_deferred(trace: Sequence[Record], batch: Batch) -> bool:
    """Whether an outsider can tell the deferral limit may have closed the batch without a
    wake: every member settled, and its descendants stayed unsettled, none running, through
    ten counted deferrals (reference §c9: "deferred too many times")."""
    settled = _settled_at(batch, _seen(trace), asked_runs(trace))
    return settled is not None and _may_close_deferred(*settled)


def _is_private(request: Asked | None) -> bool:
    return request is not None and request.request.data.get("completion_target") == "parent"


def one_wake_per_batch(trace: Sequence[Record]) -> list[Violation]:
    """Exactly one wake per batch: never a second one the requester answered; the one wake
    names exactly the batch's runs and reaches the session that yielded."""
    seen = _seen(trace)
    violations = []
    for batch in batches(trace):
        accepts = _wake_of(batch, seen.wake_accepts)
        answered = [r for r in accepts if r.seq in seen.answered]
        unheard = [r for r in answered if _unheard_copy(seen, r)]
        if unheard:
            # The registry never learned of that take: a later send on a fresh key (after a
            # refusal by the gateway, reference §c11) may wake the turn again.
            answered = [r for r in answered
                        if r.seq <= unheard[0].seq or r.data["key"] == unheard[0].data["key"]]
        if len(answered) > 1:
            violations.append(Violation(
                "one-wake-per-batch", "YLD-1",
                f"the batch {batch.turn} of {batch.session} yielded at {batch.yielded.t_ms} ms "
                f"woke its requester {len(answered)} times (at "
                f"{', '.join(str(r.t_ms) for r in answered)} ms)",
                (batch.yielded.seq, *(r.seq for r in answered))))
        for r in accepts:
            if r.actor != batch.actor:
                violations.append(Violation(
                    "one-wake-per-batch", "YLD-1", f"the wake of {batch.turn} of "
                    f"{batch.session} reached {r.actor}", (batch.yielded.seq, r.seq)))
    for wave in wave_batches(trace):
        # A wave needs no visible reply: any second wake it made the requester take is one too
        # many (the session takes each key once).
        taken = _wake_of(wave, seen.wake_accepts)
        if len(taken) > 1:
            violations.append(Violation(
                "one-wake-per-batch", "YLD-1",
                f"the wave {', '.join(wave.members)} of {wave.session} woke its requester "
                f"{len(taken)} times (at {', '.join(str(r.t_ms) for r in taken)} ms)",
                tuple(r.seq for r in taken)))
    yielded = {(b.session, b.members) for b in batches(trace)}
    for r in seen.wake_accepts:
        runs = key_runs(r.data["key"])
        session = r.actor.removeprefix("requester:")
        if ":yield-" in r.data["key"] and (session, runs) not in yielded:
            violations.append(Violation(
                "one-wake-per-batch", "YLD-1", f"{r.actor} was woken for runs "
                f"{', '.join(runs)}, which are not the required children of any turn that "
                "yielded", (r.seq,)))
    return violations


def _unheard_copy(seen: _Seen, take: Record) -> bool:
    """Whether the requester took a copy of a wake send it had refused (the network's duplicate,
    arriving after its busy turn ended: no send of that key came between the refusal and the
    take) while the delivery process was down, so the take's acknowledgement reached no live
    process (seed 59278). The registry's row holds that send as refused (the wake still owed);
    nothing it could read tells it the turn was resumed."""
    key = take.data["key"]
    refusals = [r for r in seen.wake_faults if r.kind == "requester.wake_refused"
                and r.data["key"] == key and r.seq < take.seq]
    if not refusals:
        return False
    refused = refusals[-1]
    if any(refused.seq < s.seq < take.seq for s in seen.wake_sends if s.data["key"] == key):
        return False  # a send of it went out since: the take may be that send's
    return any(down <= take.t_ms < up for down, up in seen.downtime)


def _still_delivering(seen: _Seen, asked: dict[str, Asked], run_id: str, at_ms: int) -> bool:
    """Whether a run's own delivery was surely still going at ``at_ms``: it is owed (asked for as
    required) and the gateway was handed a send of it later, which no correction of its result
    and no operator's request explains (either may send a settled run again: a new generation,
    a redrive)."""
    request = asked.get(run_id)
    if request is None or not request.required:
        return False
    since = min(seen.corrected.get(run_id, 2**62),
                seen.operator.get(request.child, [2**62])[0])
    return any(at_ms < r.t_ms < since for r in seen.sends.get(run_id, []))


def wake_after_settle(trace: Sequence[Record]) -> list[Violation]:
    """A batch's wake is never sent before every member and every member's descendant has
    ended, nor while a descendant's own delivery was still going (the gateway was handed a send
    of it after the wake)."""
    seen = _seen(trace)
    asked = asked_runs(trace)
    violations = []
    for batch in [*batches(trace), *wave_batches(trace)]:
        for send in _wake_of(batch, seen.wake_sends)[:1]:
            early = [run_id for run_id in batch.members
                     if run_id not in seen.ends or seen.ends[run_id].t_ms > send.t_ms]
            early += [d for run_id in batch.members for d in _descendants(seen, run_id)
                      if d not in seen.ends or seen.ends[d].t_ms > send.t_ms
                      or _still_delivering(seen, asked, d, send.t_ms)]
            if early:
                violations.append(Violation(
                    "wake-after-settle", "YLD-1",
                    f"the wake of {batch.turn} of {batch.session} was sent at {send.t_ms} ms, "
                    f"before {', '.join(early)} had settled", (batch.yielded.seq, send.seq)))
    return violations


def wake_not_delayed(trace: Sequence[Record]) -> list[Violation]:
    """A batch's wake waits for its own members and their descendants only: once they settled,
    the wake goes out at once when a member settled last, within one 30 s recheck when a
    descendant did (reference §c9), unless the delivery process was down or the requester was
    busy in another turn meanwhile (a child of an earlier turn never delays it)."""
    seen = _seen(trace)
    asked = asked_runs(trace)
    violations = []
    for batch in batches(trace):
        sends = _wake_of(batch, seen.wake_sends)
        end_ms = seen.end.t_ms if seen.end is not None else 0
        first = sends[0].t_ms if sends else end_ms
        settled = _settled_at(batch, seen, asked)
        if settled is None or not batch.members:
            continue
        ready, running, members_ready = settled
        if any(r.t_ms >= batch.yielded.t_ms for r in seen.lifecycle.get(batch.session, [])):
            continue  # reset or deleted: the wake may be closed, not sent
        if _all_killed(trace, batch):
            continue  # consumed without a wake (killed-batch-consumed)
        # A requester busy in another turn answers requester_turn_pending: the wake waits for
        # that turn's end, then up to one recheck more.
        busy = _overlap(seen.busy.get(batch.session, []), ready, first)
        # A descendant settled last: the next 30 s recheck sends the wake; a member settled
        # last: its own settle sends it (exact). A busy requester's refusal waits for one
        # recheck after its turn ended (requester_turn_pending puts the wake back to pending
        # with its next try 30 s on, reference §c17 and §b).
        recheck = RECHECK_MS if ready > members_ready else 0
        allowed = ready + recheck + _overlap(seen.downtime, ready, first) + _overlap(
            seen.late_notices, ready, first) + busy + (RECHECK_MS if busy else 0)
        closed = _may_close_deferred(ready, running, members_ready)
        if first > allowed and (sends or (end_ms > allowed and not closed)):
            what = f"was sent at {first} ms" if sends else "was never sent"
            violations.append(Violation(
                "wake-not-delayed", "YLD-1",
                f"the batch {batch.turn} of {batch.session} had settled by {ready} ms, yet its "
                f"wake {what} (allowed until {allowed} ms)",
                (batch.yielded.seq, *((sends[0].seq,) if sends else ()))))
    return violations


def _all_killed(trace: Sequence[Record], batch: Batch) -> bool:
    """Whether every member of the batch was stopped with its completion suppressed (a kill or a
    steer of it or of its spawner, its requester's reset or delete: ``lineage``)."""
    killed = killed_silently(trace)
    return bool(batch.members) and all(run_id in killed for run_id in batch.members)


def killed_batch_consumed(trace: Sequence[Record]) -> list[Violation]:
    """A yielded batch whose every member was killed (its completion suppressed, as
    ``lineage`` reads it from the sessions' kill, steer, reset and delete answers) is consumed
    without a wake (reference §c9: "delivery was closed by kill/abort ... or every member is
    suppressed"): no wake naming its runs is ever sent after the last kill; nor is an unfrozen
    wave's naming only runs killed before it."""
    seen = _seen(trace)
    violations = []
    for batch in batches(trace):
        if not _all_killed(trace, batch):
            continue
        killed = killed_silently(trace)
        last = max((killed[run_id] for run_id in batch.members), key=lambda r: r.seq)
        for send in _wake_of(batch, seen.wake_sends)[:1]:
            if send.seq > last.seq:
                violations.append(Violation(
                    "killed-batch-consumed", "YLD-1",
                    f"every member of the batch {batch.turn} of {batch.session} was killed "
                    f"(the last at {last.t_ms} ms), yet a wake of it was sent at "
                    f"{send.t_ms} ms", (last.seq, send.seq)))
    # An unfrozen wave's wake is the same settle wake (reference §c9): one that names only runs
    # killed before its first send wakes its requester with nothing but cancelled members.
    for wave in wave_batches(trace):
        if not _all_killed(trace, wave):
            continue
        killed = killed_silently(trace)
        last = max((killed[run_id] for run_id in wave.members), key=lambda r: r.seq)
        if wave.yielded.seq > last.seq:
            violations.append(Violation(
                "killed-batch-consumed", "YLD-1",
                f"every member of the wave {', '.join(wave.members)} of {wave.session} was "
                f"killed (the last at {last.t_ms} ms), yet its wake {wave.yielded.data['key']} "
                f"was sent at {wave.yielded.t_ms} ms", (last.seq, wave.yielded.seq)))
    return violations


def wake_between_turns(trace: Sequence[Record]) -> list[Violation]:
    """YLD-3 (requester_turn_pending): a requester takes a batch wake only between its turns,
    never while another turn it was asked to run is still open (the wake waits instead)."""
    seen = _seen(trace)
    violations = []
    for r in seen.wake_accepts:
        session = r.actor.removeprefix("requester:")
        for start, end in seen.busy.get(session, []):
            if start < r.t_ms < end:
                violations.append(Violation(
                    "wake-between-turns", "YLD-3",
                    f"{r.actor} took the wake {r.data['key']} at {r.t_ms} ms, inside a turn "
                    f"it ran from {start} ms to {end} ms", (r.seq,)))
    return violations


INVARIANTS = (
    Invariant("one-wake-per-batch", "YLD-1", "safety",
              "A yielded batch wakes its requester once (a wake the requester could not answer "
              "visibly may be retried), names exactly the turn's required children, and reaches "
              "the session that yielded.", one_wake_per_batch),
    Invariant("wake-after-settle", "YLD-1", "safety",
              "A batch's wake is sent only after every member and every member's descendant "
              "settled.", wake_after_settle),
    Invariant("wake-not-delayed", "YLD-1", "liveness",
              "Once a batch's members and their descendants settled, its wake goes out as the "
              "last member settles, or at the next 30 s recheck when a descendant settled last "
              "(plus any downtime of the delivery process): a child of an earlier turn never "
              "delays it.", wake_not_delayed),
    Invariant("killed-batch-consumed", "YLD-1", "safety",
              "A yielded batch or an unfrozen wave whose every member was killed (completion "
              "suppressed) is consumed without a wake.", killed_batch_consumed),
    Invariant("wake-between-turns", "YLD-3", "safety",
              "A requester takes a batch wake only between its turns: while another turn runs "
              "the wake waits (requester_turn_pending), spending no attempt.",
              wake_between_turns),
)
