"""Gateway oracles."""
