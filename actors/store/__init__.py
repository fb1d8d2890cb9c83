"""The registry's durable store: run records and batch rows in SQLite, and what it keeps beside
them so hot reads skip the query.

Owns: ``durable`` (the SQLite rows; a shell: it does IO) and ``cache`` (pure: the indexes kept
beside the rows). Reference: openclaw-delivery.md §c12 (what survives a restart).
"""
