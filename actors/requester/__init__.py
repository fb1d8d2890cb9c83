"""A requester session: it spawns child runs into its own nursery, takes their completions into
its transcript, and plays its turns.

Owns: the session's transcript and source-delivery facts (``session``: pure core), and its Trio
shell (``shell``), with its turns (``turns``) and the wave wakes it takes (``waves``).
Reference: openclaw-delivery.md §a, §c2, §c4, §c9.
"""
