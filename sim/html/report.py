"""HTML pages ``handoff explore`` writes: a shrunk failure's timeline beside its scenario
(``--save-failures DIR``) and the sweep report (``--report FILE.html``).

The report is one static page (no script): the sweep's figures, violations by invariant and by the
fault kinds the failing runs met, the detection figures of the mutants swept, the code probes
(the rare ones first) and each failing seed with its repro and, when saved, its shrunk timeline.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from sim.explore.breaks import BREAKS
from sim.explore.sweeps import CRASH, SeedOutcome, Sweep
from sim.html.timeline import to_html, with_schedule_out
from sim.scenario import Scenario
from sim.world.branch_points import run_with_branch_points

NO_FAULT = "(no fault)"
_STYLE = """body { font: 13px/1.45 system-ui, sans-serif; color: #1d2330; margin: 12px 18px; }
h1 { font-size: 18px; } h2 { font-size: 15px; margin-top: 20px; }
table { border-collapse: collapse; } th, td { border: 1px solid #cbd5e0; padding: 2px 8px; }
th { background: #edf2f7; text-align: left; } td.n { text-align: right; }
td.zero { color: #a0aec0; } .bad { color: #c53030; font-weight: 600; }
code { background: #edf2f7; padding: 1px 4px; user-select: all; }"""


def timeline_path(scenario_path: str) -> str:
    """Where a saved scenario's timeline goes: beside it, ``.html`` for ``.toml``."""
    return str(Path(scenario_path).with_suffix(".html"))


def failure_page(scenario: Scenario, scenario_path: str) -> str:
    """The timeline of a saved (shrunk) scenario, replayed as ``handoff replay --scenario`` does:
    its violations on top, each linked to the records its oracle cites."""
    result, steps = run_with_branch_points(scenario, seed=scenario.seed)
    repro = shlex.join(["handoff", "replay", "--scenario", scenario_path, "--format", "text"])
    summary = (f"{scenario.description.strip()} {len(result.trace)} records, ended "
               f"{result.end_reason} at {result.end_ms} ms").strip()
    schedule = str(Path(scenario_path).with_suffix(".schedule.json"))
    return to_html(result.trace.records, title=f"handoff: {scenario.name}", repro=repro,
                   violations=result.violations, summary=summary, steps=steps,
                   schedule=schedule, save=with_schedule_out(repro, schedule))


def _faults(outcome: SeedOutcome) -> tuple[str, ...]:
    """The fault kinds a seed's run met; a run that raised met none we can name."""
    if any(v.invariant == CRASH[0] for v in outcome.violations):
        return ()
    return outcome.faults or (NO_FAULT,)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, int):
            return f'<td class="n{" zero" if value == 0 else ""}">{value}</td>'
        return f"<td>{value}</td>"  # already HTML
    return ("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
            + "</table>")


def _by_fault_kind(outcomes: Sequence[SeedOutcome]) -> str:
    failing = [o for o in outcomes if o.violations]
    kinds = list(dict.fromkeys(k for o in failing for k in _faults(o)))
    counts: dict[str, dict[str, int]] = {}
    for o in failing:
        for name in dict.fromkeys(v.invariant for v in o.violations):
            row = counts.setdefault(name, dict.fromkeys(kinds, 0))
            for kind in _faults(o):
                row[kind] += 1
    if not counts:
        return "<p>No seed violated an invariant.</p>"
    seeds = {name: sum(1 for o in outcomes if any(v.invariant == name for v in o.violations))
             for name in counts}
    rows = [[f"<b>{escape(name)}</b>", seeds[name], *row.values()] for name, row in counts.items()]
    return ("<p>Failing seeds per invariant, and how many of them met each fault kind (a seed "
            "counts once per kind it met).</p>"
            + _table(["invariant", "failing seeds", *kinds], rows))


def _rate(n: int, of: int) -> str:
    return f"{n} ({n / of:.0%})" if of else "0"


def _fault_rates(outcomes: Sequence[SeedOutcome], fault_seeds: dict[str, int],
                 total: int) -> str:
    """Each fault kind's rate among passing seeds beside its rate among failing ones: a kind
    far more common among the failing is a suspect. A sweep keeps only its failing seeds'
    outcomes: ``fault_seeds`` counts, for every seed run (``total``), those that met each kind,
    so the passing seeds' counts are the rest."""
    failing = [o for o in outcomes if o.violations]
    passing = total - len(failing)
    kinds = list(dict.fromkeys([*fault_seeds, *(k for o in failing for k in _faults(o))]))
    if not kinds:
        return "<p>No run met a fault.</p>"
    met = {}
    for kind in kinds:
        in_failing = sum(kind in _faults(o) for o in failing)
        met[kind] = (fault_seeds.get(kind, in_failing) - in_failing, in_failing)

    def lift(kind: str) -> float:
        p, f = met[kind]
        return (f / len(failing) if failing else 0.0) - (p / passing if passing else 0.0)

    rows = [[escape(kind), _rate(met[kind][0], passing), _rate(met[kind][1], len(failing)),
             f"{lift(kind):+.0%}"] for kind in sorted(kinds, key=lambda k: (-lift(k), k))]
    return (f"<p>How often each fault kind came up in the {passing} passing and the "
            f"{len(failing)} failing seeds; the kinds most over-represented among the failing "
            "first.</p>"
            + _table(["fault kind", "passing seeds", "failing seeds", "failing minus passing"],
                     rows))


def _detection(mutants: Sequence[str], outcomes: Sequence[SeedOutcome], total: int) -> str:
    failing = [o for o in outcomes if o.violations]
    rows = []
    for name in mutants:
        expected = BREAKS[name].invariant
        by_expected = [o.seed for o in outcomes
                       if any(v.invariant == expected for v in o.violations)]
        rows.append([f"<b>{escape(name)}</b>", escape(BREAKS[name].requirement), escape(expected),
                     len(by_expected), f"{len(by_expected) / max(1, total):.1%}",
                     str(by_expected[0]) if by_expected else "none"])
    first = str(failing[0].seed) if failing else "none"
    return (f"<p>{len(failing)} of {total} seeds "
            f"({len(failing) / max(1, total):.1%}) fail some invariant; the first is seed "
            f"{first}.</p>"
            + _table(["mutant", "breaks", "expected finder", "seeds it flags", "detection rate",
                      "first seed"], rows))


def _probes(probes: dict[str, int], seeds: int) -> str:
    ordered = sorted(probes.items(), key=lambda item: (item[1], item[0]))  # rare first
    rows = [[escape(name), n, f"{n / max(1, seeds):.1%}"] for name, n in ordered]
    never = sum(1 for n in probes.values() if n == 0)
    return (f"<p>{len(probes) - never} of {len(probes)} probes hit; rarest first.</p>"
            + _table(["probe", "seeds", "share"], rows))


def _failing(violations: Sequence[dict[str, Any]], saved: Sequence[dict[str, Any]] | None,
             originals: dict[int, str], report_dir: Path) -> str:
    """One row per distinct (invariant, message): how many seeds gave it and which, the first
    one's repro, its shrunk timeline when saved and its unshrunk run's page."""
    pages = {(s["seed"], s["invariant"]): timeline_path(s["path"]) for s in saved or ()}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for v in violations:
        group = groups.setdefault((v["invariant"], v["message"]), [])
        if all(other["seed"] != v["seed"] for other in group):
            group.append(v)
    if not groups:
        return "<p>None.</p>"

    def href(path: str, text: str) -> str:
        return f'<a href="{escape(os.path.relpath(path, report_dir))}">{text}</a>'

    rows = []
    for (invariant, message), group in groups.items():
        first = group[0]
        seeds = ", ".join(str(v["seed"]) for v in group[:12])
        shrunk = next((pages[(v["seed"], invariant)] for v in group
                       if (v["seed"], invariant) in pages), None)
        links = [href(shrunk, "shrunk timeline") if shrunk else "",
                 href(originals[first["seed"]], f"seed {first['seed']}'s run")
                 if first["seed"] in originals else ""]
        rows.append([len(group), seeds + (f", … ({len(group) - 12} more)" if len(group) > 12
                                          else ""),
                     f"<b>{escape(invariant)}</b> ({escape(first['requirement'])})",
                     escape(message), f"<code>{escape(first['repro'])}</code>",
                     " ".join(link for link in links if link)])
    return ("<p>Identical messages grouped: how many seeds gave each, the first one's repro, "
            "its shrunk timeline (with --save-failures) and the page of its unshrunk run.</p>"
            + _table(["seeds", "which", "invariant", "message", "repro", "pages"], rows))


# Unshrunk runs' pages the report writes beside itself, at most this many seeds' (each is a run).
MAX_ORIGINAL_PAGES = 20


def original_pages(spec: Sweep, violations: Sequence[dict[str, Any]],
                   report_path: str) -> dict[int, str]:
    """The pages of the first failing seeds' runs as the sweep ran them (before shrinking), in
    a folder beside the report (``sweep.html``: ``sweep-seeds/seed-N.html``): seed -> path."""
    folder = Path(report_path).with_name(Path(report_path).stem + "-seeds")
    seeds = list(dict.fromkeys(v["seed"] for v in violations))[:MAX_ORIGINAL_PAGES]
    repros = {v["seed"]: v["repro"] for v in reversed(violations)}
    written: dict[int, str] = {}
    for seed in seeds:
        try:
            result, steps = run_with_branch_points(
                spec.scenario, seed=seed, strategy=spec.strategy, mutants=spec.mutants,
                fault_kinds=spec.fault_kinds, replay=spec.branch, replay_steps=spec.branch_at)
        except Exception:  # the model raised: the report gives the crash's repro instead
            continue
        folder.mkdir(exist_ok=True)
        path, schedule = folder / f"seed-{seed}.html", str(folder / f"seed-{seed}.schedule.json")
        path.write_text(to_html(result.trace.records, title=f"handoff: seed {seed}",
                                repro=repros[seed], violations=result.violations,
                                summary=f"seed {seed}: {len(result.trace)} records, ended "
                                        f"{result.end_reason} at {result.end_ms} ms",
                                steps=steps, schedule=schedule,
                                save=with_schedule_out(repros[seed], schedule)),
                        encoding="utf-8")
        written[seed] = str(path)
    return written


def report_page(*, title: str, spec: Sweep, outcomes: Sequence[SeedOutcome],
                violations: Sequence[dict[str, Any]], probes: dict[str, int], digest: str,
                saved: Sequence[dict[str, Any]] | None, report_path: str,
                seeds: int | None = None, fault_seeds: dict[str, int] | None = None,
                originals: dict[int, str] | None = None) -> str:
    """The sweep report; ``violations`` are explore's rows (seed, invariant, message, repro);
    ``originals`` the unshrunk runs' pages (:func:`original_pages`). ``outcomes`` may hold only
    the failing seeds' (a sweep keeps no more), ``seeds`` then saying how many seeds ran and
    ``fault_seeds`` how many of them met each fault kind."""
    total = len(outcomes) if seeds is None else seeds
    if fault_seeds is None:
        fault_seeds = {}
        for o in outcomes:
            for kind in _faults(o):
                fault_seeds[kind] = fault_seeds.get(kind, 0) + 1
    failing = sorted({v["seed"] for v in violations})
    mutants = tuple(spec.mutants or ())
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p>{total} seeds, {len(failing)} failing, {len(violations)} violations; "
             f"sweep digest <code>{escape(digest)}</code></p>"]
    if mutants:
        parts += ["<h2>Detection</h2>", _detection(mutants, outcomes, total)]
    parts += ["<h2>Violations by invariant and fault kind</h2>", _by_fault_kind(outcomes),
              "<h2>Fault kinds among passing and failing seeds</h2>",
              _fault_rates(outcomes, fault_seeds, total),
              "<h2>Failing seeds</h2>",
              _failing(violations, saved, originals or {}, Path(report_path).resolve().parent),
              "<h2>Probe hits</h2>", _probes(probes, total)]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
