"""The kernel's probe counter as a world keeps it: hits per probe, and the moment each first
fired (a moment a guided sweep branches from)."""

from __future__ import annotations

from collections import Counter

from sim.choices import Chooser


class ProbeBook(Counter[str]):
    """The kernel's probe counter (name -> hits), noting when each probe first fires: how
    many choices the run had made by then (a moment to branch from). A counter's missing
    name is its first hit (the kernel counts ``probes[name] += 1``): the repeats, most of a
    seed's hits, are plain dict stores."""

    def __init__(self, chooser: Chooser) -> None:
        super().__init__()
        self.chooser = chooser
        self.moments: dict[str, int] = {}

    def __missing__(self, name: str) -> int:
        self.moments[name] = self.chooser.made
        return 0
