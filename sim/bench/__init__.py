"""``handoff bench``: the simulator measuring itself (SPEC §5, docs/performance.md): the command
(``command``), the two message loops it compares (``micro``), one scale point in its own process
(``scale``) and the report beside the targets (``report``).
"""
