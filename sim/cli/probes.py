"""What ``handoff explore`` reports besides violations: its code-probe table (SIM-10) and the
list of known-bug variants (SIM-8)."""

from __future__ import annotations

import json

import click

from actors.mutants import BREAKS, MUTANTS


def print_mutants(as_json: bool) -> None:
    rows = [{"name": name, "requirement": BREAKS[name].requirement,
             "invariant": BREAKS[name].invariant, "description": description}
            for name, description in MUTANTS.items()]
    if as_json:
        click.echo(json.dumps({"mutants": rows}, indent=2))
        return
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        click.echo(f"{row['name']:<{width}}  {row['requirement']:<6}  found by "
                   f"{row['invariant']}: {row['description']}")


def print_probes(probes: dict[str, int], never_hit: list[str]) -> None:
    """Per code probe, how many seeds hit it; then the ones no seed reached (SIM-10)."""
    width = max(len(name) for name in probes)
    click.echo(f"probes: {len(probes) - len(never_hit)} of {len(probes)} hit (seeds per probe)")
    for name, n in probes.items():
        click.echo(f"  {name:<{width}} {n}")
    click.echo("never hit: " + (", ".join(never_hit) if never_hit else "none"))
