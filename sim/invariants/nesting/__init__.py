"""Nesting oracles."""
