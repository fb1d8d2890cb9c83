"""Known-bug variants of the model, switched on by name (SIM-8).

Each one reintroduces a real failure mode; exploring with it on must find a violation, with none on
must find none. The cores check membership in the frozenset they are given.
"""

from __future__ import annotations

from actors.registry import MUTANT_FRESH_KEY_AFTER_RESTART

MUTANTS: dict[str, str] = {
    MUTANT_FRESH_KEY_AFTER_RESTART: (
        "a restarted delivery actor re-sends pending completions under a fresh idempotency key, "
        "so a completion that reached its requester before the crash reaches it again (DEL-3)"
    ),
}
