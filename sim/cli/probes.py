"""What ``handoff explore`` reports besides violations: its code-probe table (SIM-10) and the
list of known-bug variants (SIM-8)."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap

import click

from actors.mutants import BREAKS, MUTANTS
from sim.textout import listed


def print_mutants(as_json: bool) -> None:
    rows = [{"name": name, "requirement": BREAKS[name].requirement,
             "invariant": BREAKS[name].invariant, "description": description}
            for name, description in MUTANTS.items()]
    if as_json:
        click.echo(json.dumps({"mutants": rows}, indent=2))
        return
    width = max(len(row["name"]) for row in rows)
    # In a terminal each description wraps at words under its name's column (piped: one line).
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
    for row in rows:
        line = (f"{row['name']:<{width}}  {row['requirement']:<6}  found by "
                f"{row['invariant']}: {row['description']}")
        if columns > width + 20:
            line = textwrap.fill(line, columns, subsequent_indent=" " * (width + 2),
                                 break_long_words=False, break_on_hyphens=False)
        click.echo(line)


def print_probes(probes: dict[str, int], never_hit: list[str], table: bool = False) -> None:
    """How many code probes the sweep hit, and which none reached (SIM-10); with ``table``,
    per probe how many seeds hit it."""
    hit = f"probes: {len(probes) - len(never_hit)} of {len(probes)} hit"
    if not table:
        missed = f"; never hit: {listed(never_hit)}" if never_hit else ""
        click.echo(f"{hit}{missed} (--probes for seeds per probe)")
        return
    width = max(len(name) for name in probes)
    click.echo(f"{hit} (seeds per probe)")
    for name, n in probes.items():
        click.echo(f"  {name:<{width}} {n}")
    click.echo("never hit: " + (", ".join(never_hit) if never_hit else "none"))
