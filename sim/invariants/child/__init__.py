"""Child output oracles."""
