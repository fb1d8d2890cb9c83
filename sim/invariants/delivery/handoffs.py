"""DEL-7 and DEL-9 oracles: what happens after the gateway answered a hand-off, and the turn
identity of a completion input through a compaction of the requester's transcript.

Read from the trace alone: the gateway's refusals (``fault`` records carrying an ``error`` chain),
its receipts of a receive callback that failed after the session confirmed the hand-off
(``gateway.callback_failed``) and of acknowledgements lost or slowed on their way back (the
``send-ambiguous`` and ``ack-slow`` fault records), each spawn's child session key, the delivery
process's crashes, and what the registry recorded (``delivery.retry``, ``delivery.give_up``,
``delivery.delivered``, the blocked-completion warning ``delivery.warning``), and what each
requester session accepted and when it compacted (``requester.accept``,
``requester.compacted``). The closed-turn wording is restated from reference §c16
(sim/invariants/delivery/send_errors.py); nothing comes from the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds
from sim.invariants.observations import (
    chain_class,
    is_closed_turn,
    is_delivery_crash,
    is_rejection,
    is_wake,
    key_runs,
)
from sim.invariants.private.completion import private_runs
from sim.trace import Record

# The answer timeout of a send (reference §c11: ``announceTimeoutMs``, 120,000 ms).
ANSWER_TIMEOUT_MS = 120_000

# What the registry writes when a try goes unanswered for the 120 s announce timeout (§c11).
UNANSWERED = "gateway timeout"


def chain_text(chain: Mapping[str, Any]) -> str:
    """An error chain as one line, outermost first: ``outer: cause: root``."""
    parts = []
    link: Mapping[str, Any] | None = chain
    while link is not None:
        parts.append(str(link["message"]))
        link = link.get("cause")
    return ": ".join(parts)


def closed_turn_final(trace: Sequence[Record]) -> list[Violation]:
    """A completion refused because its keyed input belongs to a closed turn is recorded as a
    permanent failure carrying that error, and never rescheduled (DEL-7). A refusal that never
    reached the live delivery process (dropped, or answered while it was down) is not judged.
    Nor is one of a key other than the run's latest send's: once the gateway was handed the run
    under a newer generation's key (a correction's, DEL-12), the registry's next record is that
    delivery's and the older key's refusal is stale (§c17; seed 61169: a correction's second
    generation sent in the first's instant, the first refused for a closed turn, the second
    with "chat not found", which the registry recorded)."""
    refused: dict[str, Record] = {}
    sent_key: dict[str, str] = {}  # run_id -> the key of its latest send
    violations: list[Violation] = []
    for r in of_kinds(trace, ("fault", "requester.gone", "gateway.refused", "crash",
                              "delivery.start", "drop", "gateway.send",
                              "delivery.retry", "delivery.give_up")):
        if r.kind == "gateway.send":
            sent_key[r.data["run_id"]] = r.data["key"]
            held = refused.get(r.data["run_id"])
            if held is not None and held.data.get("key") not in (None, r.data["key"]):
                del refused[r.data["run_id"]]  # the next record may be the newer key's
        elif is_rejection(r) and is_closed_turn(r.data["error"]) and (
                chain_class(r.data["error"]) == "permanent") and r.data.get("key") in (
                None, sent_key.get(r.data["run_id"], r.data.get("key"))):
            refused[r.data["run_id"]] = r
        elif is_delivery_crash(r) or r.kind == "delivery.start" or (
                r.kind == "drop" and r.data.get("dst") == "delivery"):
            refused.clear()  # a process that died before recording it may send once more
        elif r.kind in ("delivery.retry", "delivery.give_up") and r.data["run_id"] in refused:
            rejection = refused.pop(r.data["run_id"])
            text = chain_text(rejection.data["error"])
            if r.kind == "delivery.retry":
                violations.append(Violation(
                    "closed-turn-final", "DEL-7",
                    f"{r.data['run_id']} was refused for a closed turn ({text!r}) at "
                    f"{rejection.t_ms} ms, yet rescheduled for {r.data['next_attempt_at_ms']} ms",
                    (rejection.seq, r.seq)))
            elif r.data["reason"] != "permanent_failure" or text not in (r.data["error"] or ""):
                violations.append(Violation(
                    "closed-turn-final", "DEL-7",
                    f"{r.data['run_id']} was refused for a closed turn ({text!r}) but the registry "
                    f"recorded {r.data['reason']} with error {r.data['error']!r}",
                    (rejection.seq, r.seq)))
    return violations


def handoff_stays_delivered(trace: Sequence[Record]) -> list[Violation]:
    """A hand-off the session confirmed stays delivered although its receive callback failed:
    the registry's next record of the run is ``delivered``, never a failed try or a give-up
    (DEL-9). A lost or slow acknowledgement, a crash of the delivery process, or an answer
    dropped because that process was down hides the confirmation; then nothing is judged. So
    does a confirmation that reached the gateway at or past the 120 s answer timeout of its send
    (reference §c11 ``announceTimeoutMs``): the try may have been given up first (seed 9874);
    not a private result's, whose try has no timeout and waits for it (docs/fidelity.md).
    The rule is exact: one 119,999 ms after its send is judged; at 120,000 ms the timer and the
    answer are due in one instant and the scheduler runs them in either order, as Node's event
    loop runs a timer and an I/O callback due in one millisecond (OpenClaw's
    ``runAnnounceAgentCall`` arms ``setTimeout(abort, announceTimeoutMs)`` and clears it on
    acceptance; the reference is silent), so either outcome is OpenClaw's (issue 36's ack draw,
    scenario ack-at-answer-timeout.toml).
    A confirmation holds for the hand-off confirmed, not for a newer one: once the gateway was
    handed the run under another key (a correction's next generation), the registry's records
    that follow may be that hand-off's (issue 36: a delayed first generation confirmed in the
    instant the second was refused, scenario older-confirmation-beside-newer-refusal), nor once
    the child corrected its answer (a newer generation owes its own delivery; so also when the
    confirmation of a send comes after a correction made since it, seed 98658), nor when it
    answers a copy of a send the session had already taken (a network duplicate: the send was
    answered by the first copy). All three are read from outside, not from the registry's own
    word that an acknowledgement was stale (issue 36: that record dated the end of what the
    oracle judged)."""
    # A private try has no answer timeout (OpenClaw 2026.9.6 passes its agent call none): its
    # confirmation is had however late it comes, until the window's end gives the run up.
    private = private_runs(trace)
    confirmed: dict[str, Record] = {}
    sent_at: dict[str, int] = {}  # run_id -> its latest send
    sent_key: dict[str, str] = {}  # run_id -> the key of its latest send
    takes: dict[str, int] = {}  # run_id -> the session's takes of its latest send's key
    # Runs whose child corrected its answer since their latest send: a confirmation of that send
    # arriving after the correction confirms the older generation only, while the registry's
    # records that follow are the newer one's (seed 98658: a correction handed to a batch, the
    # first send's held acknowledgement failing its callback later, the batch then closing).
    corrected: set[str] = set()
    violations: list[Violation] = []
    for r in of_kinds(trace, ("gateway.callback_failed", "fault", "crash", "delivery.start", "drop",
                              "delivery.delivered", "delivery.give_up", "child.correction",
                              "requester.accept", "requester.duplicate",
                              "delivery.send_failed", "delivery.retry", "gateway.send")):
        kind = r.kind
        if kind == "gateway.send":
            run_id = r.data["run_id"]
            sent_at[run_id], sent_key[run_id], takes[run_id] = r.t_ms, r.data["key"], 0
            corrected.discard(run_id)
            if run_id in confirmed and confirmed[run_id].data["key"] != r.data["key"]:
                del confirmed[run_id]  # a newer hand-off: what follows may be its
        elif kind in ("requester.accept", "requester.duplicate"):
            run_id = r.data["run_id"]
            if r.data["key"] == sent_key.get(run_id):
                takes[run_id] = takes.get(run_id, 0) + 1
        elif kind == "child.correction":
            confirmed.pop(r.data["run_id"], None)
            corrected.add(r.data["run_id"])
        elif kind == "gateway.callback_failed":
            run_id = r.data["run_id"]
            if (r.t_ms - sent_at.get(run_id, r.t_ms) < ANSWER_TIMEOUT_MS or run_id in private) \
                    and r.data["key"] == (
                    sent_key.get(run_id, r.data["key"])) and takes.get(run_id, 1) <= 1 \
                    and run_id not in corrected:
                confirmed[run_id] = r
        elif kind == "fault" and (r.data.get("kind") == "send-ambiguous" or (
                r.data.get("kind") == "ack-slow" and r.data.get("run_id") not in private)):
            confirmed.pop(r.data.get("run_id", ""), None)
        elif is_delivery_crash(r) or kind == "delivery.start" or (
                kind == "drop" and r.data.get("dst") == "delivery"):
            confirmed.clear()  # the confirmation died with the process or never reached it
        elif kind == "delivery.delivered":
            confirmed.pop(r.data["run_id"], None)
        elif kind in ("delivery.give_up", "delivery.send_failed", "delivery.retry") and (
                r.data["run_id"] in confirmed):
            callback = confirmed.pop(r.data["run_id"])
            violations.append(Violation(
                "handoff-stays-delivered", "DEL-9",
                f"the session confirmed {r.data['run_id']}'s hand-off and only its receive "
                f"callback failed ({callback.data['error']!r}), yet the registry recorded "
                f"{kind}", (callback.seq, r.seq)))
    return violations


def blocked_warning(trace: Sequence[Record]) -> list[Violation]:
    """A blocked-completion warning names the run and its child session, and carries the
    concrete error of the run's latest refusal, kept across tries that went unanswered; only a
    run never refused is blocked on the bare announce timeout (DEL-9). After a crash of the
    delivery process the warning may carry any error the run was refused with (also one the
    gateway answered while the process was down: it never reached the process). A refusal that
    comes when the run's latest send was already answered is a late answer of an earlier send
    (a delayed message, a duplicate): the live process reads it as stale, and it is not the
    latest refusal (seed 4399). So is a refusal naming another key than the run's latest send's
    (an older generation's, answered after a correction's send: seed 14801; §c17); one of a send
    made before the run's latest correction may be either (seeds 13065, 151). A batch wake's
    refusal is each member's it owns; not an ordinary member's of a batch carrying a private
    result, which keeps its own completion delivery (PRV-5; seed 94596)."""
    private = private_runs(trace)
    session_of: dict[str, str] = {}
    answered: dict[str, bool] = {}  # run_id -> whether its latest send was refused already
    sent_key: dict[str, str] = {}  # run_id -> the key of its latest send
    sent_to: dict[str, str] = {}  # run_id -> the requester its latest send went to
    crashes = 0  # crashes of the delivery process so far
    sent_in: dict[str, int] = {}  # run_id -> the crashes before its latest send
    latest: dict[str, str] = {}  # run_id -> the text of its latest refusal
    seen: dict[str, set[str]] = {}  # run_id -> every refusal text
    crashed: set[str] = set()  # runs refused before a crash of the delivery process
    corrected: set[str] = set()  # runs corrected since their latest send
    maybe: dict[str, str] = {}  # run_id -> a refusal that may or may not be the latest (above)
    over: dict[str, bool] = {}  # run_id -> whether its own latest refusal was for good
    down = False  # the delivery process died and has not started again
    violations: list[Violation] = []
    for r in of_kinds(trace, ("spawn", "fault", "requester.gone", "gateway.refused", "crash",
                              "delivery.start", "gateway.send", "gateway.chunk_failed",
                              "delivery.warning", "child.correction")):
        kind = r.kind
        # A later chunk broken after earlier ones were sent: the channel's record of the failed
        # chunk carries what the delivery actor was answered, the cause wrapped in "chunk i of
        # n failed" (seed 5836, shrunk); its ``fault`` names no error (an abort) or only the
        # cause (a chunk-fail: seed 89788), so it is not the answer. A first chunk's failure is
        # the fault's own error.
        refusal = (is_rejection(r) and not (kind == "fault" and r.data.get("kind") in (
            "chunk-fail", "chunk-abort"))) or (kind == "gateway.chunk_failed"
                                               and r.data["index"] > 0)
        # A deleted session's refusal when the run's latest send went to another session (a
        # fallback to the requester's requester, DEL-4) answers an earlier send, delayed on its
        # way there: the live process reads it as stale (seeds 92622, 97011).
        elsewhere = kind == "requester.gone" and \
            r.actor != sent_to.get(r.data["run_id"], r.actor)
        # So is a refusal reaching a process started since the latest send: it answers a dead
        # process's try, whose token the new one never issued (§c17; seed 97011: a delayed
        # completion refused by its deleted session after the restart).
        elsewhere = elsewhere or (refusal and not down and not is_wake(str(r.data.get("key") or ""))
                                  and sent_in.get(r.data["run_id"], crashes) < crashes)
        if kind == "spawn":
            session_of[r.data["run_id"]] = r.data["child_session_key"]
        elif kind == "gateway.send":
            answered[r.data["run_id"]] = False
            sent_key[r.data["run_id"]] = r.data["key"]
            sent_to[r.data["run_id"]] = r.data.get("requester", "")
            sent_in[r.data["run_id"]] = crashes
            over.pop(r.data["run_id"], None)  # (a wake's send names no member run)
            corrected.discard(r.data["run_id"])
        elif kind == "child.correction":
            # A correction reopens the run as a newer generation (DEL-12): an answer still owed
            # to a send before it may be an older generation's, stale, even when no send of the
            # new one could go yet (both requesters deleted: seed 13065); or the latest, when it
            # reached the process before the correction's notice did (seed 151).
            corrected.add(r.data["run_id"])
        elif refusal and not answered.get(r.data["run_id"]) and r.data["run_id"] in corrected \
                and r.data.get("key") in (None, sent_key.get(r.data["run_id"])) \
                and not elsewhere:
            answered[r.data["run_id"]] = True
            maybe[r.data["run_id"]] = chain_text(r.data["error"])
            seen.setdefault(r.data["run_id"], set()).add(maybe[r.data["run_id"]])
        elif refusal and (answered.get(r.data["run_id"]) or elsewhere or r.data.get("key") not in (
                None, sent_key.get(r.data["run_id"], r.data.get("key")))):
            seen.setdefault(r.data["run_id"], set()).add(chain_text(r.data["error"]))
        elif refusal:
            answered[r.data["run_id"]] = True
            text = chain_text(r.data["error"])
            # A batch wake's refusal is a refusal of each member it carries: a member reopened
            # later keeps it as its concrete error (seed 19164); not a member whose own send
            # was already refused for good (sent or permanent: its delivery was over, a wave
            # only told its requester of it), which keeps its own refusal (seed 800).
            key = str(r.data.get("key") or "")
            wake = is_wake(key)
            if not wake:
                over[r.data["run_id"]] = chain_class(r.data["error"]) in ("sent", "permanent")
            members = key_runs(key) if wake else (r.data["run_id"],)
            # Seed 002: when a settled batch carries private results, "普通兄弟姐妹保留各自的
            # 完成交付" (ordinary siblings keep their own completion delivery, PRV-5): the wake
            # answers nothing of theirs, so its refusal is never their concrete error (seed
            # 94596: a public member redriven while the private batch's wake was pending kept
            # its own earlier refusal when the wake was refused for good).
            mixed = wake and any(run_id in private for run_id in members)
            for run_id in members:
                if mixed and run_id not in private:
                    continue
                if wake and over.get(run_id):
                    seen.setdefault(run_id, set()).add(text)
                    continue
                latest[run_id] = text
                maybe.pop(run_id, None)
                seen.setdefault(run_id, set()).add(text)
                if down:  # answered to a dead process: the next one never learns of it
                    crashed.add(run_id)
                else:
                    crashed.discard(run_id)
        elif is_delivery_crash(r):
            crashed.update(latest)
            down = True
            crashes += 1
        elif kind == "delivery.start":
            down = False
        elif kind == "delivery.warning":
            run_id = r.data["run_id"]
            error = r.data["error"]
            if r.data["child_session_key"] != session_of.get(run_id):
                violations.append(Violation(
                    "blocked-warning", "DEL-9",
                    f"the warning for {run_id} names child session "
                    f"{r.data['child_session_key']!r}, not {session_of.get(run_id)!r}", (r.seq,)))
            expected = latest.get(run_id, UNANSWERED)
            allowed = {expected, *((maybe[run_id],) if run_id in maybe else ())}
            if run_id in crashed:
                allowed |= seen.get(run_id, set()) | {UNANSWERED}
            if error not in allowed:
                violations.append(Violation(
                    "blocked-warning", "DEL-9",
                    f"the warning for {run_id} says {error!r}; its delivery is blocked on "
                    f"{expected!r}", (r.seq,)))
    return violations


def turn_identity(trace: Sequence[Record]) -> list[Violation]:
    """A completion input keeps its own turn identity through a compaction of the requester's
    transcript: an input the session had before it compacted is, when resent, still known
    (DEL-7). Read from what the session accepted and when it compacted."""
    accepted: dict[tuple[str, str], Record] = {}  # (session actor, key) -> first acceptance
    compacted: dict[str, Record] = {}  # session actor -> its latest compaction
    violations: list[Violation] = []
    for r in of_kinds(trace, ("requester.compacted", "requester.accept", "requester.recovered")):
        if r.kind == "requester.compacted":
            compacted[r.actor] = r
        elif r.kind in ("requester.accept", "requester.recovered"):
            first = accepted.setdefault((r.actor, r.data["key"]), r)
            compaction = compacted.get(r.actor)
            if first is not r and compaction is not None and first.seq < compaction.seq:
                violations.append(Violation(
                    "turn-identity", "DEL-7",
                    f"{r.actor} took {r.data['key']} as a new input at {r.t_ms} ms: it had it "
                    f"since {first.t_ms} ms, before compacting at {compaction.t_ms} ms",
                    (first.seq, compaction.seq, r.seq)))
    return violations


INVARIANTS = (
    Invariant("closed-turn-final", "DEL-7", "safety",
              "A closed-turn transcript rejection is a permanent failure recorded with its "
              "error; it is never rescheduled.",
              closed_turn_final),
    Invariant("turn-identity", "DEL-7", "safety",
              "A completion input keeps its turn identity through a compaction of the "
              "requester's transcript.",
              turn_identity),
    Invariant("handoff-stays-delivered", "DEL-9", "safety",
              "A hand-off the session confirmed stays delivered when its receive callback "
              "fails.",
              handoff_stays_delivered),
    Invariant("blocked-warning", "DEL-9", "safety",
              "A blocked-completion warning names the run and its child session and keeps the "
              "concrete delivery error across retries.",
              blocked_warning),
)
