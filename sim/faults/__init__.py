"""Faults (SIM-4): the kinds a world may allow (``kinds``), the plans that draw them from the seed
or script them from a timeline (``plan``), and the scripted faults held armed (``armed``).
"""
