"""A requester session: it spawns child runs into its own nursery, takes their completions into
its transcript, and plays its turns.

Owns: the session's transcript and source-delivery facts (``session``: pure core), and its Trio
shell (``shell``: a table naming each message's handler, as the delivery core's does). The
handlers are plain functions of the session's actor (``actor``: what it holds, the caller's
check): its children (``spawning``), what it receives (``receiving``), what it serves
(``reads``), its turns (``turns``) and the wave wakes it takes (``waves``).
Reference: openclaw-delivery.md §a, §c2, §c4, §c9.
"""
