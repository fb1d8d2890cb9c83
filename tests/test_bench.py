"""``handoff bench`` runs end to end at tiny sizes (figures are reported, never asserted)."""

from __future__ import annotations

from sim import bench


def test_microbenchmarks_run_what_they_claim() -> None:
    assert bench.trio_round_trips_per_second(200) > 0
    # The function itself asserts the kernel made exactly four hand-offs per round.
    assert bench.scheduled_handoffs_per_second(400) > 0


def test_scale_rows_come_from_clean_runs() -> None:
    rows = bench.scale((10, 20))
    assert [row["children"] for row in rows] == [10, 20]
    for row in rows:
        assert row["violations"] == 0
        assert row["seconds"] > 0
        assert row["records"] > 10 * row["children"]
    assert "time_ratio" in rows[1]


def test_formatter_figures() -> None:
    assert bench.formatter_chars_per_second(children=20, text_chars=1_000, repeats=1) > 0
    linearity = bench.formatter_linearity(sizes=(10, 20), text_chars=500, repeats=1)
    rows = linearity["rows"]
    assert isinstance(rows, list)
    assert [row["children"] for row in rows] == [10, 20]
    assert rows[0]["ratio"] == 1.0
