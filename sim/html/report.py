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
from concurrent.futures import ProcessPoolExecutor
from html import escape
from pathlib import Path
from typing import Any

from actors.mutants import BREAKS
from sim.explore.sweeps import SERIAL_BELOW, SeedOutcome, Sweep
from sim.html.timeline import to_html
from sim.scenario import Scenario
from sim.world import core as world

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
    result = world.run(scenario, seed=scenario.seed)
    repro = shlex.join(["handoff", "replay", "--scenario", scenario_path, "--format", "text"])
    summary = (f"{scenario.description.strip()} {len(result.trace)} records, ended "
               f"{result.end_reason} at {result.end_ms} ms").strip()
    return to_html(result.trace.records, title=f"handoff: {scenario.name}", repro=repro,
                   violations=result.violations, summary=summary)


def fault_kinds_of(spec: Sweep, seed: int) -> tuple[str, ...]:
    """The fault kinds a seed's run met (its ``fault`` records, first-seen order); re-run, since
    a sweep keeps only each seed's summary. A run that raises met none we can name."""
    try:
        result = world.run(spec.scenario, seed=seed, strategy=spec.strategy,
                           mutants=spec.mutants, fault_kinds=spec.fault_kinds,
                           replay=spec.branch, replay_steps=spec.branch_at)
    except Exception:  # the model raised: the sweep already reports it as this seed's crash
        return ()
    kinds = dict.fromkeys(str(r.data.get("kind")) for r in result.trace if r.kind == "fault")
    return tuple(kinds) or (NO_FAULT,)


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, int):
            return f'<td class="n{" zero" if value == 0 else ""}">{value}</td>'
        return f"<td>{value}</td>"  # already HTML
    return ("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
            + "</table>")


def _fault_kinds(spec: Sweep, seeds: Sequence[int], jobs: int) -> dict[int, tuple[str, ...]]:
    """Each failing seed's fault kinds; re-running them over ``jobs`` processes when there are
    enough to pay for starting them (each run is deterministic, so jobs change nothing)."""
    if jobs <= 1 or len(seeds) < SERIAL_BELOW:
        return {seed: fault_kinds_of(spec, seed) for seed in seeds}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return dict(zip(seeds, pool.map(fault_kinds_of, [spec] * len(seeds), seeds,
                                        chunksize=8), strict=True))


def _by_fault_kind(spec: Sweep, outcomes: Sequence[SeedOutcome], jobs: int) -> str:
    per_seed = _fault_kinds(spec, [o.seed for o in outcomes if o.violations], jobs)
    kinds = list(dict.fromkeys(k for ks in per_seed.values() for k in ks))
    counts: dict[str, dict[str, int]] = {}
    for o in outcomes:
        for name in dict.fromkeys(v.invariant for v in o.violations):
            row = counts.setdefault(name, dict.fromkeys(kinds, 0))
            for kind in per_seed[o.seed]:
                row[kind] += 1
    if not counts:
        return "<p>No seed violated an invariant.</p>"
    seeds = {name: sum(1 for o in outcomes if any(v.invariant == name for v in o.violations))
             for name in counts}
    rows = [[f"<b>{escape(name)}</b>", seeds[name], *row.values()] for name, row in counts.items()]
    return ("<p>Failing seeds per invariant, and how many of them met each fault kind (a seed "
            "counts once per kind it met).</p>"
            + _table(["invariant", "failing seeds", *kinds], rows))


def _detection(mutants: Sequence[str], outcomes: Sequence[SeedOutcome]) -> str:
    failing = [o for o in outcomes if o.violations]
    rows = []
    for name in mutants:
        expected = BREAKS[name].invariant
        by_expected = [o.seed for o in outcomes
                       if any(v.invariant == expected for v in o.violations)]
        rows.append([f"<b>{escape(name)}</b>", escape(BREAKS[name].requirement), escape(expected),
                     len(by_expected), f"{len(by_expected) / max(1, len(outcomes)):.1%}",
                     str(by_expected[0]) if by_expected else "none"])
    first = str(failing[0].seed) if failing else "none"
    return (f"<p>{len(failing)} of {len(outcomes)} seeds "
            f"({len(failing) / max(1, len(outcomes)):.1%}) fail some invariant; the first is seed "
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
             report_dir: Path) -> str:
    pages = {(s["seed"], s["invariant"]): timeline_path(s["path"]) for s in saved or ()}
    rows = []
    seen: set[tuple[int, str]] = set()
    for v in violations:
        key = (v["seed"], v["invariant"])
        if key in seen:  # one row per (seed, invariant): its first message
            continue
        seen.add(key)
        page = pages.get(key)
        link = (f'<a href="{escape(os.path.relpath(page, report_dir))}">shrunk timeline</a>'
                if page is not None else "")
        rows.append([str(v["seed"]), f"<b>{escape(v['invariant'])}</b> "
                     f"({escape(v['requirement'])})", escape(v["message"]),
                     f"<code>{escape(v['repro'])}</code>", link])
    if not rows:
        return "<p>None.</p>"
    return _table(["seed", "invariant", "message", "repro", "timeline"], rows)


def report_page(*, title: str, spec: Sweep, outcomes: Sequence[SeedOutcome],
                violations: Sequence[dict[str, Any]], probes: dict[str, int], digest: str,
                saved: Sequence[dict[str, Any]] | None, report_path: str, jobs: int = 1) -> str:
    """The sweep report; ``violations`` are explore's rows (seed, invariant, message, repro)."""
    failing = sorted({v["seed"] for v in violations})
    mutants = tuple(spec.mutants or ())
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p>{len(outcomes)} seeds, {len(failing)} failing, {len(violations)} violations; "
             f"sweep digest <code>{escape(digest)}</code></p>"]
    if mutants:
        parts += ["<h2>Detection</h2>", _detection(mutants, outcomes)]
    parts += ["<h2>Violations by invariant and fault kind</h2>",
              _by_fault_kind(spec, outcomes, jobs),
              "<h2>Failing seeds</h2>",
              _failing(violations, saved, Path(report_path).resolve().parent),
              "<h2>Probe hits</h2>", _probes(probes, len(outcomes))]
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
