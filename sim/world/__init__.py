"""The world: a scenario (or the seeded default workload) built into actors in nurseries and run
under the harness (``core``), with session control (``control``), the operator's redrives and
dismissals (``redrive``), the requesters' turns (``turns``), what is observed at the end
(``observe``), and the default world's seeded draws in ``draws/``. Not pure: it runs Trio (SPEC
§2, SIM-1..6).
"""
