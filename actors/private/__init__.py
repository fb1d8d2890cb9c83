"""Private parent completion (``completionTarget: "parent"``, PRV-1..8, docs/private.md): a
result handed back to the spawning turn instead of a channel.

Owns: the rules (``rules``: spawn refusals, retention while the turn is open, binding to the
requester's incarnation, the release window) and their steps in the delivery core
(``delivery``, a mixin of ``actors.delivery.table.DeliveryCore``). Pure core: both; no shell of
its own (the delivery and requester shells perform it). Reference: openclaw-delivery.md §c9.
"""
