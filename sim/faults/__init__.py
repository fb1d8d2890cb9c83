"""Fault plans and the scripted faults they hold armed."""
