"""The ``handoff`` command and its subcommands."""
