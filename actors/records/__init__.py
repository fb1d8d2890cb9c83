"""The ground every actor stands on: the values the subsystems share, and nothing that acts.

Owns: the run as the registry stores it and its changes (``run_record``), recovery claims on a
receipt (``claims``: DEL-12, DEL-13), retry timing (``retry``), a failed send as an error chain
and its class (``send_error``), the batch-wake outbox row (``batch_record``: YLD-2), what memory
keeps of a resolved run and its preview (``retention``: DEL-16), the session-key and hand-off-key
rules (``keys``), a retained transcript row (``archive``: FMT-6). Pure: all of them. Imports
nothing in actors/ above it (pyproject.toml's layers contract); every package above may import
it.
"""
