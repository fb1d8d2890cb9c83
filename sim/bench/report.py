"""``handoff bench`` without ``--json``: the figures beside their SPEC §5 targets."""

from __future__ import annotations

from typing import Any


def _f(value: Any, fmt: str = "{:.2f}") -> str:
    if isinstance(value, dict):
        return (fmt.format(value["median"]) + " (" + fmt.format(value["min"]) + " to "
                + fmt.format(value["max"]) + ")")
    return fmt.format(value)


def print_figures(figures: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from sim.textout import fit

    console = Console(highlight=False)
    print_detection(console, figures)
    table = Table(title="medians (min to max) of interleaved rounds")
    for column in ("figure", "measured", "target"):
        table.add_column(column)
    table.add_row("kernel cost per message / bare Trio",
                  _f(figures["kernel_message_cost_vs_trio"]), "<= 1.5")
    table.add_row("world steps/s / bare Trio messages/s",
                  _f(figures["world_steps_vs_trio_messages"], "{:.3f}"), ">= 0.167")
    table.add_row("default-world seeds/s per core",
                  _f(figures["seeds_per_second_per_core"], "{:.0f}"), "(information)")
    table.add_row("  the same seeds' steps as kernel messages only",
                  _f(figures["kernel_only_seeds_per_second"], "{:.0f}"), "(a ceiling)")
    table.add_row("  the same seeds' steps as bare Trio messages only",
                  _f(figures["trio_only_seeds_per_second"], "{:.0f}"), "(a ceiling)")
    jobs = figures["parallel"]["jobs"]
    table.add_row(f"parallel efficiency, --jobs {jobs} vs --jobs 1",
                  _f(figures["parallel_efficiency"]), "near 1 (>= 0.85)")
    table.add_row("bare Trio messages/s", _f(figures["trio_messages_per_second"], "{:,.0f}"), "")
    table.add_row("world kernel steps/s", _f(figures["world_steps_per_second"], "{:,.0f}"), "")
    fit(table, console.width)
    console.print(table)
    scale = Table(title="scale: one default-world run per size, fresh process each")
    for column in ("children", "seconds", "CPU s", "x per doubling", "peak MiB", "run MiB",
                   "x per doubling", "records"):
        scale.add_column(column, justify="right")
    for row in figures["scale"]:
        if "error" in row:
            scale.add_row(str(row["children"]), "crashed: " + row["error"], "", "", "", "", "",
                          "")
            continue
        scale.add_row(str(row["children"]), f"{row['seconds']:.2f}",
                      f"{row['cpu_seconds']:.2f}", str(row.get("time_growth", "")),
                      f"{row['peak_mib']:.0f}",
                      f"{row['run_mib']:.0f}", str(row.get("memory_growth", "")),
                      str(row["records"]))
    fit(scale, console.width)
    console.print(scale)
    conform = figures.get("conform", {})
    if "skipped" in conform:
        console.print(f"conform: not measured ({conform['skipped']})")
    elif conform:
        console.print(f"conform: driver round trip {conform['round_trip_ms']:.3f} ms (mean of "
                      f"{conform['round_trip_pings']}); {conform['checks']} checks at "
                      f"{conform['inputs_per_check']} inputs in {conform['seconds']} s, "
                      f"{conform['undocumented']} undocumented differences")
        registry = conform.get("registry")
        if registry:
            console.print(f"conform registry: {registry['scenarios']} scenarios and "
                          f"{registry['seeds']} seeds replayed ({registry['runs']} runs, "
                          f"{registry['events']} events, {registry['checks']} rows) in "
                          f"{registry['seconds']} s")
    fmt = Table(title="formatter (cap 160,000 characters)")
    for column in ("case", "children", "input chars", "output", "truncated", "summarized",
                   "seconds", "µs/child", "x per doubling"):
        fmt.add_column(column, justify="right")
    for row in figures["formatter"]:
        fmt.add_row(row["case"], str(row["children"]), f"{row['input_chars']:,}",
                    f"{row['output_chars']:,}", str(row["truncated"]), str(row["summarized"]),
                    f"{row['seconds']:.4f}", f"{row['us_per_child']:.1f}",
                    str(row.get("per_child_growth", "")))
    fit(fmt, console.width, drop=("seconds", "truncated"))
    console.print(fmt)
    if "inputs" in figures:
        table = Table(title="peak memory against input size (fresh process each)")
        for column in ("input", "elements", "bytes", "peak MiB", "MiB per million more"):
            table.add_column(column, justify="right")
        for row in figures["inputs"]:
            table.add_row(row["input"], f"{row['elements']:,}", f"{row['bytes']:,}",
                          f"{row['peak_mib']:.0f}", str(row.get("mib_per_million", "")))
        console.print(table)
    if "startup" in figures:
        start = figures["startup"]
        console.print("handoff --help: " + _f(start["help_cpu_seconds"], "{:.3f}")
                      + " s CPU (target < 0.15); python -c pass: "
                      + _f(start["python_cpu_seconds"], "{:.3f}") + " s")
    load = figures["machine_before"]["load_average"]
    console.print(f"load average before {load[0]:.2f}, after "
                  f"{figures['load_average_after'][0]:.2f} on "
                  f"{figures['machine_before']['usable_cpus']} usable core(s)")


def print_detection(console: Any, figures: dict[str, Any]) -> None:
    """Time to find a bug: per mutant, its first failing seed and the steps up to it."""
    from rich.table import Table

    from sim.textout import fit

    table = Table(title="time to find a bug: plain explore --mutant NAME, seeds 1, 2, ...")
    for column in ("mutant", "first seed", "steps", "CPU s"):
        table.add_column(column, justify="right")
    for name, row in figures["detection"].items():
        table.add_row(name, str(row["first_seed"] or "not found"), f"{row['steps']:,}",
                      f"{row['cpu_seconds']:.2f}")
    fit(table, console.width)
    console.print(table)
    console.print(f"steps to the first violation: median {figures['detection_steps_median']:,}"
                  f" (target <= 300), max {figures['detection_steps_max']:,} (target <= 10,000);"
                  f" {figures['steps_per_cpu_second']:,.0f} steps per CPU second")
    print_shrinks(console, figures)
    console.print(f"a default-world seed (over {figures['shape_seeds']}): "
                  f"{figures['steps_per_seed']} kernel steps, {figures['records_per_seed']} "
                  f"trace records, {figures['choices_per_seed']} choices, "
                  f"{figures.get('sql_statements_per_seed', '?')} SQL statements")


def print_shrinks(console: Any, figures: dict[str, Any]) -> None:
    """How small a found bug becomes: per mutant, its first failing seed shrunk."""
    from rich.table import Table

    from sim.textout import fit

    if "shrink" not in figures:
        return
    table = Table(title="handoff shrink of each first failing seed (target: ratio <= 0.1)")
    for column in ("mutant", "seed", "records", "shrunk", "ratio", "runs", "CPU s"):
        table.add_column(column, justify="right")
    for name, row in figures["shrink"].items():
        if row["first_seed"] is None:
            table.add_row(name, "not found", "", "", "", "", "")
            continue
        table.add_row(name, str(row["first_seed"]), f"{row['records_before']:,}",
                      f"{row['records_after']:,}", f"{row['ratio']:.3f}", f"{row['runs']:,}",
                      f"{row['cpu_seconds']:.2f}")
    fit(table, console.width)
    console.print(table)
    console.print(f"shrunk to at most a tenth: {figures['shrink_within_tenth']} of "
                  f"{figures['shrink_rows']} (the others: docs/scenarios.md, \"How far a "
                  f"failure shrinks\"); {figures['shrink_runs']:,} runs, "
                  f"{figures['shrink_cpu_seconds']:.1f} CPU s")
