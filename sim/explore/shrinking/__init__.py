"""Shrinking a failing run to a small one that fails the same way (SIM-7): the driver
(``shrink.py``), its runs and cache (``shrinker.py``), the structural passes
(``shrink_structure.py``, ``shrink_wide.py``) and the choice passes (``shrink_choices.py``)."""
