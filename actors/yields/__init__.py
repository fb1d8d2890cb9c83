"""Yield batches, their batch-wake outbox, unfrozen waves, requester turns."""
