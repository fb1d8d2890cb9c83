"""``handoff conform``: the model checked against OpenClaw's released npm package (SPEC §7).

The package is installed, never copied: :mod:`sim.conform.install` puts Node 24 and a pinned
``openclaw`` into a cache folder on first use; :mod:`sim.conform.driver` runs one long-lived Node
process that calls OpenClaw's functions by their original names; the checks compare them with the
model's on generated inputs, and every difference is either listed in ``differences.toml`` (with
its reason) or fails.
"""
