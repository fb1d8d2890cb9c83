"""The default world's seeded draws, one module per subject: which features a run turns on
(``features``: the swarm), its workload of children (``workload``) and each child (``child``),
trees and their bookkeeping (``tree``, ``trees``), the requester's routing facts (``routes``),
unauthorised control attempts (``permissions``), private children (``private``), corrections
and held receipts (``receipts``), kills after a run's end and run timeouts (``lifecycle``) and
the aimed draws into thin corners (``reach``). Each draws through the run's Chooser only, so a
run is its seed (or its recorded choices), and shrinking a run's choices shrinks what these
drew.
"""
