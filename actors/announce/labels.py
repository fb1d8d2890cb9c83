"""Status labels and single-line fields (reference §c5, §c6, §c16): the runtime outcome, never
model text, in the words the requester reads."""

from __future__ import annotations

import functools
import re

from actors.announce.result import Disposition, Status

FIELD_CAP = 256

NO_OUTPUT = "(no output)"
UNKNOWN = "unknown"
# The task line's last fallback: ``params.label || params.task || "task"`` (reference §c5,
# §c16); the model has no label, so a missing or empty task reads ``task: task``.
UNNAMED_TASK = "task"
# What the task line reads when the label folds to nothing (a whitespace-only task; §c19).
BLANK_TASK = "unnamed task"
# The status line's cap in UTF-16 units, and its marker, which takes 12 of them (§c19).
STATUS_LINE_CAP = 500
STATUS_LINE_MARKER = "…[truncated]"
_STATUS_MARKER_RESERVE = 12
_NEWLINE_RUNS = re.compile("\r?\n+")

# Text that would open or close the internal-context block is neutralised (reference §c16).
CONTEXT_BEGIN_MARKER = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
CONTEXT_BEGIN_NEUTRALISED = "[[OPENCLAW_INTERNAL_CONTEXT_BEGIN]]"
CONTEXT_END_MARKER = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
CONTEXT_END_NEUTRALISED = "[[OPENCLAW_INTERNAL_CONTEXT_END]]"
# JavaScript's whitespace (what String.prototype.trim removes) and its line terminators.
JS_SPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                     + "".join(chr(c) for c in range(0x2000, 0x200B)))
_LINE_BREAKS = re.compile("[\n\r\u2028\u2029]+")


def neutralise(text: str) -> str:
    """Text that would open or close the internal-context block, made harmless."""
    return text.replace(CONTEXT_BEGIN_MARKER, CONTEXT_BEGIN_NEUTRALISED).replace(
        CONTEXT_END_MARKER, CONTEXT_END_NEUTRALISED)


# A render writes six such fields (the session key and id twice: the header and the stats line),
# the same few values for every rendering of a run (a retry, a restart): each value is made
# once (tests/announce/test_labels_cache.py compares with the plain function).
@functools.lru_cache(maxsize=4096)
def single_line(value: str | None, fallback: str) -> str:
    """A single-line field value: whitespace runs (newlines too) collapse to one space; empty
    values take ``fallback``; longer than 256 characters keeps 255 plus ``…``."""
    collapsed = " ".join(value.split()) if value is not None else ""
    if not collapsed:
        collapsed = fallback
    if len(collapsed) > FIELD_CAP:
        collapsed = collapsed[: FIELD_CAP - 1] + "…"
    return neutralise(collapsed)


def js_trim(text: str) -> str:
    """``String.prototype.trim``: JavaScript's whitespace and line terminators, both ends."""
    start, end = 0, len(text)
    while start < end and text[start] in JS_SPACE:
        start += 1
    while end > start and text[end - 1] in JS_SPACE:
        end -= 1
    return text[start:end]


def event_field(value: str, fallback: str) -> str:
    """A field of the completion event's header as OpenClaw 2026.9.6 writes it (§c19): context
    delimiters neutralised, each run of ``\\r?\\n`` line breaks one space, trimmed; what is
    left empty takes ``fallback``. Other whitespace is kept."""
    return js_trim(_NEWLINE_RUNS.sub(" ", neutralise(value))) or fallback


def task_line(task: str | None) -> str:
    """The task line's value: ``label || task || "task"``, then :func:`event_field`, so a
    whitespace-only task reads ``unnamed task`` (§c19)."""
    return event_field(task or UNNAMED_TASK, BLANK_TASK)


def _utf16_prefix(text: str, units: int) -> str:
    """The longest prefix within ``units`` UTF-16 units that splits no character."""
    used = 0
    for index, char in enumerate(text):
        used += 2 if char > "\uffff" else 1
        if used > units:
            return text[:index]
    return text


def status_line(status: Status, error: str | None) -> str:
    """The status line's value (§c19): the label, as :func:`event_field` writes it, capped at
    500 UTF-16 units: past that, 488 units of it (no split character), right-trimmed, then
    ``…[truncated]``."""
    value = event_field(status_label(status, error), status)
    if len(value.encode("utf-16-le", "surrogatepass")) <= 2 * STATUS_LINE_CAP:
        return value
    prefix = _utf16_prefix(value, STATUS_LINE_CAP - _STATUS_MARKER_RESERVE)
    end = len(prefix)
    while end > 0 and prefix[end - 1] in JS_SPACE:
        end -= 1
    return prefix[:end] + STATUS_LINE_MARKER


def one_line(label: str) -> str:
    """A label as a field line of the announce block: each run of line breaks becomes one space
    (reference §c5: newlines collapsed); every other character is kept."""
    return _LINE_BREAKS.sub(" ", label)


def blank(text: str | None) -> bool:
    """Missing, or only JavaScript whitespace (``!text?.trim()``)."""
    return text is None or all(c in JS_SPACE for c in text)


def _error_text(error: str | None) -> str | None:
    return None if blank(error) else error


def status_label(status: Status, error: str | None) -> str:
    """The announce status label (reference §c16), from the runtime outcome, never model text:
    the error exactly as the runtime gave it (no length cap, whitespace kept). The code is
    ``outcome.error || "unknown error"``: a missing or empty error reads ``failed: unknown
    error``, a whitespace-only one is kept as it is; a timeout names any non-empty error,
    whitespace-only included."""
    if status == "ok":
        label = "completed; ready for parent review"
    elif status == "timeout":
        label = f"timed out: {error}" if error else "timed out"
    elif status == "error":
        label = f"failed: {error or 'unknown error'}"
    else:
        label = "finished with unknown status"
    return neutralise(label)


def batch_status(status: Status, error: str | None, disposition: Disposition = "exited") -> str:
    """The raw status form used in batch findings (reference §c6)."""
    err = _error_text(error)
    if disposition == "interrupted":
        raw = "interrupted by gateway restart"
    elif disposition == "killed":
        raw = "cancelled" if err is None else f"cancelled: {err}"
    elif status == "ok":
        raw = "ok"
    elif status == "timeout":
        raw = "timeout" if err is None else f"timeout: {err}"
    elif status == "error":
        raw = f"error: {err if err is not None else 'unknown error'}"
    else:
        raw = "unknown"
    return single_line(raw, UNKNOWN)


# A reply that is exactly this (whitespace trimmed) asks for no announcement (reference §c1).
ANNOUNCE_SKIP = "ANNOUNCE_SKIP"


def is_announce_skip(text: str | None) -> bool:
    # Only short texts can be the token; the guard keeps strip() off megabyte answers.
    return text is not None and len(text) < 64 and text.strip() == ANNOUNCE_SKIP


def visible_text(text: str | None) -> str | None:
    """The child's visible answer, or ``None`` when the requester must read ``(no output)``:
    no text, only whitespace, or an exact silent ``NO_REPLY`` (DEL-2, FMT-3)."""
    if text is None or text == "" or text.isspace():
        return None
    # Only short texts can be an exact NO_REPLY; the guard keeps strip() off megabyte answers.
    if len(text) < 64 and text.strip() == "NO_REPLY":
        return None
    return text
