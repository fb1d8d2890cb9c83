"""Seed sweeps, the worker pool and shrinking."""
