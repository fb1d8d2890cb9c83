"""The world: a scenario (or the seeded default workload) built into actors in nurseries and run
under the harness (``core``), with the default world's draws, one module per subject: trees
(``tree``, ``trees``), routing facts (``routes``), turns (``turns``), receipts (``receipts``),
operator actions (``redrive``), private children (``private``), permissions (``permissions``),
session control (``control``), what is observed at the end (``observe``) and the aimed draws
into thin corners (``reach``). Not pure: it runs Trio (SPEC §2, SIM-1..6).
"""
