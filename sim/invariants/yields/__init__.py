"""Yield-batch, wave and turn oracles (YLD-1..3, FMT-2; docs/yield.md): one wake per batch, after
it settled and not late (``yield_batches``), wake budgets (``wake_budgets``), the wake message
(``wake_message``), waves (``waves``, ``wave_liveness``), turn binding (``turns``). What they
share of a trace is read once in ``seen``.
"""
