"""Yield-batch, wave and turn oracles."""
