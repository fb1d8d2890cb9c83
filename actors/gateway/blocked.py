"""The blocked-completion warning's error (DEL-9). Pure.

While a completion's delivery is blocked (a retry is scheduled) the registry warns with the run,
its child session and the concrete error it is blocked on. Seed 002: the warning "keeps the
concrete delivery error across retries". A refused send carries the platform's own error; a try
that got no answer only has the announce timeout's generic "gateway timeout", so it does not
replace an earlier concrete error. The error is persisted as the run's ``last_error``, so a
restarted registry keeps it too.
"""

from __future__ import annotations

from collections.abc import Callable


def blocked_error(previous: str | None, error: str, answered: bool,
                  probe: Callable[[str], None], last_try_only: bool = False) -> str:
    """The warning's error after a failed try with ``error``; ``answered`` is False for a try
    that timed out unanswered. ``last_try_only`` is the known bug (a mutant): the last try wins."""
    if answered or previous is None or last_try_only:
        return error
    if previous != error:
        probe("delivery.warning-kept-error")
    return previous
