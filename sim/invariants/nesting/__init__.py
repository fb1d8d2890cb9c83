"""Nesting oracles (DEL-4, DEL-6, reference §c8, §c15; docs/nesting.md): who reads a completion in
which form (``requesters``), what a run's findings carry (``findings``), spawn limits
(``limits``), one run at a time per session (``sessions``), what a kill stops (``kills``).
"""
