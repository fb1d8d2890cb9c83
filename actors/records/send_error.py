"""A failed completion send as an error chain, and its delivery class (reference §c11, §c16).

OpenClaw classifies a send error by walking its whole cause chain (``cause`` / ``error`` /
``reason``), not by one flattened message: the evidence that part of the send already reached the
platform can sit on any link, and a permanent rejection can be wrapped in a transient-looking
error. :class:`SendError` is that chain as a frozen value; :func:`classify` applies the order
§c16 gives. Pure: no IO, no clock.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

# The platform error type of a message the channel refused to dispatch (a rejected message):
# permanent whatever its text says.
PLATFORM_REJECTED = "message-not-dispatched"

# The patterns are JavaScript regexes in OpenClaw; they are restated so Python matches exactly
# what JavaScript does: ASCII-only word boundaries and case folding (re.ASCII), JavaScript's `\s`
# and its `.` (which stops at any line terminator, not only at "\n"), `$` only at the very end.
_S = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_DOT = "[^\n\r\u2028\u2029]"
_TRANSIENT = re.compile(
    rf"\berrorcode=unavailable\b|\bstatus{_S}*[:=]{_S}*\"?unavailable\b"
    rf"|no active {_DOT}* listener|gateway not connected|gateway closed \(1006|gateway timeout"
    r"|\b(?:econnreset|econnrefused|etimedout|enotfound|ehostunreach|network error)\b",
    re.IGNORECASE | re.ASCII,
)
# The one case-sensitive transient pattern: a gRPC-style status word in capitals.
_TRANSIENT_CASED = re.compile(r"\bUNAVAILABLE\b", re.ASCII)
_PERMANENT = re.compile(
    rf"unsupported channel|unknown channel|chat not found|user not found|bot{_DOT}*not{_DOT}*member"
    r"|bot was blocked by the user|forbidden: bot was kicked|recipient is not a valid"
    r"|outbound not configured for channel",
    re.IGNORECASE | re.ASCII,
)
# OpenClaw's own wording when transcript persistence refuses an input of a closed turn (DEL-7).
_CLOSED_TURN = re.compile(
    r"^(?:Error: )?(?:Session transcript keyed user is outside the current turn: "
    r"[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
    r"|Pending input is no longer active in its admitted transcript\Z)"
)
WRITER_CLAIM_REBOUND = "session writer claim changed before transcript persistence"
_WRITER_CLAIM = re.compile(re.escape(WRITER_CLAIM_REBOUND), re.IGNORECASE | re.ASCII)


class ErrorClass(enum.Enum):
    # Part of the send reached the platform: another try could duplicate it, so it is never
    # resent (a terminal give-up, like an incomplete chunked send, DEL-11).
    SENT = "sent"
    PERMANENT = "permanent"
    # Retried by the inner transport loop (5 s, 10 s, 20 s).
    TRANSIENT = "transient"
    # Not retried by the inner loop; the registry loop decides (it retries with backoff).
    OTHER = "other"


@attrs.frozen
class SendError:
    """One link of an error chain; ``cause`` is the error it wraps (``None`` at the root)."""

    message: str
    cause: SendError | None = None
    sent_before_error: bool = False
    visible_reply_sent: bool = False
    # The platform's error type when it gave one, e.g. :data:`PLATFORM_REJECTED`.
    platform_error: str | None = None

    def chain(self) -> Iterator[SendError]:
        """This error, then each cause, outermost first."""
        link: SendError | None = self
        while link is not None:
            yield link
            link = link.cause

    def text(self) -> str:
        """The chain as one line for logs and ``last_error``: ``outer: cause: root``."""
        return ": ".join(link.message for link in self.chain())

    def to_json(self) -> dict[str, Any]:
        """The chain as the trace records it (only the flags that are set)."""
        out: dict[str, Any] = {"message": self.message}
        if self.sent_before_error:
            out["sentBeforeError"] = True
        if self.visible_reply_sent:
            out["visibleReplySent"] = True
        if self.platform_error is not None:
            out["platformError"] = self.platform_error
        if self.cause is not None:
            out["cause"] = self.cause.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SendError:
        cause = data.get("cause")
        return cls(
            message=str(data["message"]),
            cause=None if cause is None else cls.from_json(cause),
            sent_before_error=bool(data.get("sentBeforeError", False)),
            visible_reply_sent=bool(data.get("visibleReplySent", False)),
            platform_error=data.get("platformError"),
        )

    @classmethod
    def of(cls, *messages: str, sent_before_error: bool = False) -> SendError:
        """A chain from messages, outermost first; the evidence flag goes on the outermost."""
        assert messages
        error: SendError | None = None
        for message in reversed(messages):
            error = cls(message, error)
        assert error is not None
        return attrs.evolve(error, sent_before_error=sent_before_error)


def _permanent(link: SendError, closed_turn_permanent: bool = True) -> bool:
    """A permanent cause in this link. OpenClaw skips the permanent patterns on the link that
    is itself a writer-claim rebound (a phrase of both in one message is transient, reference
    §c16); only a typed platform rejection still counts there."""
    if link.platform_error == PLATFORM_REJECTED:
        return True
    if closed_turn_permanent:
        return _permanent_text(link.message)
    return _permanent_text(link.message, False)


# Send errors repeat the same few messages, and a case-folding search tries each alternative at
# each position: each message is looked at once (docs/performance-log.md, wave 11b).
@functools.lru_cache(maxsize=4096)
def _permanent_text(message: str, closed_turn_permanent: bool = True) -> bool:
    if _WRITER_CLAIM.search(message) is not None:
        return False
    return _PERMANENT.search(message) is not None or (
        closed_turn_permanent and _CLOSED_TURN.search(message) is not None)


@functools.lru_cache(maxsize=4096)
def _transient(message: str) -> bool:
    return (_TRANSIENT.search(message) is not None
            or _TRANSIENT_CASED.search(message) is not None)


def closed_turn(error: SendError) -> bool:
    """Transcript persistence refused the input because its turn has closed (DEL-7)."""
    return any(_CLOSED_TURN.search(link.message) is not None for link in error.chain())


def classify(error: SendError, closed_turn_permanent: bool = True) -> ErrorClass:
    """The delivery class of a failed send, in §c16's order over every link of the chain:
    send evidence, then a permanent cause, then the writer-claim rebound (transient), then the
    transient patterns; anything else is left to the registry loop.

    A closed-turn refusal is permanent (DEL-7, the seed); ``closed_turn_permanent=False`` gives
    OpenClaw 2026.9.6's reading, where it matches no pattern (§c19; ``handoff conform``)."""
    links = list(error.chain())
    if any(link.sent_before_error or link.visible_reply_sent for link in links):
        return ErrorClass.SENT
    if any(_permanent(link, closed_turn_permanent) for link in links):
        return ErrorClass.PERMANENT
    if any(_WRITER_CLAIM.search(link.message) for link in links):
        return ErrorClass.TRANSIENT
    if any(_transient(link.message) for link in links):
        return ErrorClass.TRANSIENT
    return ErrorClass.OTHER
