"""The gateway: agent calls from the delivery actor in, sessions and channels out.

Owns: its decisions (``core``: chunking, per-chunk faults, its idempotency facts), where a
top-level completion goes (``routing``: DEL-4, DEL-5), transcript mirrors of direct deliveries
(``mirror``: DEL-8), a failed send as an error chain and its class (``send_error``), the
blocked-completion warning (``blocked``: DEL-9). Pure core: all of those. Shell: ``shell``
(Trio). Reference: openclaw-delivery.md §c5, §c10, §c16.
"""
