"""What a requester's model reads for a completion: a run as the announce formatter takes it,
its direct children's findings (DEL-6, reference §c8), the rendering (with the private stats
rule, PRV-8) and the code probes on its rare renderings. Pure; the delivery shell
(``actors/delivery/shell.py``) hands these to its core, which never formats anything itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from actors import announce
from actors.child.steps import KILLED_ERROR
from actors.records.keys import is_subagent
from actors.records.run_record import RunRecord
from actors.states import OutcomeStatus

_STATUS: dict[OutcomeStatus, announce.Status] = {
    OutcomeStatus.OK: "ok", OutcomeStatus.ERROR: "error", OutcomeStatus.TIMEOUT: "timeout",
    OutcomeStatus.UNKNOWN: "unknown"}


def transcript_path(child_session_id: str) -> str:
    return f"sessions/{child_session_id}.jsonl"


def requester_kind(session_key: str) -> announce.RequesterKind:
    """A sub-agent session (a nested requester) reads an internal update (reference §c5); every
    top-level requester this model runs is in completion mode."""
    if is_subagent(session_key):
        return announce.RequesterKind.NESTED
    return announce.RequesterKind.TOP_LEVEL_COMPLETION


def child_result(record: RunRecord, text: str | None = None) -> announce.ChildResult:
    """A run as the announce formatter takes it; ``text``, if given, in place of its result
    text (built once, not built and then evolved: ``render`` runs at every send)."""
    usage = None
    if record.input_tokens is not None or record.output_tokens is not None:
        usage = announce.Usage(record.input_tokens, record.output_tokens)
    return announce.ChildResult(
        session_key=record.child_session_key,
        session_id=record.child_session_id,
        task=record.task,
        status=_STATUS[record.outcome_status or OutcomeStatus.UNKNOWN],
        error=record.outcome_error,
        text=record.result_text if text is None else text,
        created_at=record.created_at_ms,
        ended_at=record.ended_at_ms,
        started_at=record.started_at_ms,
        disposition="killed" if record.outcome_error == KILLED_ERROR else "exited",
        usage=usage,
        transcript_path=(transcript_path(record.child_session_id)
                         if record.child_session_id else None),
    )


def findings_section(rows: Sequence[RunRecord]) -> str:
    """The findings of a run's direct children (DEL-6, reference §c8): "" for none."""
    if not rows:
        return ""
    return announce.format_results([child_result(row) for row in rows]).payload


def with_findings(own: str | None, section: str | None) -> str | None:
    """The run's result followed by its direct children's findings (DEL-6, reference §c8).
    The seed: the child's own final answer goes to its parent, the findings help; the
    reference: findings replace a placeholder, so a run with no visible answer of its own
    carries the findings alone. Both are data in the one result block."""
    if not section:
        return own
    if own is None or own.strip() in ("", "NO_REPLY"):
        return section
    return f"{own}\n\n{section}"


def render(record: RunRecord, kind: announce.RequesterKind, *, stats: bool | None = None,
           cut_at_cap: bool = False) -> str:
    """What the requester's model reads for this completion: the announce context block, with
    the findings frozen at the generation's first rendering (``RunRecord.findings_text``). A
    private hand-off leaves the stats line (the changing usage statistics) out (PRV-8) unless
    ``stats`` says otherwise (the known-bug variant); ``cut_at_cap``: mutant
    ``shared-cap-cut-at-limit``."""
    return laid_out(record, kind, stats=stats, cut_at_cap=cut_at_cap).payload


def laid_out(record: RunRecord, kind: announce.RequesterKind, *, stats: bool | None = None,
             cut_at_cap: bool = False) -> announce.FormattedPayload:
    """:func:`render`'s layout: the payload and how it was fitted under the cap."""
    child = child_result(record, with_findings(record.result_text, record.findings_text))
    private = record.private if stats is None else not stats
    return announce.format_announce([child], kind, private=private, cut_at_cap=cut_at_cap)


# A block within a character of the shared cap (issue 36's boundary draws,
# sim/world/aims.py): the probe each length of the whole block fires.
_CAP_EDGES = {announce.DEFAULT_CAP - 1: "announce.one-under-shared-cap",
              announce.DEFAULT_CAP: "announce.at-shared-cap",
              announce.DEFAULT_CAP + 1: "announce.one-over-shared-cap"}


def probed_render(probe: Callable[[str], None], usage_in_private: bool = False,
                  cut_at_cap: bool = False,
                  ) -> Callable[[RunRecord, announce.RequesterKind], str]:
    """``render``, naming the rare renderings (a cut at the cap, a block within a character of
    it, no output, escaping, forged framing) as code probes. The child's text is escaped inside
    its block, so the block's own opening and a marker after its closing are the formatter's,
    never the child's."""
    def render_probed(record: RunRecord, kind: announce.RequesterKind) -> str:
        stats = True if usage_in_private else None
        # Only the switches on are passed: a test stands in for ``render(record, kind)``.
        options = {k: True for k, on in (("stats", usage_in_private), ("cut_at_cap", cut_at_cap))
                   if on}
        payload = render(record, kind, **options)
        text = record.result_text or ""
        if announce.DATA_OPEN not in payload:
            probe("announce.no-output")
            return payload
        whole: int | None = len(payload)
        if announce.DATA_CLOSE + "\n[truncated: " in payload:
            probe("announce.truncated")
            # How long it would have been whole (laid out again: a cut near the cap is rare).
            whole = laid_out(record, kind, stats=stats, cut_at_cap=cut_at_cap).whole_length \
                if len(payload) >= announce.DEFAULT_CAP - 1_000 else None
        edge = _CAP_EDGES.get(whole or 0)
        if edge is not None:
            probe(edge)
        if "<" in text or "&" in text:
            probe("announce.escaped")
        if "prompt-data>" in text or "[truncated:" in text:
            probe("announce.forged-framing")
        return payload

    return render_probed
