"""The operator desk's latest run of a child (sim/world/redrive.py ``_run_of``), read on from
where it last stopped, is the last ``spawn`` record's run for that child in the whole trace so
far, for any interleaving of records and questions (Hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from actors.store.durable import RunStore
from sim.choices import Chooser
from sim.kernel import Kernel
from sim.world.redrive import OperatorDesk

_CHILD = st.sampled_from(["c1", "c2", "c3"])
_STEP = st.one_of(st.tuples(st.just("spawn"), _CHILD, st.integers(0, 5)),
                  st.tuples(st.just("other"), _CHILD, st.integers(0, 5)),
                  st.tuples(st.just("ask"), _CHILD, st.just(0)))


@given(st.lists(_STEP, max_size=40))
def test_latest_run_is_the_last_spawn_so_far(steps: list[tuple[str, str, int]]) -> None:
    kernel = Kernel(Chooser(1))
    desk = OperatorDesk(kernel, RunStore())
    for what, child, run in steps:
        if what == "ask":
            spawns = [r.data["run_id"] for r in kernel.trace
                      if r.kind == "spawn" and r.data["child"] == child]
            assert desk._run_of(child) == (spawns[-1] if spawns else None)
        else:
            kernel.emit("requester:main", what, {"child": child, "run_id": f"run-{child}-{run}"})
