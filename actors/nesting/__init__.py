"""Nested runs: findings, spawn limits, the global lane, the session queue."""
