"""The delivery actor: it takes each ended child run and carries its completion to the requester
that asked, at most once, retrying, recovering and giving up as OpenClaw's registry does.

Owns: the run as the registry stores it (``run_record``), the state machine (``table``: a
(state, input) -> handler table, drawn in docs/architecture.md) and its send path
(``attempts``), the core's edge (``edge``: inputs in, effects out), receipts and corrections
(``receipts``, ``claims``: DEL-12, DEL-13), lost-answer recovery (``recovery``: DEL-2), operator
redrive and dismissal (``redrive``: DEL-16), what memory keeps (``retention``: DEL-16), retry
timing (``retry``), and what a requester reads (``payload``).

Pure core: every module but ``shell``. Shell: ``shell`` (Trio; the core plus the SQLite store,
a crash point before each effect). Reference: openclaw-delivery.md §c1, §c2, §c8, §c10, §c11,
§c12, §c16.
"""
