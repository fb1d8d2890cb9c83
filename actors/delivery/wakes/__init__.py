"""The delivery actor's side of yield batches and waves (YLD-1..3, docs/yield.md): how a member's
own delivery hands its result over to its batch (``batch_handover``, steps of the delivery core),
the batch-wake outbox's core (``batch_wake``), and the shell that feeds it and wakes the
requester (``delivery_wakes``, ``delivery_waves``: Trio). The yield rules they apply (turns,
waves) live in ``actors.yields``; the outbox row in ``actors.records.batch_record``.
"""
