"""What ``handoff explore`` prints: its readable summary, its code-probe table (SIM-10) and the
list of known-bug variants (SIM-8)."""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import click

from actors.mutant_catalogue import MUTANTS
from sim.cli.style import console
from sim.explore.breaks import BREAKS
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


def print_summary(n: int, violations: list[dict[str, Any]], rate: float, jobs: int,
                           divergences: list[dict[str, Any]], checked_twice: bool,
                           probes: Callable[[], None]) -> None:
    """explore's readable summary: counts, violations (the first 20, each with its repro),
    the probe line and any divergence."""
    out = console()
    failing = sorted({v["seed"] for v in violations})
    out.print(f"explored {n} seeds ({rate:.0f} seeds/s on {jobs} job(s)): "
              f"{len(violations)} violation(s) in {len(failing)} seed(s)")
    by_invariant: dict[str, int] = {}
    for v in violations:
        by_invariant[v["invariant"]] = by_invariant.get(v["invariant"], 0) + 1
    for name, count in by_invariant.items():
        out.print(f"  {name}: {count}")
    for v in violations[:20]:
        out.print(f"seed {v['seed']}: {v['invariant']} ({v['requirement']}): {v['message']}",
                  markup=False)
        out.print(f"  reproduce: {v['repro']}", markup=False)
    if len(violations) > 20:
        out.print(f"... and {len(violations) - 20} more (use --json for all)")
    probes()
    for d in divergences:
        out.print(f"seed {d['seed']}: NOT DETERMINISTIC: traces differ at record {d['record']}",
                  markup=False)
    if checked_twice:
        out.print(f"{n} seeds checked twice, {len(divergences)} divergences")
