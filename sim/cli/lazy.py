"""Commands that live in their own modules, loaded only when they run.

``handoff --help`` lists every command with its one-line help; loading a command's module would
import the model, the world and Trio (a quarter of a second), so the group keeps each command's
short help beside its location and imports the module only when the command is run or asked for
its own help. tests/world/test_startup.py checks that the kept help matches the command's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import click

from sim.cli.style import HandoffGroup


class LazyGroup(HandoffGroup):
    def __init__(self, *args: object, lazy: Mapping[str, tuple[str, str]] | None = None,
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        # name -> ("module:attribute", the command's help text up to its first full stop)
        self.lazy: dict[str, tuple[str, str]] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(load(self.lazy[cmd_name][0]), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            limit = formatter.width - 6 - len(name)
            if name in self.lazy and name not in self.commands:
                # A help-only Command shortens the kept text exactly as the loaded command would
                # (click's public API; its helper for this is deprecated since 8.5).
                short = click.Command(name, help=self.lazy[name][1]).get_short_help_str(limit)
                rows.append((name, short))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def load(location: str) -> click.Command:
    module, _, attribute = location.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command), location
    return command
