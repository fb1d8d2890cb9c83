"""Throughput and linearity of the 160,000-character multi-result formatter (SPEC §5).

Importable: ``handoff bench`` calls :func:`formatter_chars_per_second` and
:func:`formatter_linearity`. Run directly for a report: ``python -m benchmarks.bench_formatter``.
Wall-clock reads are fine here: benchmarks are outside the simulated world.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from actors.announce import DEFAULT_CAP, ChildResult, format_results

# A fixed, escape-heavy pattern: every tenth character needs escaping, so the measurement
# includes the escaped-length arithmetic, not only plain copying.
_PATTERN = "result <b>&</b> line of child output, "


def make_children(count: int, text_chars: int) -> list[ChildResult]:
    """Deterministic children, handed over in reverse delivery order so sorting does work."""
    base = (_PATTERN * (text_chars // len(_PATTERN) + 1))[:text_chars]
    return [
        ChildResult(
            session_key=f"agent:main:subagent:{i:06d}",
            session_id=f"sid-{i:06d}",
            task=f"task {i}",
            status="ok" if i % 7 else "error",
            error=None if i % 7 else "tool crashed",
            # Distinct texts (a unique prefix), so no two children share one string object.
            text=f"{i}:" + base,
            created_at=float(count - i),
            ended_at=None if i % 5 == 0 else float(count - i + 1),
        )
        for i in range(count)
    ]


def _input_chars(children: Sequence[ChildResult]) -> int:
    return sum(len(c.text or "") for c in children)


def _best_seconds(children: Sequence[ChildResult], cap: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = format_results(children, cap=cap)
        elapsed = time.perf_counter() - start
        if result.length > cap:  # a broken cap would make the figure meaningless
            raise AssertionError(f"payload {result.length} exceeds cap {cap}")
        best = min(best, elapsed)
    return best


def formatter_chars_per_second(
    children: int = 1_000, text_chars: int = 20_000, cap: int = DEFAULT_CAP, repeats: int = 3
) -> float:
    """Input characters (children's texts) formatted per second, best of ``repeats``."""
    batch = make_children(children, text_chars)
    return _input_chars(batch) / _best_seconds(batch, cap, repeats)


def formatter_linearity(
    sizes: Sequence[int] = (1_000, 2_000, 4_000, 8_000),
    text_chars: int = 4_000,
    cap: int = DEFAULT_CAP,
    repeats: int = 3,
) -> dict[str, object]:
    """Time per input character at each size, and its ratio to the smallest size.

    Linear cost keeps every ratio near 1; quadratic cost would double it with each doubling."""
    rows: list[dict[str, float | int]] = []
    for size in sizes:
        batch = make_children(size, text_chars)
        seconds = _best_seconds(batch, cap, repeats)
        chars = _input_chars(batch)
        rows.append(
            {
                "children": size,
                "input_chars": chars,
                "seconds": seconds,
                "ns_per_char": seconds / chars * 1e9,
            }
        )
    first = rows[0]["ns_per_char"]
    for row in rows:
        row["ratio"] = row["ns_per_char"] / first
    return {"text_chars": text_chars, "rows": rows, "max_ratio": max(r["ratio"] for r in rows)}


def main() -> None:
    report = {
        "formatter_chars_per_second": formatter_chars_per_second(),
        "linearity": formatter_linearity(),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
