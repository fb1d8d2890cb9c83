"""Delivery oracles (DEL-1..3, DEL-7, DEL-9..16): what reached which requester (``reached``),
sends after a refusal (``send_errors``, ``retries``), chunked sends (``chunks``), what happens
after a hand-off (``handoffs``), receipts and claims (``receipts``), recovery (``recovery``),
operator actions (``redrive``), retention (``retention``) and a run's end of life
(``lifecycle``). They read the trace only, through ``sim/invariants/observations.py``.
"""
