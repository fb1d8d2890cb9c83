"""The simulator: virtual time, seeded choices, the world, faults, trace, invariants, CLI."""
