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
from sim.cli.files.io import guarded_output

# Exit statuses beyond 0, 1 and 2 (docs/inputs.md#exit-status): a sweep whose Dask cluster went
# away, and Ctrl-C (128 + SIGINT, as shells report it).
CUT_SHORT = 3
INTERRUPTED = 130


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
        except click.Abort as err:
            if isinstance(err.__context__, KeyboardInterrupt):  # click's word for Ctrl-C
                click.echo("handoff: interrupted", err=True)
                raise SystemExit(INTERRUPTED) from None
            click.echo("handoff: aborted", err=True)
            raise SystemExit(1) from None
        except KeyboardInterrupt:
            click.echo("handoff: interrupted", err=True)
            raise SystemExit(INTERRUPTED) from None
        except MemoryError:
            # Every documented limit fits in 2 GiB (docs/inputs.md#size-limits); under a
            # tighter `ulimit -v` an input within the limits may still not fit.
            click.echo("handoff: out of memory: this input needs more memory than the process "
                       "may use (ulimit -v?); see docs/inputs.md#size-limits", err=True)
            raise SystemExit(2) from None
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

