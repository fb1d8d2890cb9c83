"""Reference §c11 retry timing, constant by constant (classes: tests/gateway/test_send_error.py)."""

from __future__ import annotations

from actors.records import retry


def test_registry_backoff_without_jitter() -> None:
    assert [retry.backoff_ms(n, 0.0) for n in range(1, 9)] == [
        15_000, 30_000, 60_000, 120_000, 240_000, 300_000, 300_000, 300_000]


def test_registry_backoff_with_full_jitter() -> None:
    assert retry.backoff_ms(1, 1.0) == 18_000
    assert retry.backoff_ms(5, 1.0) == 288_000
    assert retry.backoff_ms(6, 1.0) == 300_000  # the cap applies after jitter


def test_transport_tries() -> None:
    assert [retry.transport_wait_ms(n) for n in (1, 2, 3, 4)] == [5_000, 10_000, 20_000, None]


def test_expiry() -> None:
    assert retry.expiry_deadline_ms(1_000, required=True) == 1_000 + 30 * 60_000
    assert retry.expiry_deadline_ms(1_000, required=False) == 1_000 + 5 * 60_000


def test_backoff_rounds_halves_up_as_javascript_does() -> None:
    # Math.round, not Python's round half to even (issue 24): unreachable with the 1,001-step
    # jitter grid, reached by any grid that lands on a half.
    assert retry.js_round(15022.5) == 15023 and round(15022.5) == 15022
    assert retry.js_round(15023.5) == 15024
    assert retry.js_round(15022.4999) == 15022
    assert retry.js_round(0.49999999999999994) == 0  # floor(x + 0.5) would give 1
    assert retry.js_round(-2.5) == -2  # toward +infinity, as Math.round
