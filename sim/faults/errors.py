"""The error chains the seeded send faults fail with (reference §c11, §c16), one table per
fault kind, and what a failing receive callback reports (DEL-9)."""

from __future__ import annotations

from actors.records.send_error import PLATFORM_REJECTED, WRITER_CLAIM_REBOUND, SendError
from sim.faults.kinds import FaultKind

# The error chains each send fault draws from (reference §c11, §c16): plain and wrapped causes,
# the writer-claim rebound, OpenClaw's case variants, and chains whose outer message hides the
# class.
TRANSIENT_ERRORS = (
    SendError("gateway not connected"),
    SendError("gateway closed (1006 abnormal closure)"),
    SendError("ECONNRESET"),
    SendError.of("announce delivery failed", "connect ECONNRESET 10.0.0.7:443"),
    SendError("status: unavailable"),
    SendError("errorcode=unavailable"),
    SendError("No active WhatsApp Web listener"),
    SendError("no active websocket listener"),
    SendError("Gateway Timeout"),
    SendError("connect ETIMEDOUT 10.0.0.7:443"),
    SendError("getaddrinfo ENOTFOUND gateway.local"),
    SendError("connect ECONNREFUSED 127.0.0.1:18789"),
    SendError("agent call failed: UNAVAILABLE: upstream restarting"),
    SendError.of("send failed", "network error"),
    SendError.of("transcript append failed", WRITER_CLAIM_REBOUND),
)
PERMANENT_ERRORS = (
    SendError("chat not found"),
    SendError("bot was blocked by the user"),
    SendError("unknown channel"),
    SendError("unsupported channel: fax"),
    SendError("user not found"),
    SendError("Forbidden: bot is not a member of the supergroup chat"),
    SendError.of("announce delivery failed", "Forbidden: bot was kicked from the group chat"),
    SendError("recipient is not a valid phone number"),
    SendError("outbound not configured for channel discord"),
    # A permanent cause wins over the rebound that wraps it (DEL-10).
    SendError.of(WRITER_CLAIM_REBOUND, "chat not found"),
    SendError.of("agent call failed", "Error: chat not found (status: unavailable)"),
    SendError("message not dispatched", platform_error=PLATFORM_REJECTED),
    # OpenClaw's closed-turn rejections (DEL-7).
    SendError("Session transcript keyed user is outside the current turn: announce:v1"),
    SendError.of("transcript persistence failed",
                 "Pending input is no longer active in its admitted transcript"),
)
PARTIAL_ERRORS = (
    # Transient-looking, but the first chunk was already sent: another try would duplicate it.
    SendError("chunk 2 of 3 failed: ECONNRESET", sent_before_error=True),
    SendError("announce delivery failed",
              SendError("network error after the first chunk", sent_before_error=True)),
    SendError("transcript mirror failed: gateway timeout", visible_reply_sent=True),
)
OTHER_ERRORS = (
    SendError("unexpected gateway response (HTTP 502)"),
    SendError("message rejected by the moderation queue"),
    SendError.of("announce delivery failed", "UNAVAILABLEX is not a status"),
    SendError("rate limited: retry later"),
    SendError("internal server error (500)"),
    SendError("payload failed validation: <text> & more"),
    SendError("request failed: failed, timed out?"),
)
# What a channel answers when it refuses one chunk of a longer message.
CHUNK_ERRORS = (
    SendError("connect ECONNRESET 149.154.167.220:443"),
    SendError("Bad Request: message is too long"),
    SendError("Too Many Requests: retry after 30"),
    SendError("chat not found"),
)
SEND_FAULTS: tuple[tuple[str, tuple[SendError, ...]], ...] = (
    (FaultKind.SEND_PERMANENT, PERMANENT_ERRORS),
    (FaultKind.SEND_PARTIAL, PARTIAL_ERRORS),
    (FaultKind.SEND_OTHER, OTHER_ERRORS),
    (FaultKind.SEND_TRANSIENT, TRANSIENT_ERRORS),
)
# What a receive callback fails with after a confirmed hand-off (DEL-9).
CALLBACK_ERRORS = (
    "delivery receipt callback failed: task store is locked",
    "onDelivered hook threw: TypeError: cannot read properties of undefined",
    "gateway timeout while reporting the delivery result",
)
