"""Yield batches and unfrozen waves (YLD-1..3, docs/yield.md): a requester turn that yields
freezes its required children into one batch, woken once all of them settled; non-yield
children that settle together form a wave with its own settle wake.

Owns: a requester's turns and incarnations (``turns``) and waves (``waves``). Pure core: both.
The batch-wake outbox row is ground (``actors.records.batch_record``); the delivery actor's side
(the hand-over from a member's own delivery, the outbox's core and its Trio shell) lives in
``actors.delivery.wakes``. Reference: openclaw-delivery.md §a (batch, wave, cohort), §c9.
"""
