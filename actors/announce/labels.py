"""Status labels and single-line fields (reference §c5, §c6): the runtime outcome, never model
text, in the words the requester reads."""

from __future__ import annotations

from actors.announce.result import Disposition, Status

FIELD_CAP = 256

NO_OUTPUT = "(no output)"
UNKNOWN = "unknown"
UNNAMED_TASK = "unnamed task"


def single_line(value: str | None, fallback: str) -> str:
    """A single-line field value: whitespace runs (newlines too) collapse to one space; empty
    values take ``fallback``; longer than 256 characters keeps 255 plus ``…``."""
    collapsed = " ".join(value.split()) if value is not None else ""
    if not collapsed:
        collapsed = fallback
    if len(collapsed) > FIELD_CAP:
        collapsed = collapsed[: FIELD_CAP - 1] + "…"
    return collapsed


def _error_text(error: str | None) -> str | None:
    if error is None or not error.strip():
        return None
    return error


def status_label(status: Status, error: str | None) -> str:
    """The announce status label (reference §c6), from the runtime outcome, never model text."""
    err = _error_text(error)
    if status == "ok":
        label = "completed; ready for parent review"
    elif status == "timeout":
        label = "timed out" if err is None else f"timed out: {err}"
    elif status == "error":
        label = f"failed: {err if err is not None else 'unknown error'}"
    else:
        label = "finished with unknown status"
    return single_line(label, UNKNOWN)


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


def visible_text(text: str | None) -> str | None:
    """The child's visible answer, or ``None`` when the requester must read ``(no output)``:
    no text, only whitespace, or an exact silent ``NO_REPLY`` (DEL-2, FMT-3)."""
    if text is None or text == "" or text.isspace():
        return None
    # Only short texts can be an exact NO_REPLY; the guard keeps strip() off megabyte answers.
    if len(text) < 64 and text.strip() == "NO_REPLY":
        return None
    return text
