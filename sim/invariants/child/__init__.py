"""Child output oracles: the output rule and its consumers (``output``: OUT-1..8), the session log
(``child_log``: OUT-2, OUT-3, OUT-10), what the requester read (``announce``: FMT-1..4),
archive reads (``archive``: FMT-6) and a run's deadline (``run_timeout``: DEL-14, reference §c18).
"""
