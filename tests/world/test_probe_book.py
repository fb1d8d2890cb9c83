"""The world's probe book (sim/world/core.py): the kernel's counter notes each probe's moment
(the choices made when it first fired) at its first hit only, as the book that noted it at
every store did, and counts every hit in the order first hit (whole runs compared)."""

from __future__ import annotations

import pytest

from actors import probes
from sim.bench.detect import default_world
from sim.choices import Chooser
from sim.kernel import Kernel
from sim.world import core


class _EveryStore(dict[str, int]):
    """The reference: a plain dict, the moment looked up at every store."""

    def __init__(self, chooser: Chooser) -> None:
        super().__init__()
        self.chooser = chooser
        self.moments: dict[str, int] = {}

    def __setitem__(self, name: str, hits: int) -> None:
        if name not in self.moments:
            self.moments[name] = self.chooser.made
        super().__setitem__(name, hits)


class _ReferenceKernel(Kernel):
    def probe(self, name: str) -> None:
        probes.check(name)
        if not self.closed:
            self.probes[name] = self.probes.get(name, 0) + 1


def test_a_runs_probes_and_moments_are_the_reference_books(
        monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = default_world()
    for seed in range(1, 9):
        ours = core.run(scenario, seed=seed)
        with monkeypatch.context() as patched:
            patched.setattr(core, "ProbeBook", _EveryStore)
            patched.setattr(core, "Kernel", _ReferenceKernel)
            theirs = core.run(scenario, seed=seed)
        assert list(ours.probes.items()) == list(theirs.probes.items())
        assert list(ours.moments.items()) == list(theirs.moments.items())
        assert ours.moments and ours.trace.digest() == theirs.trace.digest()
