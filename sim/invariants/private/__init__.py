"""Private parent completion oracles."""
