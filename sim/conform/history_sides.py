"""The model's side of the ``sessions_history`` check (sim/conform/history.py) and what explains
its listed differences (``sessions-history`` rows of differences.toml).

A staged input (what both sides read) is a dict: ``sessionKey``, ``args`` (the tool call's
arguments as the caller wrote them), ``rows`` (each stored row: the ``message`` OpenClaw's store
kept and the ``meta`` row metadata its gateway reads back, or None for a row it does not show)
and ``shown`` (every row as the gateway's display projection shows it, oldest first). Kept
apart from history.py so that differences.py can name these explainers without an import cycle.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import actors.history.sessions as sessions_module
from actors.history.arguments import read_arguments
from actors.history.sessions import sessions_history
from sim.conform.jsvalues import js_value


def stored_rows(value: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows as the store holds them, with the row metadata the gateway reads back."""
    return [row["message"] if row["meta"] is None else {**row["message"],
                                                        "__openclaw": row["meta"]}
            for row in value["rows"]]


def model_answer(value: Mapping[str, Any],
                 rows: Sequence[Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The model's answer to the call (``{"ok": the tool's JSON}`` or ``{"error": message}``)
    over ``rows`` (default: the stored rows)."""
    try:
        limit, offset, include_tools = read_arguments(value["args"])
        history = sessions_history(stored_rows(value) if rows is None else rows, limit=limit,
                                   offset=offset, include_tools=include_tools,
                                   session_key=value["sessionKey"])
    except ValueError as err:
        return {"error": str(err)}
    return {"ok": history.to_json()}


@contextmanager
def _openclaw_rules(masks: Mapping[str, str] | None, keep_signature: bool) -> Iterator[None]:
    """The model with OpenClaw's read-time masking in place of its own (``masks``: what
    OpenClaw's redactToolPayloadText makes of each text it changes; None keeps the model's own
    redaction) and, with ``keep_signature``, a block's ``signature`` field kept. Module state,
    for the explainers only, put back on the way out."""
    kept = sessions_module.redact_credentials, sessions_module.BLOCK_DROPPED_FIELDS
    if masks is not None:
        sessions_module.redact_credentials = lambda text: (masks.get(text, text), text in masks)
    if keep_signature:
        sessions_module.BLOCK_DROPPED_FIELDS = tuple(
            field for field in kept[1] if field != "signature")
    try:
        yield
    finally:
        sessions_module.redact_credentials, sessions_module.BLOCK_DROPPED_FIELDS = kept


def _over_shown(value: Mapping[str, Any], real: Any, *, openclaw_masks: bool = False,
                keep_signature: bool = False) -> bool:
    """Is OpenClaw's answer the model's over the rows as the gateway's display projection
    shows them (every stored row shown, none hidden), with the rules asked for?"""
    if len(value["shown"]) != len(value["rows"]):
        return False
    masks = {text: masked for text, masked in value["redactions"]} if openclaw_masks else None
    with _openclaw_rules(masks, keep_signature):
        return bool(js_value(model_answer(value, value["shown"])) == real)


def display_projection(value: Any, model: Any, real: Any) -> bool:
    """``history-display-projection``: OpenClaw's gateway pages the rows as its chat display
    projection shows them, and its tool cleans what the gateway gave: its answer is the
    model's over exactly those rows."""
    return _over_shown(value, real)


def openclaw_redaction(value: Any, model: Any, real: Any) -> bool:
    """``history-redaction``: OpenClaw masks credentials as its store writes a row (the shown
    rows hold those masks) and again as its tool reads one (redactToolPayloadText): its answer
    is the model's over the shown rows with that read-time masking in place of the model's
    nine patterns (a row above, the projection, is allowed too)."""
    return _over_shown(value, real, openclaw_masks=True)


def signature_kept(value: Any, model: Any, real: Any) -> bool:
    """``history-signature-dropped``: OpenClaw keeps a block's ``signature`` field (its store
    masked the value on write; only ``thinkingSignature`` is dropped): its answer is the
    model's over the shown rows with that field kept (the rows above allowed too)."""
    return _over_shown(value, real, openclaw_masks=True, keep_signature=True)
