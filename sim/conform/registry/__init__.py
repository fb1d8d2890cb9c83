"""The registry check: a simulator run's events replayed on OpenClaw's real subagent registry
(SPEC §7, issue 34 item 3).

:mod:`.translate` reads a finished run's trace and turns each run's events into steps for the
Node end (``node/registry.mjs``), one small module per event kind (:mod:`.spawn`,
:mod:`.child_end`, :mod:`.sends`); :mod:`.scope` says which runs cannot be translated and why;
:mod:`.compare` sets the row OpenClaw kept after each event beside what the trace says, and
:mod:`.check` runs it over scenarios and default-world seeds.
"""
