"""The ``handoff`` command (``root``; also ``python -m sim``) and its subcommands, one module each
when they have their own (``replay``, ``shrink``, ``output``, ``announce``, loaded on use by
``lazy``); ``args`` and ``style`` hold the flags and the one error and output style they share,
``schedules`` reads recorded schedules. Bad input is ``file:line: field: what is wrong``, exit
status 2 (SPEC §4).
"""
