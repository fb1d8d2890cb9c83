"""Inputs the world sizes with the model's own renderer so that what the requester reads lands on
a limit (issue 36's boundary draws): a lone completion's announce block on the 160,000-character
shared cap (``CapAim``, ``edge:shared-cap``) and a wide batch's wake on the 2,000-character floor
(``floor_aim``, ``edge:floor``). The world is the driver here, not an oracle: it may use the
model's renderer to size its input; the oracles restate both limits from the answers and the
texts the requester read (``sim/invariants/child/announce.py``, ``sim/invariants/yields``).

**The shared cap.** The cap measures the whole rendered block: besides the escaped answer, its
framing holds the stats line (runtime from the run's lane start to its end, the token figures
its messages report), the session id and the reply instruction, none of which the world knows
exactly when it draws the child. So the answer is sized late: as the run's final step begins to
stream, the child tells this hook (``actors/child/sizing.py``) the instant the step ends if
nothing stops it and the usage its earlier messages report; the hook renders the block the
delivery process would render for that end with a short placeholder answer, and sizes the
answer so that the escaped answer fills the rest to the character. A run whose result an open
yield batch owns (its wake carries it) is left as drawn.

Its answer: a head naming the child, then ampersands (each five characters escaped) and a few
dots to land on the character, so the answer, some 32,000 bytes, stays far under the
102,400-byte frozen cap (reference §c14), reaches the requester as written and costs little.
Its final step reports a fixed usage, so the stats line does not move with the answer's length.
A run the aim misses (it ends otherwise: a timeout, an abort, a Gateway restart's pause, a
nested child's findings after its answer, a fallback requester reading another instruction)
just lands elsewhere: the probes fire on what the delivery process rendered, never on the aim.

**The floor.** The shared layout keeps the longest prefix of a wake's children (delivery order)
whose heads can all have at least the floor (2,000 escaped characters, or the whole text if
shorter) with their framing, plus the one summary line for the rest, within the cap; the others
go into that line (FMT-2, actors/announce/layout.py). A wide batch (sim/world/turns.py: eighty
long answers in one yield) always passes it, but the room its shown children's floor-sized
heads leave lands anywhere in the two thousand odd characters one more child would cost.
Everything the wake carries is known when the batch is drawn (each child's task, session key,
status and corrected answer; no route notice, no interrupted child), so the world asks the
model's renderer for that room and pads the first children's tasks (each field stays within its
256 characters) so that the floor-sized heads leave exactly one character (``one-under``), none
(``at``), or pass the cap by one, so that the last of them goes into the summary line
(``one-over``). A wake that carries other results than drawn (a fault, a member that never ran)
lands elsewhere: the probes fire on what the delivery process rendered.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from actors import announce
from actors.announce import ChildResult
from actors.announce.wake import Wake, format_wake
from actors.delivery.payload import render, requester_kind
from actors.messages import ChildSpec, StepSpec
from actors.requester.session import child_session_key
from actors.states import OutcomeStatus, StepFinish
from actors.store.durable import RunStore
from sim.choices import Chooser

# The final step's usage report when its script gives none: the model's usual one is a quarter
# of the text's length out, which would move the stats line with the answer.
FINAL_TOKENS = (240, 8_000)
_PLACEHOLDER = "x"  # escapes to itself: the block's length less one is its framing
_FILLER = "&"  # five characters escaped: the answer is a fifth of the block, 32,000 bytes


class CapAim:
    """The world's reply sizer for children spawned with ``reply_to_cap``."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    def final_step(self, run_id: str, spec: ChildSpec, step: StepSpec, ends_at_ms: int,
                   usage_before: tuple[int, int] | None) -> StepSpec:
        if spec.reply_to_cap is None or step.tool_calls or \
                step.finish not in (StepFinish.AUTO, StepFinish.STOP):
            return step  # it does not end with this step's answer
        if self.store.batch_owner(run_id) is not None:
            return step  # a yielded batch's wake carries it: no block of its own (cheap so)
        record = self.store.get(run_id)
        tokens = step.tokens or FINAL_TOKENS
        before = usage_before or (0, 0)
        usage = (before[0] + tokens[0], before[1] + tokens[1]) if spec.usage_recorded else \
            (None, None)
        ended = attrs.evolve(record, outcome_status=OutcomeStatus.OK, outcome_error=None,
                             ended_at_ms=ends_at_ms, input_tokens=usage[0],
                             output_tokens=usage[1], result_text=_PLACEHOLDER,
                             findings_text=None)
        framing = len(render(ended, requester_kind(record.requester))) - len(_PLACEHOLDER)
        text = escaped_to(f"{spec.id} done.\n", announce.DEFAULT_CAP + spec.reply_to_cap
                          - framing)
        return attrs.evolve(step, text=text, tokens=tokens)


def escaped_to(head: str, length: int) -> str:
    """``head``, escape-heavy filler and plain padding: exactly ``length`` characters escaped
    (``head`` itself if it is already that long or longer)."""
    piece = announce.escaped_length(_FILLER)
    text = head + _FILLER * max(0, (length - announce.escaped_length(head)) // piece)
    return text + "." * max(0, length - announce.escaped_length(text))


TASK_PAD = 240  # a task grows by at most this much: "wide task 80" plus 240 is within 256
_PAD = "."


def floor_aim(chooser: Chooser, session: str, wide: Sequence[ChildSpec]) -> list[ChildSpec]:
    """``wide`` with its first tasks padded so that the wake's floor-sized heads land one under
    the cap, at it or one over it (a choice on ``edge:floor``)."""
    offset = chooser.choose("edge:floor", 3) - 1
    room = _room(session, wide)
    if room is None:
        return list(wide)
    pad = room + offset  # one more character of task moves the floor-sized total by one
    if pad < 0 or pad > TASK_PAD * len(wide):
        return list(wide)
    out = []
    for child in wide:
        grow = min(pad, TASK_PAD)
        pad -= grow
        out.append(attrs.evolve(child, task=child.task + " " + _PAD * (grow - 1)) if grow
                   else child)
    return out


def _room(session: str, wide: Sequence[ChildSpec]) -> int | None:
    """What the model's renderer says the shown children's floor-sized heads leave under the
    cap in the wake carrying every child's newest answer (None: it fits whole)."""
    results = []
    for child in wide:
        text = child.steps[-1].text
        if child.correction_after_ms is not None:  # the newest receipt (actors/child/receipts.py)
            text = f"{text}\n\nCorrection: {child.correction}"
        results.append(ChildResult(session_key=child_session_key(session, child.session
                                                                 or child.id),
                                   session_id=None, task=child.task, status="ok", error=None,
                                   text=text, created_at=child.spawn_at_ms,
                                   ended_at=child.spawn_at_ms + child.run_ms))
    findings = format_wake(Wake(tuple(results), require_visible_reply=True)).findings
    return None if findings is None else findings.floor_room
