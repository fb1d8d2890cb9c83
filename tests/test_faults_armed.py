"""The plan's armed faults, indexed by kind and child (sim/faults/armed.py), take exactly the
fault a scan of the arming-ordered list takes, for any arming and any opportunity (Hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sim.faults.armed import ArmedFaults
from sim.faults.plan import ArmedFault, TimelineEvent

_KINDS = st.sampled_from(["delay", "crash", "send-ambiguous"])
_CHILD = st.none() | st.sampled_from(["c1", "c2"])
_ACTOR = st.none() | st.sampled_from(["delivery", "gateway"])
_POINT = st.none() | st.sampled_from(["before-send", "before-persist"])
_ARM = st.tuples(st.just("arm"), _KINDS, _CHILD, _ACTOR, _POINT, st.integers(1, 3))
_TAKE = st.tuples(st.just("take"), _KINDS, _CHILD, _ACTOR, _POINT, st.just(0))


def _scan(armed: list[ArmedFault], kind: str, child: str | None, actor: str | None,
          point: str | None) -> TimelineEvent | None:
    """The reference: the list scan the plan used before the index."""
    for fault in armed:
        event = fault.event
        if event.fault != kind or (event.child is not None and event.child != child) or (
                event.actor is not None and event.actor != actor) or (
                event.point is not None and event.point != point):
            continue
        fault.remaining -= 1
        if fault.remaining <= 0:
            armed.remove(fault)
        return event
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ARM, _TAKE), max_size=60))
def test_index_takes_what_the_scan_takes(steps: list[tuple[str, str, str | None, str | None,
                                                            str | None, int]]) -> None:
    indexed, listed = ArmedFaults(), []
    for n, (what, kind, child, actor, point, count) in enumerate(steps):
        if what == "arm":
            event = TimelineEvent(n, kind, child=child, actor=actor, point=point, count=count)
            indexed.append(ArmedFault(event, count))
            listed.append(ArmedFault(event, count))
        else:
            assert indexed.take(kind, child, actor, point) is _scan(listed, kind, child, actor,
                                                                     point)
        assert len(indexed) == len(listed)
