"""The world: built from a scenario and run under the harness, with its draws."""
