"""Which direct children's results a run's announcement carries (DEL-6, reference §c8). Pure.

Once a run's descendants settled, its announcement carries the findings of the runs it spawned
itself (its direct children, scoped by ``requester_run_id``, never an earlier or later run of the
same session), one row per child session:

* a row whose child session now belongs to another run (spawned again by a newer run or
  parent) is stale and dropped;
* of several rows of one child session, the latest wins (larger ``created_at``; at an equal one,
  the later registration, our stand-in for the higher generation);
* a row that has not ended has no finding yet, and an ok child that answered exactly
  ANNOUNCE_SKIP is intentionally silent: both are left out.

The formatter orders what is left (created, ended, session key) and renders it as
``Child completion results:`` (``actors.announce.format_results``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from actors import mutants
from actors.announce.labels import is_announce_skip as _is_skip
from actors.records.run_record import RunRecord
from actors.states import OutcomeStatus


@attrs.frozen
class Findings:
    rows: tuple[RunRecord, ...]
    stale: int = 0  # rows dropped: their session now belongs to another run
    superseded: int = 0  # older rows of a child session a later row replaced


def select(run_id: str, children: Sequence[RunRecord],
           latest_of: Callable[[str], RunRecord | None],
           switched_on: frozenset[str] = frozenset(),
           session_children: Callable[[], Sequence[RunRecord]] = lambda: ()) -> Findings:
    """``children``: the rows the run ``run_id`` spawned, in registration order; ``latest_of``:
    the latest row of a child session key. ``session_children`` is what the stale-findings
    mutant reads instead: every row the run's session ever spawned."""
    if mutants.MUTANT_STALE_FINDINGS in switched_on:
        shown = [c for c in session_children() if c.ended_at_ms is not None
                 and not (c.outcome_status == OutcomeStatus.OK and _is_skip(c.result_text))]
        return Findings(tuple(shown))
    latest: dict[str, RunRecord] = {}
    stale = superseded = 0
    for row in children:
        owner = latest_of(row.child_session_key)
        if owner is not None and owner.requester_run_id != run_id:
            stale += 1
            continue
        kept = latest.get(row.child_session_key)
        if kept is not None:
            superseded += 1
            if kept.created_at_ms > row.created_at_ms:
                continue
        latest[row.child_session_key] = row
    shown = [row for row in latest.values() if row.ended_at_ms is not None
             and not (row.outcome_status == OutcomeStatus.OK and _is_skip(row.result_text))]
    return Findings(tuple(shown), stale, superseded)
