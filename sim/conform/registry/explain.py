"""What OpenClaw's registry does where the model differs on purpose (or has not followed yet):
one explainer per ``registry`` row of ``differences.toml``. Each states OpenClaw's behaviour
exactly from what the run's records say; a divergence counts as documented only when
OpenClaw's side is what the row says it is.

An explainer gets ``(context, model, openclaw)``: ``context`` holds the ``divergence`` (with
whether OpenClaw still held the row and when its announce flow was called), the run's trace
records (``run``) and the spawns of later replayed runs of its child session (``newer_runs``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from actors.announce.labels import js_trim
from actors.child.frozen import cap_frozen_result
from sim.conform.differences import Difference
from sim.conform.registry.child_end import final_text

# OpenClaw's runtime keeps a terminal reply to this many UTF-16 units (then cuts to one less
# and appends an ellipsis): sanitizeAgentRunTerminalReplyText.
TERMINAL_REPLY_MAX_UNITS = 4096
SILENT_TOKEN = "NO_REPLY"
_EDGE_PUNCTUATION = re.compile(r"^[^\w\s]+|[^\w\s]+$")


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _cut_units(text: str, units: int) -> str:
    """A prefix of at most ``units`` UTF-16 units that never splits a surrogate pair."""
    out: list[str] = []
    used = 0
    for char in text:
        size = 2 if ord(char) > 0xFFFF else 1
        if used + size > units:
            break
        out.append(char)
        used += size
    return "".join(out)


def openclaw_terminal_text(reply: str) -> str:
    """The runtime's terminal reply text: trimmed; past 4,096 UTF-16 units, its first 4,095
    (pair-safe), end-trimmed, plus ``…``."""
    text = js_trim(reply)
    if _units(text) <= TERMINAL_REPLY_MAX_UNITS:
        return text
    # The prefix starts trimmed, so trimming it both ways is JavaScript's trimEnd.
    return js_trim(_cut_units(text, TERMINAL_REPLY_MAX_UNITS - 1)) + "…"


def _reply(context: Mapping[str, Any]) -> str | None:
    records = context["run"]
    end = next((r for r in records if r.kind == "child.end"), None)
    if end is None:
        return None
    result = end.data.get("result")
    if isinstance(result, str):
        return result
    return final_text([r for r in records if r.kind == "child.message" and r.seq < end.seq])


def _end_status(context: Mapping[str, Any]) -> str | None:
    end = next((r for r in context["run"] if r.kind == "child.end"), None)
    return None if end is None else str(end.data.get("status"))


def _frozen_fields(context: Mapping[str, Any]) -> bool:
    return bool(context["divergence"].field in ("frozen", "handedResult"))


def error_end_grace(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    divergence = context["divergence"]
    return (divergence.kind == "child.end" and divergence.field in ("ended", "outcome")
            and _end_status(context) in ("error", "timeout", "killed")
            and real in (False, None))


def frozen_trimmed(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    reply = _reply(context)
    return (_frozen_fields(context) and isinstance(reply, str) and not _silent(reply)
            and _units(js_trim(reply)) <= TERMINAL_REPLY_MAX_UNITS
            and model == cap_frozen_result(reply) and real == js_trim(reply) != "")


def terminal_reply_cut(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    reply = _reply(context)
    return (_frozen_fields(context) and isinstance(reply, str)
            and _units(js_trim(reply)) > TERMINAL_REPLY_MAX_UNITS
            and model == cap_frozen_result(reply) and real == openclaw_terminal_text(reply))


def empty_reply_unfrozen(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    reply = _reply(context)
    return (_frozen_fields(context) and model == "" and real is None
            and isinstance(reply, str) and js_trim(reply) == "")


def _silent(reply: str) -> bool:
    """OpenClaw's token-only silent reply: ``NO_REPLY`` alone once trimmed and stripped of
    edge punctuation, in any case."""
    bare = _EDGE_PUNCTUATION.sub("", js_trim(reply))
    return bare.upper() == SILENT_TOKEN


def silent_reply_token(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    reply = _reply(context)
    return (_frozen_fields(context) and real == SILENT_TOKEN and isinstance(reply, str)
            and _silent(reply) and model != real)


def partial_send_retried(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    divergence = context["divergence"]
    gave_up = next((r for r in context["run"] if r.kind == "delivery.give_up"
                    and r.seq == divergence.seq), None)
    return (divergence.field == "status" and gave_up is not None
            and str(gave_up.data.get("reason")) == "sent_before_error" and real == "pending")


def duplicate_end_resent(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # The end message came twice: OpenClaw's registry called the announce flow again.
    return bool(context.get("duplicated_end") and context["divergence"].field == "handed"
                and isinstance(real, int) and isinstance(model, int) and real > model)


def lost_answer_error(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # The capture missed the answer (the world's answer_lost): the end carried no terminal
    # reply, and OpenClaw fails a required ok run that has none.
    divergence = context["divergence"]
    return bool(context.get("answer_lost") and divergence.kind == "child.end"
                and divergence.field == "outcome" and model == "ok" and real == "error"
                and _end_status(context) == "ok")


def redrive_only_suspended(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # OpenClaw's operator retry takes only a suspended completion (or one in flight with a
    # queue entry); the model's redrive also takes a failed or a paused (backing-off) one.
    divergence = context["divergence"]
    redrive = next((r for r in context["run"] if r.kind == "delivery.redrive"
                    and r.seq == divergence.seq), None)
    return bool(divergence.field == "redriven" and model is True and real is False
                and redrive is not None and redrive.data.get("was") in ("failed", "paused"))


def crashed_attempt_uncounted(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # OpenClaw counts an attempt when its answer is recorded; the model counts it when it
    # claims it, so each attempt a crash cut short is one more in the model's count.
    divergence = context["divergence"]
    crashed = int(context.get("crashed_calls", 0))
    return bool(divergence.field == "attempts" and isinstance(model, int)
                and isinstance(real, int) and 0 < model - real <= crashed)


def correction_not_reannounced(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # A correction after the first announce (the model's delivery.reopen): OpenClaw keeps the
    # corrected result in the row but never calls the announce flow for it.
    divergence = context["divergence"]
    reopened = any(r.kind == "delivery.reopen" and r.seq < divergence.seq
                   for r in context["run"])
    if not reopened:
        return False
    if divergence.field == "handed":
        return bool(isinstance(model, int) and isinstance(real, int) and real < model)
    # After a crash the call count is not compared: the announce flow was last handed the
    # first answer, never the corrected one.
    end = next((r for r in context["run"] if r.kind == "child.end"), None)
    first = end.data.get("result") if end is not None else None
    return bool(divergence.field == "handedResult" and isinstance(first, str)
                and real == cap_frozen_result(first) and model != real)


def correction_after_give_up_resent(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # A correction of a given-up run: OpenClaw's registry makes its delivery pending again and
    # announces it; the model keeps it given up (only the retained payload changes).
    divergence = context["divergence"]
    return bool(divergence.kind == "child.correction" and divergence.field == "status"
                and model in ("suspended", "failed") and real == "pending")


def killed_run_pending(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # A run killed while it ran: OpenClaw's tombstone ends it (error) and suppresses its
    # announce, but its delivery status stays pending; the model records not_required.
    divergence = context["divergence"]
    killed = any(r.kind == "child.abort" for r in context["run"])
    return bool(killed and divergence.kind == "delivery.skip" and divergence.field == "status"
                and model == "not_required" and real == "pending")


def superseded_row_retired(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # A newer run of the same child session was registered before this run's delivery: when
    # the delivery settles, OpenClaw's cleanup records it delivered, then retires the older
    # row (finalizeSubagentCleanup -> retireSupersededSubagentRun), so the registry no longer
    # holds it. Only a delivery its announce flow was called for at that very instant.
    divergence = context["divergence"]
    return bool(divergence.kind == "delivery.delivered" and divergence.field == "status"
                and model == "delivered" and real is None and not divergence.row
                and divergence.t_ms in divergence.handed_at
                and any(spawn.t_ms <= divergence.t_ms
                        for spawn in context.get("newer_runs", ())))


# A delivery's own steps (not its warnings): the last one says what it was waiting for.
_ATTEMPT_STEPS = ("delivery.attempt", "delivery.send_failed", "delivery.retry")


def late_ack_between_attempts(context: Mapping[str, Any], model: Any, real: Any) -> bool:
    # The model's delivery, waiting out its registry backoff, records the run delivered when a
    # late acknowledgement of an earlier try's send arrives (the requester accepted it after
    # the try had timed out). OpenClaw's announce call gave up on that answer at its timeout:
    # its row stays pending until its next attempt, with no announce call in between.
    divergence = context["divergence"]
    snapshot = divergence.snapshot
    before = [r for r in context["run"] if r.seq < divergence.seq]
    last = next((r for r in reversed(before) if r.kind in _ATTEMPT_STEPS), None)
    delivered = next((r for r in context["run"] if r.seq == divergence.seq), None)
    accepted = delivered is not None and any(
        r.kind == "requester.accept" and r.t_ms == divergence.t_ms
        and r.data.get("key") == delivered.data.get("key") for r in before)
    next_at = snapshot.get("nextAttemptAt")
    if divergence.field == "handed":
        sides = isinstance(model, int) and model == real + 1
    else:
        sides = divergence.field == "status" and model == "delivered" and real == "pending"
    return bool(divergence.kind == "delivery.delivered" and sides and accepted
                and last is not None and last.kind == "delivery.retry"
                and snapshot.get("status") == "pending" and isinstance(next_at, int)
                and next_at > divergence.t_ms
                and divergence.t_ms not in divergence.handed_at)


def explain(table: Sequence[Difference], context: Mapping[str, Any], model: Any,
            real: Any) -> str | None:
    """The id of the ``registry`` row that explains this divergence, or None."""
    for row in table:
        if row.check == CHECK and EXPLAINERS[row.id](context, model, real):
            return row.id
    return None


CHECK = "registry"
EXPLAINERS: dict[str, Callable[[Any, Any, Any], bool]] = {
    "registry-error-end-grace": error_end_grace,
    "registry-frozen-trimmed": frozen_trimmed,
    "registry-terminal-reply-cut": terminal_reply_cut,
    "registry-empty-reply-unfrozen": empty_reply_unfrozen,
    "registry-silent-reply-token": silent_reply_token,
    "registry-partial-send-retried": partial_send_retried,
    "registry-duplicate-end-resent": duplicate_end_resent,
    "registry-lost-answer-error": lost_answer_error,
    "registry-redrive-only-suspended": redrive_only_suspended,
    "registry-crashed-attempt-uncounted": crashed_attempt_uncounted,
    "registry-correction-not-reannounced": correction_not_reannounced,
    "registry-correction-after-give-up-resent": correction_after_give_up_resent,
    "registry-killed-run-delivery-pending": killed_run_pending,
    "registry-superseded-row-retired": superseded_row_retired,
    "registry-late-ack-between-attempts": late_ack_between_attempts,
}
