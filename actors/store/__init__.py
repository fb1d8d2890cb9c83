"""The registry's durable store: run records and batch rows in SQLite, and what it keeps beside
them so hot reads skip the query.

Owns: ``durable`` (the SQLite rows; a shell: it does IO) and ``cache`` (pure: the indexes kept
beside the rows). Imports only the ground (``actors.records``, ``actors.states``); no actor
imports it: each actor declares the methods it uses as a ``typing.Protocol`` of its own
(``actors.delivery.store``, ``actors.requester.store``, ``actors.child.store``) and the world
hands it this store. Reference: openclaw-delivery.md §c12 (what survives a restart).
"""
