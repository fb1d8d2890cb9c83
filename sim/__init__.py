"""The simulator: virtual time, seeded choices, the world, faults, trace, invariants, CLI, one
package per subsystem (docs/architecture.md draws the map)."""
