"""A child run (OUT-1..10, docs/output-selection.md): one agent-loop turn streaming steps under
virtual time, and the one rule that selects its output.

Owns: the agent loop's recording (``agent_loop``), the output rule and what consumers build on
it (``output``), the four consumers that read it (``consumers``: OUT-4..6), reading real session
logs (``logs``), what a scripted step streams (``steps``). Pure core: all of those. Shell:
``shell`` (Trio). Reference: output-selection.md.
"""
