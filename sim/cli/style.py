"""One error style and one output style for every ``handoff`` command, click's own errors included.

Bad input, whoever finds it (click parsing a flag, a reader of a file, a command's own checks), is
one line on stderr and exit status 2::

    handoff: file:line: field: what is wrong
    handoff: --flag: what is wrong

Commands raise :class:`~actors.errors.InputError` (or call :func:`bad_input`); the command classes
here turn it, and click's usage errors, into that line. Every command registered on the ``handoff``
group gets this for free. :func:`console` is the one place rich output is set up: never wrapped
when the output is not a terminal, so repro lines, file names and table rows stay whole.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click
from click.exceptions import NoArgsIsHelpError

from actors.errors import InputError, one_line
from sim.cli.io import guarded_output


def bad_input(message: str) -> NoReturn:
    click.echo(f"handoff: {one_line(message)}", err=True)
    raise SystemExit(2)


def usage_message(err: click.UsageError) -> str:
    """click's usage error as ``--flag: what is wrong`` (one line)."""
    if isinstance(err, click.NoSuchOption):
        hint = ""
        if err.possibilities:
            hint = f" (did you mean {', '.join(sorted(err.possibilities))}?)"
        return f"{err.option_name}: no such option{hint}"
    if isinstance(err, click.BadOptionUsage):
        return f"{err.option_name}: {_sentence(err.message)}"
    if isinstance(err, click.BadParameter) and err.param is not None:
        param = err.param
        name = (param.opts[0] if isinstance(param, click.Option) and param.opts
                else param.human_readable_name)
        if isinstance(err, click.MissingParameter):
            hint = f" (see {err.ctx.command_path} --help)" if err.ctx is not None else ""
            return f"{name}: is missing{hint}"
        return f"{name}: {_sentence(err.message)}"
    message = _sentence(err.message)
    if err.ctx is not None:
        message = f"{message.rstrip('.')} (see {err.ctx.command_path} --help)"
    return message


def _sentence(message: str) -> str:
    message = " ".join(message.split())  # one line
    return message[:1].lower() + message[1:] if message[:2] != message[:2].upper() else message


class _OneLineErrors:
    """``main`` of a top-level click command: bad input is one line and exit status 2, and so is
    a standard output that cannot be written (a full disk); a closed pipe ends it quietly."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        with guarded_output():
            return self._main(args, complete_var, standalone_mode, **extra)

    def _main(self, args: Sequence[str] | None, complete_var: str | None,
              standalone_mode: bool, **extra: Any) -> Any:
        try:
            # Always "handoff", also as `python -m sim` (its repro lines say handoff too).
            result = super().main(args, "handoff", complete_var,  # type: ignore[misc]
                                  standalone_mode=False, **extra)
        except NoArgsIsHelpError as err:  # bare `handoff`: the help, as click gives it
            click.echo(err.ctx.get_help() if err.ctx is not None else err.message, err=True)
            raise SystemExit(2) from None
        except click.UsageError as err:
            bad_input(usage_message(err))
        except click.ClickException as err:
            bad_input(_sentence(err.format_message()))
        except InputError as err:
            bad_input(str(err))
        except click.Abort:
            click.echo("handoff: aborted", err=True)
            raise SystemExit(1) from None
        if standalone_mode:
            raise SystemExit(result if isinstance(result, int) else 0)
        return result


class HandoffCommand(_OneLineErrors, click.Command):
    """A ``handoff`` subcommand (also usable on its own, as the tests do)."""


class HandoffGroup(_OneLineErrors, click.Group):
    """The ``handoff`` group; commands added with ``@main.command()`` are HandoffCommands."""

    command_class = HandoffCommand


def console(stderr: bool = False) -> Any:
    """A rich console that never wraps when its stream is not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, highlight=False, soft_wrap=True)
    # Not a terminal: one logical line stays one line, and tables take the width they need.
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=1_000_000)


def fit(table: Any, width: int, drop: Sequence[str] = ()) -> list[str]:
    """Make a rich ``Table`` fit ``width`` columns without cutting a value. A column is never
    narrower than its floor (a ``no_wrap`` column's longest cell, another's longest word), so
    text wraps at spaces and nothing is cut; when even the floors do not fit, the borders go,
    then the columns named in ``drop``, in order. The widest columns give up room first. Returns
    the headers of the columns dropped. Cells must be plain strings (as every handoff table's)."""
    from rich import box

    if _narrowest(table) > width:
        table.box, table.show_edge, table.pad_edge = box.SIMPLE_HEAD, False, False
    dropped: list[str] = []
    for header in drop:
        if _narrowest(table) <= width:
            break
        table.columns[:] = [c for c in table.columns if c.header != header]
        dropped.append(header)
    floors = [_floor(c) for c in table.columns]
    widths = [_widest(c) for c in table.columns]
    excess = sum(widths) - (width - (_narrowest(table) - sum(floors)))
    while excess > 0 and widths != floors:  # rich's own squeeze may cut below a floor
        i = max(range(len(widths)), key=lambda k: (widths[k] - floors[k] > 0, widths[k]))
        widths[i] -= 1
        excess -= 1
    for column, w in zip(table.columns, widths, strict=True):
        column.width = w
    return dropped


def _texts(column: Any) -> list[str]:
    return [str(column.header), *map(str, column._cells)]  # rich keeps a column's cells here


def _widest(column: Any) -> int:
    from rich.cells import cell_len

    return max(cell_len(line) for text in _texts(column) for line in text.splitlines() or [""])


def _floor(column: Any) -> int:
    from rich.cells import cell_len

    if column.no_wrap:
        return _widest(column)
    return max((cell_len(word) for text in _texts(column) for word in text.split()), default=1)


def _narrowest(table: Any) -> int:
    """The table's width with every column at its floor: cells, padding, borders."""
    left, right = table.padding[3], table.padding[1]
    columns = table.columns
    width = sum(_floor(c) + left + right for c in columns)
    if not table.pad_edge and columns:
        width -= left + right
    if table.box is not None:
        width += len(columns) - 1 + (2 if table.show_edge else 0)
    return int(width)
