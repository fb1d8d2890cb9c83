"""What the formatter is given: one completed child run, its usage and pricing. Pure values."""

from __future__ import annotations

from typing import Literal

import attrs

Status = Literal["ok", "error", "timeout", "unknown"]
STATUSES: tuple[Status, ...] = ("ok", "error", "timeout", "unknown")

# How the run ended besides its status: a killed run reports as "cancelled", a run lost to a
# gateway restart as "interrupted by gateway restart" in the batch raw forms (reference §c6).
Disposition = Literal["exited", "killed", "interrupted"]
Source = Literal["subagent", "cron"]


@attrs.frozen
class Usage:
    """Token usage read once after the child settles; ``None`` means not recorded."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    # The fresh session total (prompt plus cache); printed when it exceeds input + output.
    total_tokens: int | None = None


@attrs.frozen
class Pricing:
    """Configured model price in USD per million tokens (``models.providers.*.models[].cost``)."""

    input_per_million: float
    output_per_million: float


@attrs.frozen
class ChildResult:
    """One completed child run as the delivery actor hands it to the formatter."""

    session_key: str
    session_id: str | None
    task: str | None
    status: Status
    error: str | None
    text: str | None
    created_at: float
    ended_at: float | None
    started_at: float | None = None
    disposition: Disposition = "exited"
    source: Source = "subagent"
    usage: Usage | None = None
    pricing: Pricing | None = None
    transcript_path: str | None = None

