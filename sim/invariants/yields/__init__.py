"""Yield-batch, wave and turn oracles (YLD-1..3, FMT-2; docs/yield.md): one wake per batch, after
it settled and not late (``yield_batches``), wake budgets (``wake_budgets``), the wake message
(``wake_message``), waves (``waves``, ``wave_liveness``), turn binding (``turns``), a given-up
member released by a taken wake (``released``; what each taken wake carried: ``carried``). What
they share of a trace is read once in ``seen``.
"""
