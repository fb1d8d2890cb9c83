"""The fault kinds a world may turn on, what each does, and the rates a seed may give them
(swarm testing: sim/faults.py draws which are on)."""

from __future__ import annotations

import enum


class FaultKind(enum.StrEnum):
    SEND_TRANSIENT = "send-transient"
    SEND_PERMANENT = "send-permanent"
    SEND_PARTIAL = "send-partial"
    SEND_OTHER = "send-other"
    SEND_AMBIGUOUS = "send-ambiguous"
    SEND_OUTAGE = "send-outage"
    CHUNK_FAIL = "chunk-fail"
    CHUNK_ABORT = "chunk-abort"
    ACK_SLOW = "ack-slow"
    DUPLICATE = "duplicate"
    DELAY = "delay"
    CRASH = "crash"
    CHILD_ERROR = "child-error"
    CHILD_TIMEOUT = "child-timeout"
    TOKEN_LIMIT = "token-limit"
    ATTEMPT_RETRY = "attempt-retry"
    NO_REPLY = "no-reply"
    ABORT = "abort"
    UNAUTHORISED = "unauthorised"
    CALLBACK_FAIL = "callback-fail"
    ANSWER_LOST = "answer-lost"
    RECOVERY_FAIL = "recovery-fail"
    MIRROR_FAIL = "mirror-fail"
    COMPACTION = "compaction"
    DELETE_SESSION = "delete-session"


FAULT_KINDS: dict[str, str] = {
    FaultKind.SEND_TRANSIENT: "the gateway refuses a completion with a transient error",
    FaultKind.SEND_PERMANENT: "the gateway refuses a completion with a permanent error",
    FaultKind.SEND_PARTIAL: "a send fails after part of the completion reached the platform",
    FaultKind.SEND_OTHER: "the gateway refuses a completion with an unclassified error",
    FaultKind.SEND_AMBIGUOUS: "a completion reaches its requester but the acknowledgement is lost",
    FaultKind.SEND_OUTAGE: "the gateway refuses every completion for minutes on end (retries "
                           "back off, reach the cap and may expire)",
    FaultKind.CHUNK_FAIL: "a channel refuses a later chunk of a chunked completion",
    FaultKind.CHUNK_ABORT: "a chunked send to a channel is aborted after its first chunk",
    FaultKind.ACK_SLOW: "a session's acknowledgement comes back after the 120 s announce timeout",
    FaultKind.DUPLICATE: "a message between actors is delivered twice",
    FaultKind.DELAY: "a message between actors is delayed by 1-60 s (now and then by up to 3 "
                     "min)",
    FaultKind.CRASH: "the delivery actor's process dies at a crash point or while it waits, and "
                     "restarts 1-30 s later",
    FaultKind.CHILD_ERROR: "a child run's stream breaks and the run ends with an error",
    FaultKind.CHILD_TIMEOUT: "a child run outlives its timeout and is disposed of",
    FaultKind.TOKEN_LIMIT: "a child step is cut off at its token limit (max-tokens)",
    FaultKind.ATTEMPT_RETRY: "a child's model attempt fails and is retried",
    FaultKind.NO_REPLY: "a child run finishes with NO_REPLY, an empty reply or ANNOUNCE_SKIP",
    FaultKind.ABORT: "a requester aborts a running child",
    FaultKind.UNAUTHORISED: "someone without the session's permission (another person, or a turn "
                            "started by a completion report) tries a session-control action",
    FaultKind.CALLBACK_FAIL: "the receive callback fails after a session confirmed a hand-off",
    FaultKind.ANSWER_LOST: "a child's final answer reaches its transcript but the captured "
                           "reply is lost (lost-answer recovery finds it)",
    FaultKind.RECOVERY_FAIL: "the gateway refuses lost-answer recovery's hand-off of an answer",
    FaultKind.MIRROR_FAIL: "appending a direct delivery's transcript mirror fails",
    FaultKind.COMPACTION: "a requester session compacts its transcript while completions are "
                          "in flight",
    FaultKind.DELETE_SESSION: "a nested requester's session is deleted once its run ended, "
                              "often while its children still run",
}
assert list(FAULT_KINDS) == list(FaultKind)
# Rates a seed may give an enabled kind (per opportunity).
RATES = (0.02, 0.05, 0.1, 0.25)
# A crash strikes at every crash point of every restart: high rates make crash loops that only the
# heal ends, which cost much and find little, so crashes draw from lower rates.
KIND_RATES = {"crash": (0.01, 0.03, 0.06, 0.12),
              # One chance per nested child (a few a seed): high rates, or it is hardly seen.
              "delete-session": (0.25, 0.5, 0.75, 1.0)}
