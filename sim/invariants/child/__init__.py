"""Child output oracles: the output rule and its consumers (``output``: OUT-1..8), the session log
(``child_log``: OUT-2, OUT-3, OUT-10), what the requester read (``announce``: FMT-1..4) and
archive reads (``archive``: FMT-6).
"""
