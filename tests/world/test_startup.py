"""``handoff --help`` imports neither the world, the model's actors nor Trio (SPEC §5 startup),
and lists the lazily loaded commands with their own help."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from sim.cli.lazy import load
from sim.cli.root import _LAZY, main


def test_help_imports_no_world_model_or_trio() -> None:
    code = ("import sys; from sim.cli.root import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(__import__('json').dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    modules = set(json.loads(out.splitlines()[-1]))
    heavy = {"trio", "sim.world.core", "sim.kernel", "actors.delivery.shell",
             "actors.delivery.table", "hypothesis", "pytest", "sqlite3", "rich"}
    assert not modules & heavy, sorted(modules & heavy)


def test_lazy_commands_keep_their_own_help() -> None:
    for name, (where, text) in _LAZY.items():
        command = load(where)
        assert command.name == name
        assert command.help is not None
        assert command.help.startswith(text), name


def test_help_lists_every_command_and_lazy_ones_still_run() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("explore", "replay", "run", "bench", "output", "announce", "shrink"):
        assert f"  {name} " in result.output
    assert CliRunner().invoke(main, ["announce", "--help"]).exit_code == 0
