"""What the requester reads: pure formatting of completed child runs (FMT-1 .. FMT-4).

One idea per module, re-exported here so ``from actors.announce import ...`` reads as one API:

* ``result``: what the formatter is given (:class:`ChildResult`, :class:`Usage`, :class:`Pricing`);
* ``labels``: status labels and single-line fields (reference §c6, §c16);
* ``stats``: compact durations, token counts and the stats line (FMT-4, reference §c7, §c16);
* ``layout``: escaping, delivery order and the capped multi-result layout (FMT-2, FMT-3),
  with :func:`format_results`;
* ``block``: the single-completion announce context block (FMT-1), :func:`format_announce`;
* ``parse``: :func:`parse_payload`, which reads either layout back.

Everything here is pure: no IO, no clock, no randomness.
"""

from __future__ import annotations

from actors.announce.block import (
    ANNOUNCE_TYPES,
    CONTEXT_BEGIN,
    CONTEXT_END,
    CONTEXT_HEADER,
    CONTEXT_NOTICE,
    EVENT_HEADER,
    EVENT_SEPARATOR,
    INSTRUCTION_HEADER,
    REPLY_INSTRUCTIONS,
    RequesterKind,
    format_announce,
)
from actors.announce.labels import (
    FIELD_CAP,
    NO_OUTPUT,
    UNKNOWN,
    UNNAMED_TASK,
    batch_status,
    single_line,
    status_label,
    visible_text,
)
from actors.announce.layout import (
    BATCH_HEADER,
    BATCH_SEPARATOR,
    DATA_CLOSE,
    DATA_OPEN,
    DEFAULT_CAP,
    HEAD_FLOOR,
    MIN_CAP,
    NO_CHILD_RESULTS,
    NO_OUTPUT_LINE,
    RESULT_HEADER,
    SUMMARY_KEYS,
    FormattedPayload,
    ShownChild,
    delivery_order,
    delivery_order_key,
    escape_data,
    escaped_length,
    format_results,
    summary_line,
    truncation_marker,
    unescape_data,
)
from actors.announce.parse import (
    ParsedChild,
    ParsedPayload,
    ParsedSummary,
    PayloadParseError,
    parse_payload,
)
from actors.announce.result import (
    STATUSES,
    ChildResult,
    Disposition,
    Pricing,
    Source,
    Status,
    Usage,
)
from actors.announce.stats import (
    format_duration,
    format_stats_line,
    format_tokens,
    format_usd,
)

__all__ = [
    "ANNOUNCE_TYPES",
    "BATCH_HEADER",
    "BATCH_SEPARATOR",
    "CONTEXT_BEGIN",
    "CONTEXT_END",
    "CONTEXT_HEADER",
    "CONTEXT_NOTICE",
    "DATA_CLOSE",
    "DATA_OPEN",
    "DEFAULT_CAP",
    "EVENT_HEADER",
    "EVENT_SEPARATOR",
    "FIELD_CAP",
    "HEAD_FLOOR",
    "INSTRUCTION_HEADER",
    "MIN_CAP",
    "NO_CHILD_RESULTS",
    "NO_OUTPUT",
    "NO_OUTPUT_LINE",
    "REPLY_INSTRUCTIONS",
    "RESULT_HEADER",
    "STATUSES",
    "SUMMARY_KEYS",
    "UNKNOWN",
    "UNNAMED_TASK",
    "ChildResult",
    "Disposition",
    "FormattedPayload",
    "ParsedChild",
    "ParsedPayload",
    "ParsedSummary",
    "PayloadParseError",
    "Pricing",
    "RequesterKind",
    "ShownChild",
    "Source",
    "Status",
    "Usage",
    "batch_status",
    "delivery_order",
    "delivery_order_key",
    "escape_data",
    "escaped_length",
    "format_announce",
    "format_duration",
    "format_results",
    "format_stats_line",
    "format_tokens",
    "format_usd",
    "parse_payload",
    "single_line",
    "status_label",
    "summary_line",
    "truncation_marker",
    "unescape_data",
    "visible_text",
]
