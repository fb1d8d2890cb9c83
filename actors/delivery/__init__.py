"""The delivery actor: its table core, edge, run record, receipts, recovery."""
