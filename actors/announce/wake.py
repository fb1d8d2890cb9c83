"""The requester settle wake (reference §c9 "Message"): what a requester reads when a batch of its
children, descendants included, has settled.

It says the batch settled and the requester should not wait or yield again for it (other batches
may still run), states the outcome policy (NO_REPLY only when the consolidated answer was already
delivered, and not at all when a visible reply is required), then carries the findings through
the shared 160,000-character multi-result layout (FMT-2) or notes that the results were announced
individually, asks the requester to reconcile each interrupted child by its session key, and ends
with the children's model-route notices, deduplicated, sorted, joined and capped at 1,024
characters. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors.announce.block import CONTEXT_BEGIN, CONTEXT_END, CONTEXT_HEADER, CONTEXT_NOTICE
from actors.announce.layout import DEFAULT_CAP, HEAD_FLOOR, FormattedPayload, format_results
from actors.announce.result import ChildResult

WAKE_HEADER = "[Requester settle wake]"
SETTLED_NOTICE = (
    "Every child run in this batch, including their descendants, has settled. Do not wait or "
    "call sessions_yield again for this batch; other batches may still be running.")
POLICY = ("Outcome policy: give the user the consolidated answer for this batch now. Reply "
          "NO_REPLY only if that consolidated answer was already delivered.")
POLICY_VISIBLE = ("Outcome policy: give the user the consolidated answer for this batch now. A "
                  "visible reply is required: NO_REPLY is not allowed.")
ANNOUNCED_INDIVIDUALLY = "Child results were announced individually."
RECONCILE_HEADER = (
    "Reconcile each unfinished child: follow up in the same retained session and verify any "
    "uncertain effects before you rely on them:")
ROUTE_HEADER = "Model route changes:"
ROUTE_CAP = 1_024
ROUTE_TRUNCATED = "\n[model-route changes truncated]"


@attrs.frozen
class Wake:
    findings: tuple[ChildResult, ...]  # the results this wake carries (not announced before)
    interrupted: tuple[str, ...] = ()  # session keys of children that did not finish
    route_notices: tuple[str, ...] = ()
    require_visible_reply: bool = False


@attrs.frozen
class FormattedWake:
    text: str
    findings: FormattedPayload | None


def route_section(notices: Sequence[str]) -> str:
    """Deduplicated, sorted, joined by newlines, capped at 1,024 characters."""
    joined = "\n".join(sorted(set(n for n in notices if n)))
    if len(joined) > ROUTE_CAP:
        return joined[:ROUTE_CAP] + ROUTE_TRUNCATED
    return joined


def format_wake(wake: Wake, *, cap: int = DEFAULT_CAP, floor: int = HEAD_FLOOR,
                floor_fit_summarized: bool = False) -> FormattedWake:
    head = (f"{CONTEXT_BEGIN}\n{CONTEXT_HEADER}\n{CONTEXT_NOTICE}\n\n{WAKE_HEADER}\n"
            f"{SETTLED_NOTICE}\n{POLICY_VISIBLE if wake.require_visible_reply else POLICY}\n\n")
    tail = ""
    if wake.interrupted:
        tail += f"\n\n{RECONCILE_HEADER}\n" + "\n".join(
            f"- {key}" for key in sorted(set(wake.interrupted)))
    routes = route_section(wake.route_notices)
    if routes:
        tail += f"\n\n{ROUTE_HEADER}\n{routes}"
    tail += f"\n{CONTEXT_END}"
    if not wake.findings:
        return FormattedWake(head + ANNOUNCED_INDIVIDUALLY + tail, None)
    findings = format_results(wake.findings, cap=cap - len(head) - len(tail), floor=floor,
                              floor_fit_summarized=floor_fit_summarized)
    return FormattedWake(head + findings.payload + tail, findings)
