"""The protocol model: pure cores (no IO, no clock, no randomness) and thin Trio shells, one
package per subsystem (docs/architecture.md draws the map); never imports the simulator."""
