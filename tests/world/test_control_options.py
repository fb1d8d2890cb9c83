"""A ``world.spawn`` record's options (sim/world/control.py): ``attrs.asdict`` of the spawn's
options, worked out once per distinct value, each record holding a dict of its own."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from actors.messages import ChildSpec
from actors.private.rules import Runtime, SpawnMode, SpawnOptions
from sim.choices import Chooser
from sim.kernel import Kernel
from sim.world.control import ControlDesk

_OPTIONS = st.builds(SpawnOptions, st.sampled_from(list(Runtime)), st.booleans(), st.booleans(),
                     st.booleans(), st.sampled_from(list(SpawnMode)))


@given(st.lists(_OPTIONS, min_size=1, max_size=6))
def test_each_spawn_record_holds_asdict_of_its_options(values: list[SpawnOptions]) -> None:
    kernel = Kernel(Chooser(1))
    desk = ControlDesk(kernel, {})
    for n, options in enumerate(values * 2):
        desk.spawn_request(ChildSpec(f"c{n}", "main", "task", 0, (), options=options))
        record = kernel.trace[-1]
        assert record.kind == "world.spawn"
        assert record.data["options"] == attrs.asdict(options)
        record.data["options"].clear()  # what one record's reader does stays its own
