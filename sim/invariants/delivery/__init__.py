"""Delivery oracles."""
