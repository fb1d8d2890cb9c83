"""Yield batches and unfrozen waves (YLD-1..3, docs/yield.md): a requester turn that yields
freezes its required children into one batch, woken once all of them settled; non-yield
children that settle together form a wave with its own settle wake.

Owns: a requester's turns and incarnations (``turns``), the batch-wake outbox row
(``batch_record``) and its core (``batch_wake``), the hand-over from a member's own delivery
(``batch_handover``), waves (``waves``). Pure core: those. Shell: ``delivery_wakes`` and
``delivery_waves`` (Trio: the delivery actor's side, feeding the outbox). Reference:
openclaw-delivery.md §a (batch, wave, cohort), §c9.
"""
