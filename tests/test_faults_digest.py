"""The plan's ``gateway.send`` digests (sim/faults/plan.py): a run's repeated hand-off reuses its
kept digest, and every digest is the SHA-256 of the text handed over, whatever came before
(Hypothesis: texts that change between a run's tries, equal texts that are other objects, lone
surrogates, more runs than the plan keeps)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.choices import Chooser
from sim.faults.plan import SENT_DIGESTS_KEPT, FaultPlan

_TEXTS = ["", "done.", "done!", "a\ud800b", "中文 •", "x" * 3000]
_RUNS = [f"r{n}" for n in range(SENT_DIGESTS_KEPT + 4)]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_RUNS), st.sampled_from(_TEXTS), st.booleans()),
                max_size=80))
def test_every_digest_is_the_texts_own(sends: list[tuple[str, str, bool]]) -> None:
    plan = FaultPlan(Chooser(1), {}, 0, lambda run_id: None)
    for run_id, text, copied in sends:
        handed = "".join(list(text)) if copied else text  # an equal text, another object
        assert plan._text_digest(run_id, handed) == _digest(text)
        assert len(plan._sent_digests) <= SENT_DIGESTS_KEPT


def test_a_repeated_hand_off_is_not_hashed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = FaultPlan(Chooser(1), {}, 0, lambda run_id: None)
    first = plan._text_digest("r1", "the answer")
    other = _digest("another answer")
    calls = []
    real = hashlib.sha256

    def counting(data: bytes) -> object:
        calls.append(data)
        return real(data)

    import sim.faults.plan as plan_module

    monkeypatch.setattr(plan_module.hashlib, "sha256", counting)
    assert plan._text_digest("r1", "".join(["the ", "answer"])) == first
    assert calls == []
    assert plan._text_digest("r1", "another answer") == other
    assert calls == [b"another answer"]
