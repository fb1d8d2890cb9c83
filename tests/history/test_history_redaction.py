"""Credential redaction (actors/history/sessions.py ``redact_credentials``) skips a pattern's
scan only when the text lacks every literal the pattern needs: the result equals running every
pattern (the plain statement, kept here), for any text built from credential-like fragments
(Hypothesis: mixed case, the letters IGNORECASE folds specially, matches that overlap)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from actors.history.sessions import _CREDENTIAL_PATTERNS, redact_credentials


def _every_pattern(text: str) -> tuple[str, bool]:
    """The reference: every pattern's substitution, in order, on every text."""
    changed = False
    for pattern, replacement, _, _ in _CREDENTIAL_PATTERNS:
        text, count = pattern.subn(replacement, text)
        changed = changed or count > 0
    return text, changed


_FRAGMENTS = [
    "sk-", "pk-", "rk-", "k-", "gh", "ghp_", "gho_", "github_pat_", "xoxb-", "xox", "AKIA",
    "AIza", "bearer", "BEARER", "Bearer", "token", "TOKEN", "Token", "ſecret", "secret",
    "apı_key", "api-key", "API_KEY", "access_token", "auth-token", "password", "passwd", "KEY",
    "\u212aey", "İ", ":", "=", '"', " ", "\t", "\n", "a", "Z", "0", "_", "-", ".", ",", "中",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN ",
    "ABCDEFGHIJKLMNOP", "abcdefghij0123456789", "QRSTUVWXYZ0123456789abcdefghijklm",
]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join))
def test_redaction_equals_every_pattern_run(text: str) -> None:
    assert redact_credentials(text) == _every_pattern(text)


def test_only_the_ascii_letters_match_bearer_and_they_lower_to_it() -> None:
    """Why ``bearer`` may be looked for in the lowered text: under IGNORECASE only B, E, A, R
    and b, e, a, r match its letters (no Unicode look-alike, unlike i, k and s), and each
    lowers to one of them."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    matched = re.compile("(?i)[bear]").findall(every)
    assert sorted(matched) == sorted("BEARbear")
    assert {c.lower() for c in matched} == set("bear")


def test_a_long_text_without_credentials_is_kept_as_it_is() -> None:
    text = "&&<中文 lorem <ipsum> & dolor sit amet, " * 5000
    assert redact_credentials(text) == (text, False)
    assert redact_credentials(text + " Bearer abcdefghijklmnop") == (
        text + " Bearer [redacted]", True)
