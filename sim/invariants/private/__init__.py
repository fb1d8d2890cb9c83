"""Private parent completion oracles (PRV-1..8; docs/private.md): ``completion`` (never to a
channel, bound to its incarnation, retained until its turn settles) and ``turns`` (what the
parent turn gets back).
"""
