"""The protocol model: pure cores (no IO, no clock, no randomness) and thin Trio shells."""
