"""The chooser's names and bounds that flags need before anything runs: a module with no imports,
so ``handoff --help`` can build its options without loading sim/choices.py (attrs, the input
reader, the RNG tree: about 0.08 s of start-up)."""

from __future__ import annotations

# How the chooser picks among events due at the same instant (sim.choices.Strategy's values).
STRATEGIES = ("random", "pct", "fifo")
# Seeds are non-negative 64-bit integers (flags, scenario files and schedules alike).
MAX_SEED = 2**63 - 1
