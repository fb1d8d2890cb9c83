"""Seed sweeps (SIM-9): many seeds run serially or over workers (``sweeps``, ``pool``), one seed's
run and outcome (``seed``), and shrinking a failing run to a small one (``shrink``, on the
choice streams of ``streams``; SIM-7), and where its default world lives (``worlds``).
"""
