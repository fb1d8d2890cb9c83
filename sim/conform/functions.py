"""The function checks: each model function beside the OpenClaw function it answers for, with
the inputs Hypothesis draws for it (edge cases included: whitespace of every class, Unicode,
lone surrogates, huge numbers, limits +-1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from actors.announce.labels import status_line, task_line, visible_text
from actors.announce.layout import BLOCK_CLOSE, BLOCK_OPEN, NO_OUTPUT_LINE, escape_data
from actors.announce.result import ChildResult, Usage
from actors.announce.stats import format_duration, format_stats_line, format_tokens
from actors.child.frozen import FROZEN_RESULT_MAX_BYTES, cap_frozen_result
from actors.records.retry import backoff_ms
from actors.records.run_record import completion_key
from actors.records.send_error import PLATFORM_REJECTED, ErrorClass, SendError, classify
from sim.conform.checks import Check
from sim.conform.driver import Driver
from sim.conform.history import HISTORY

# Every whitespace class JavaScript or Python knows, line terminators, format characters.
SPACES = ("\t\n\v\f\r \x1c\x1d\x1e\x1f\x85\xa0\u1680\u180e\u2000\u200a\u200b\u2028\u2029"
          "\u202f\u205f\u3000\ufeff")
SPECIAL = SPACES + "<>&\"'\\\x00\x07\x7f\u00ad\u200d\u2066é\U0001f600\ud800\udc00\udbff"
LONE = st.sampled_from(["\ud800", "\udc00", "\udbff", "\udfff"])
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.sampled_from(SPECIAL + "ab")),
    st.lists(st.one_of(st.text(max_size=3), LONE, st.sampled_from(SPECIAL)))
    .map("".join),
)
DOUBLE_INTS = st.floats(min_value=0, max_value=1.7e308).map(int)


def _batch(driver: Driver, name: str, calls: Sequence[Sequence[Any]]) -> list[Any]:
    answers = driver.request("batch", name=name, calls=[list(c) for c in calls])
    return [a["ok"] if "ok" in a else ("error", a["error"]) for a in answers]


# -- compact duration -----------------------------------------------------------------------

def _duration_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return [a if a is not None else "n/a"
            for a in _batch(driver, "formatDurationCompact", [[ms] for ms in inputs])]


DURATION = Check(
    "duration", "formatDurationCompact (the stats line's `runtime`)",
    st.one_of(st.integers(-2, 10**7), st.integers(0, 2**53),
              st.floats(min_value=-1e3, max_value=1e7, allow_nan=False),
              st.floats(allow_nan=False, allow_infinity=False),
              st.sampled_from([0.4, 0.5, 499.5, 999.4, 999.5, 1499.5, 59_499.5, 59_500,
                               86_399_500, 86_400_000, 90_061_000])),
    format_duration, _duration_real,
    edges=(0, 1, 999, 1000, 1001, 59_999, 60_000, 3_600_000, 86_400_000, 2**53, -1),
    needs=("formatDurationCompact",))


# -- token counts -----------------------------------------------------------------------------

def _tokens_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return _batch(driver, "formatTokenCount", [[value] for value in inputs])


TOKENS = Check(
    "tokens", "formatTokenCount (subagent-announce-output's, the stats line's)",
    st.one_of(st.none(), st.integers(-5, 10**7), st.integers(0, 2**53), DOUBLE_INTS,
              st.sampled_from([999, 1000, 999_949, 999_950, 999_999, 10**6, 10**21, 10**27,
                               10**33, 10**34])),
    format_tokens, _tokens_real,
    edges=(None, 0, 1, 999, 1000, 1049, 1050, 999_950, 10**6, 10**33, 10**34, 2**53),
    needs=("formatTokenCount",))


# -- the frozen-result cap ----------------------------------------------------------------------

def _near_cap(parts: tuple[str, int, str, str]) -> str:
    """A piece repeated to land within a few bytes of the cap, between two edges."""
    head, offset, piece, tail = parts
    size = max(len(piece.encode("utf-8", "surrogatepass")), 1)
    return head + piece * ((FROZEN_RESULT_MAX_BYTES + offset) // size) + tail


def _frozen_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return _batch(driver, "capFrozenResultText", [[text] for text in inputs])


FROZEN_CAP = Check(
    "frozen-cap", "capFrozenResultText (internal)",
    st.one_of(
        TEXT,
        st.tuples(TEXT, st.integers(-8, 8), st.text(min_size=1, max_size=4)
                  .filter(lambda s: s.strip() != "") | LONE, TEXT).map(_near_cap),
    ),
    lambda text: cap_frozen_result(text), _frozen_real,
    edges=("", " ", "\u3000x\u3000", "a" * FROZEN_RESULT_MAX_BYTES,
           "a" * (FROZEN_RESULT_MAX_BYTES + 1), "é" * 51_200, "é" * 51_201,
           "\U0001f600" * 25_601, "a" * 102_350 + "\ud800" * 100),
    show=lambda text: f"{len(text)} characters: {text[:80]!r}...{text[-80:]!r}",
    needs=("capFrozenResultText",))


# -- the registry's backoff -------------------------------------------------------------------

def _backoff_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return list(driver.request("backoff", calls=[list(pair) for pair in inputs]))


BACKOFF = Check(
    "backoff", "resolveAnnounceRetryDelayMs (Math.random set to the jitter drawn)",
    st.tuples(st.integers(1, 80), st.floats(min_value=0, max_value=1, exclude_max=True)),
    lambda pair: backoff_ms(pair[0], pair[1]), _backoff_real,
    edges=((1, 0.0), (1, 0.5), (1, 0.9999999999999999), (5, 0.25), (6, 0.0), (17, 0.5),
           (18, 0.1), (1000, 0.3)),
    needs=("resolveAnnounceRetryDelayMs",))


# -- the idempotency key ----------------------------------------------------------------------

def _key_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return list(driver.request("idempotency", calls=[list(pair) for pair in inputs]))


IDEMPOTENCY = Check(
    "idempotency-key", "buildAnnounceIdempotencyKey(buildAnnounceIdFromChildRun(...))",
    st.tuples(TEXT, TEXT), lambda pair: completion_key(pair[0], pair[1]), _key_real,
    edges=(("", ""), ("agent:main:subagent:x", "run-1"), (":", ":"), ("\ud800", "\udfff")),
    needs=("buildAnnounceIdempotencyKey", "buildAnnounceIdFromChildRun"))


# -- the delivery error classifier ------------------------------------------------------------

PATTERN_TEXTS = (
    "errorcode=unavailable", "status: \"unavailable", "status\u3000=UNAVAILABLE", "UNAVAILABLE",
    "unavailable", "no active chat listener", "gateway not connected", "gateway closed (1006",
    "Gateway Timeout", "ECONNRESET", "econnrefused", "etimedout", "ENOTFOUND", "ehostunreach",
    "network error", "unsupported channel", "Unknown Channel", "chat not found",
    "user not found", "bot is not a member", "bot was blocked by the user",
    "Forbidden: bot was kicked", "recipient is not a valid", "outbound not configured for channel",
    "session writer claim changed before transcript persistence",
    "Session transcript keyed user is outside the current turn: u1",
    "Error: Session transcript keyed user is outside the current turn: x",
    "Pending input is no longer active in its admitted transcript",
    "incomplete terminal response", "code=incomplete_result", "timeout", "refused",
)
MESSAGE = st.one_of(
    st.sampled_from(PATTERN_TEXTS),
    st.tuples(TEXT, st.sampled_from(PATTERN_TEXTS), TEXT).map("".join),
    st.tuples(st.sampled_from(PATTERN_TEXTS), st.sampled_from(SPACES + "\u2028é"))
    .map(lambda p: p[0].replace(" ", p[1])),
    TEXT,
)


def _chains(depth: int) -> st.SearchStrategy[SendError]:
    link = st.builds(SendError, message=MESSAGE, cause=st.none(),
                     sent_before_error=st.booleans() if depth == 0 else st.just(False),
                     visible_reply_sent=st.sampled_from([False, False, False, True]),
                     platform_error=st.sampled_from([None, None, None, PLATFORM_REJECTED]))
    if depth == 0:
        return link
    return st.one_of(link, st.builds(
        SendError, message=MESSAGE, cause=_chains(depth - 1),
        sent_before_error=st.sampled_from([False, False, False, True]),
        visible_reply_sent=st.just(False),
        platform_error=st.sampled_from([None, None, None, None, PLATFORM_REJECTED])))


_MODEL_CLASS = {ErrorClass.SENT: "sent", ErrorClass.PERMANENT: "permanent",
                ErrorClass.TRANSIENT: "transient", ErrorClass.OTHER: "other"}


def _class_model(error: SendError) -> str:
    return _MODEL_CLASS[classify(error)]


def _class_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    answers = driver.request("classify", chains=[error.to_json() for error in inputs])
    out = []
    for answer in answers:
        if answer["sent"]:
            out.append("sent")
        elif answer["transient"] and answer["permanent"]:
            out.append("transient+permanent")
        elif answer["transient"]:
            out.append("transient")
        else:
            out.append("permanent" if answer["permanent"] else "other")
    return out


CLASSIFIER = Check(
    "classifier",
    "hasAnnounceSendEvidence, isTransientAnnounceDeliveryError, "
    "isPermanentAnnounceDeliveryError (internal) over Error chains linked by `cause`",
    _chains(3), _class_model, _class_real,
    edges=tuple(SendError(text) for text in PATTERN_TEXTS),
    show=lambda error: repr(error.to_json()),
    needs=("isTransientAnnounceDeliveryError", "isPermanentAnnounceDeliveryError",
           "hasAnnounceSendEvidence", "PlatformMessageNotDispatchedError"))


# -- the <prompt-data> block ------------------------------------------------------------------

def _data_block_model(text: str) -> str:
    shown = visible_text(text)
    return NO_OUTPUT_LINE if shown is None else BLOCK_OPEN + escape_data(shown) + BLOCK_CLOSE


def _data_block_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    return _batch(driver, "formatChildResultDataBlock", [[text] for text in inputs])


PROMPT_DATA = Check(
    "prompt-data", "formatChildResultDataBlock -> wrapPromptDataBlock (internal)",
    TEXT, _data_block_model, _data_block_real,
    edges=("", " ", "a", "<prompt-data>", "</prompt-data>", "&lt;", "a\r\nb", "\u200bx"),
    needs=("formatChildResultDataBlock",))


# -- the status label and the task line -------------------------------------------------------

STATUS_TASK_INPUT = st.tuples(
    st.sampled_from(["ok", "error", "timeout", "unknown"]),
    st.one_of(st.none(), TEXT, st.text(alphabet=SPACES, min_size=1),
              st.integers(480, 520).map(lambda n: "e" * n),
              st.tuples(st.integers(470, 500), st.sampled_from(" \n\U0001f600\ud800"))
              .map(lambda p: "x" * p[0] + p[1] * 20)),
    st.one_of(st.none(), TEXT, st.text(alphabet=SPACES, min_size=1),
              st.integers(250, 262).map(lambda n: "t" * n)),
)


def _lines_model(value: tuple[str, str | None, str | None]) -> tuple[str, str]:
    status, error, task = value
    return f"task: {task_line(task)}", f"status: {status_line(status, error)}"  # type: ignore[arg-type]


def _lines_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    answers = driver.request("statusTask", calls=[list(value) for value in inputs])
    return [tuple(answer) for answer in answers]


STATUS_TASK = Check(
    "status-task", "formatAgentInternalEventsForPrompt's task and status lines, fed the label "
    "runSubagentAnnounceFlow builds inline",
    STATUS_TASK_INPUT, _lines_model, _lines_real,
    edges=(("ok", None, None), ("error", None, ""), ("error", "", " "), ("error", " ", "\n"),
           ("timeout", " ", "a\nb"), ("error", "e" * 600, "t" * 300)),
    needs=("formatAgentInternalEventsForPrompt",))

# -- the stats line -------------------------------------------------------------------------

COUNT = st.one_of(st.none(), st.integers(0, 2_000), st.integers(0, 10**7),
                  st.sampled_from([999, 1000, 999_949, 999_950, 10**6, 2**53]))
STATS_INPUT = st.tuples(
    st.one_of(st.none(), st.integers(0, 10**6)),  # started at (ms)
    st.one_of(st.none(), st.integers(0, 10**6), st.integers(0, 10**12)),  # ended at (ms)
    st.one_of(st.none(), st.tuples(COUNT, COUNT, COUNT)),  # usage: input, output, total
)


def _stats_child(value: tuple[Any, Any, Any]) -> ChildResult:
    started, ended, usage = value
    if started is not None and ended is not None and ended < started:
        started, ended = ended, started  # a run never ends before it starts
    return ChildResult(
        session_key="agent:main:subagent:conform", session_id="s", task="t", status="ok",
        error=None, text="r", created_at=0.0, ended_at=ended, started_at=started,
        usage=None if usage is None else Usage(input_tokens=usage[0], output_tokens=usage[1],
                                               total_tokens=usage[2]))


def _stats_model(value: tuple[Any, Any, Any]) -> str:
    return format_stats_line(_stats_child(value))


def _stats_real(driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    calls = []
    for value in inputs:
        child = _stats_child(value)
        usage = child.usage
        calls.append([child.started_at, child.ended_at, None if usage is None else {
            "input": usage.input_tokens, "output": usage.output_tokens,
            "total": usage.total_tokens}])
    return list(driver.request("statsLine", calls=calls))


STATS_LINE = Check(
    "stats-line", "buildCompactAnnounceStatsLine over a session entry in the SQLite store",
    STATS_INPUT, _stats_model, _stats_real,
    edges=((None, None, None), (0, 0, (0, 0, 0)), (0, 61_000, (1_200, 96, 5_000)),
           (0, 999, (None, None, 40)), (5, 5, (None, 7, None)), (0, 10**12, (2**53, 1, None))),
    needs=("buildCompactAnnounceStatsLine", "replaceSessionEntry", "resolveSessionStorePathCore"))

CHECKS: tuple[Check, ...] = (DURATION, TOKENS, FROZEN_CAP, BACKOFF, IDEMPOTENCY, CLASSIFIER,
                             PROMPT_DATA, STATUS_TASK, STATS_LINE, HISTORY)
