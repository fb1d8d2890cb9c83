"""The stats line (FMT-4, reference §c7): compact runtime, tokens, cost, session key and id."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

from actors.announce.labels import UNKNOWN, single_line
from actors.announce.result import ChildResult

_UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))
_FLOAT_DIGITS = 400


def format_duration(ms: float | None) -> str:
    """Compact runtime (reference §c16): ``n/a`` when unknown, zero or negative; under one
    second ``<ms>ms``; otherwise whole seconds (rounded half up) written with the two most
    significant non-zero units of d, h, m, s: ``45s``, ``2m5s``, ``1h5s``, ``1d1h``, ``29d13h``."""
    if type(ms) is int:
        # Whole milliseconds (every simulated runtime): already whole, and half up to seconds is
        # exact integer arithmetic. The Decimal context below cost ~1 % of a default-world seed.
        if ms <= 0:
            return "n/a"
        if ms < 1000:
            return f"{ms}ms"
        return _two_units((ms + 500) // 1000)
    if ms is None or not math.isfinite(ms) or ms <= 0:
        return "n/a"
    # Precision for every finite float (up to 309 integer digits): the default 28 digits make
    # quantize raise from 1e28 ms on.
    with localcontext(prec=_FLOAT_DIGITS):
        whole_ms = int(Decimal(ms).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        if whole_ms < 1000:
            return f"{whole_ms}ms"
        rest = int((Decimal(ms) / 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return _two_units(rest)


def _two_units(rest: int) -> str:
    """Whole seconds in the two most significant non-zero units of d, h, m, s."""
    parts: list[str] = []
    for unit, size in _UNITS:
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts[:2])


# From here on JavaScript's toFixed writes the number as String(x) does: exponent form.
_TO_FIXED_LIMIT = 1e21


def _one_decimal(value: float) -> str:
    # JavaScript's toFixed(1) rounds ties away from zero; Python's format would round to even.
    # From 1e21 on it gives String(x) (``1e+21``, ``1.5e+300``), which Python's repr spells
    # the same; the exact quantize below would need more digits than a Decimal context has.
    if value >= _TO_FIXED_LIMIT:
        return repr(float(value))
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_tokens(value: int | None) -> str:
    """Compact token count: ``0`` for non-positive, ``950``, ``1.0k``, ``197.0k``, ``1.0m``."""
    if value is None or value <= 0:
        return "0"
    if value >= 1_000_000:
        return _one_decimal(value / 1_000_000) + "m"
    if value >= 1_000:
        thousands = _one_decimal(value / 1_000)
        if Decimal(thousands) >= 1000:
            return _one_decimal(value / 1_000_000) + "m"
        return thousands + "k"
    return str(value)


def format_usd(amount: float) -> str:
    """Dollars with cents, or four decimals below one cent so small runs do not print $0.00."""
    if amount <= 0:
        return "$0.00"
    if amount < 0.01:
        return "$" + str(Decimal(amount).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))
    return "$" + str(Decimal(amount).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _runtime_ms(child: ChildResult) -> float | None:
    if child.started_at is None or child.ended_at is None:
        return None
    return child.ended_at - child.started_at


def format_stats_line(child: ChildResult) -> str:
    """``Stats: runtime <dur> • <tokens>[ • prompt/cache <P>][ • est. cost $x] • sessionKey <k>
    • sessionId <id>[ • transcript <path>]``."""
    parts = [f"runtime {format_duration(_runtime_ms(child))}"]
    usage = child.usage
    io_recorded = usage is not None and (
        usage.input_tokens is not None or usage.output_tokens is not None
    )
    if usage is not None and io_recorded:
        inp = max(usage.input_tokens or 0, 0)
        out = max(usage.output_tokens or 0, 0)
        split = f"(in {format_tokens(inp)} / out {format_tokens(out)})"
        parts.append(f"tokens {format_tokens(inp + out)} {split}")
        if usage.total_tokens is not None and usage.total_tokens > inp + out:
            parts.append(f"prompt/cache {format_tokens(usage.total_tokens)}")
        if child.pricing is not None:
            cost = (
                inp * child.pricing.input_per_million + out * child.pricing.output_per_million
            ) / 1_000_000
            parts.append(f"est. cost {format_usd(cost)}")
    elif usage is not None and usage.total_tokens is not None:
        parts.append(f"tokens {format_tokens(usage.total_tokens)} prompt/cache")
    else:
        parts.append("tokens unknown")
    parts.append(f"sessionKey {single_line(child.session_key, UNKNOWN)}")
    parts.append(f"sessionId {single_line(child.session_id, UNKNOWN)}")
    if child.transcript_path is not None and child.transcript_path.strip():
        parts.append(f"transcript {single_line(child.transcript_path, UNKNOWN)}")
    return "Stats: " + " • ".join(parts)
