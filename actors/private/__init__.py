"""Private parent completion (``completionTarget: "parent"``, PRV-1..8, docs/private.md): a
result handed back to the spawning turn instead of a channel.

Owns: the rules (``rules``: spawn refusals, retention while the turn is open, binding to the
requester's incarnation, the release window). Pure core; no shell of its own (the delivery and
requester shells perform it). The delivery core's steps on these rules live with it
(``actors.delivery.private_steps``). Reference: openclaw-delivery.md §c9.
"""
