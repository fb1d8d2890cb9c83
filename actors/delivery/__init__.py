"""The delivery actor: it takes each ended child run and carries its completion to the requester
that asked, at most once, retrying, recovering and giving up as OpenClaw's registry does.

Owns: the state machine (``table``: a (state, input) -> handler table, drawn in
docs/architecture.md, its handlers plain functions named by reference), what the core keeps in
memory and the steps its parts share (``core``), its send path (``attempts``), the core's edge
(``edge``: inputs in,
effects out), receipts and corrections (``receipts``: DEL-12, DEL-13), private results' steps
(``private_steps``: PRV), lost-answer recovery (``recovery``: DEL-2), operator redrive and
dismissal (``redrive``: DEL-16), what a requester reads (``payload``), and its side of yield
batches and waves (``wakes``). The run record, claims, retry timing and retention it works on are
ground (``actors.records``).

Pure core: every module but ``shell`` and ``wakes.delivery_wakes``/``wakes.delivery_waves``.
Shell: ``shell`` (Trio; the core plus the SQLite store, a crash point before each effect).
Reference: openclaw-delivery.md §c1, §c2, §c8, §c10, §c11,
§c12, §c16.
"""
