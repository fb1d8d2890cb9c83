"""A span's ranges (sim/choices.py ``Chooser.span``, counted when read by ``resolve_spans``)
equal what comparing every subsystem's count before and after gives (the plain statement, kept
here), for any nesting of spans and any mix of choices (Hypothesis), in a free run and under
guides; and a world run's ``RunResult.spans`` equal its chooser's under that statement."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.bench.detect import default_world
from sim.choices import Chooser, Span
from sim.world import core

_SUBSYSTEMS = ["workload", "fault:delay", "swarm:crash", "schedule"]
# An action: open a span, close the innermost, or choose (subsystem, options; 0: a chance).
_ACTIONS = st.lists(st.one_of(st.just(("open", "", 0)), st.just(("close", "", 0)),
                              st.tuples(st.just("choose"), st.sampled_from(_SUBSYSTEMS),
                                        st.integers(0, 4))), max_size=60)


class _Counted(Chooser):
    """The reference: every subsystem's count copied at the start and compared at the end,
    each ready-made when its span closes."""

    def _counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}  # in the order subsystems first chose
        for sub, _, _ in self._record:
            name = self._subsystems[sub]
            counts[name] = counts.get(name, 0) + 1
        return counts

    @contextmanager
    def span(self, label: str) -> Iterator[None]:
        start = self._counts()
        yield
        self._spans.append((label, tuple((sub, start.get(sub, 0), end)
                                        for sub, end in self._counts().items()
                                        if end != start.get(sub, 0))))


def _spans(chooser: Chooser, actions: list[tuple[str, str, int]]) -> list[Span]:
    open_spans: list[object] = []
    for n, (what, subsystem, options) in enumerate(actions):
        if what == "open":
            span = chooser.span(f"s{n}")
            span.__enter__()
            open_spans.append(span)
        elif what == "close" and open_spans:
            open_spans.pop().__exit__(None, None, None)  # type: ignore[attr-defined]
        elif what == "choose":
            if options:
                chooser.choose(subsystem, options)
            else:
                chooser.chance(subsystem, 0.5)
    while open_spans:
        open_spans.pop().__exit__(None, None, None)  # type: ignore[attr-defined]
    return chooser.spans


@settings(max_examples=300, deadline=None)
@given(_ACTIONS, st.booleans())
def test_span_ranges_are_the_counts_before_and_after(actions: list[tuple[str, str, int]],
                                                     guided: bool) -> None:
    guides = {"workload": [1, 0, 3], "fault:delay": [1]} if guided else None
    assert _spans(Chooser(7, guides=guides), actions) == \
        _spans(_Counted(7, guides=guides), actions)


def test_a_span_lists_its_subsystems_in_the_order_they_first_chose() -> None:
    chooser = Chooser(3)
    chooser.choose("b", 3)
    chooser.choose("a", 3)
    with chooser.span("child"):
        chooser.choose("a", 3)
        chooser.choose("c", 3)
        chooser.choose("b", 3)
        chooser.choose("a", 3)
    assert chooser.spans == [("child", (("b", 1, 2), ("a", 1, 3), ("c", 0, 1)))]


@pytest.mark.parametrize("guided", [False, True])
def test_a_world_runs_spans_are_its_choosers(guided: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``RunResult.spans`` (counted from the schedule when read) equal what the reference
    chooser made as the run went, over default-world seeds, free and guided (the guided run's
    fault opportunities add ``about:`` spans between the children's)."""
    scenario = default_world()
    if guided:
        scenario = attrs.evolve(scenario, replay=(("workload", (1, 0, 2)),
                                                  ("fault:delay", (1, 1))))
    for seed in range(1, 6):
        lazy = core.run(scenario, seed=seed)
        monkeypatch.setattr(core, "Chooser", _Counted)
        eager = core.run(scenario, seed=seed)
        monkeypatch.undo()
        assert eager.spans, "the default world draws children in spans"
        assert lazy.spans == eager.spans
        assert lazy.trace.digest() == eager.trace.digest()
