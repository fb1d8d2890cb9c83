"""Expected time to find a bug (SPEC §5), measured over many seeds instead of one.

``sim/bench/detect.py``'s ``detection`` is one geometric sample per mutant: the steps up to the
*first* failing seed of plain ``explore --mutant NAME``. It swings by seed luck (a mutant whose
path half the seeds take can still first fail at seed 9), so tuning the default world until
seeds 1..2 happen to hit would be gaming it. This measures the figure a world change should move
instead: for each built-in mutant over default-world seeds 1..N, which seeds fail and each seed's
kernel steps, and from them the **expected steps to a first violation** (total steps over the N
seeds / failing seeds: steps per hit, what a geometric first-hit costs on average), their median
and max over the catalogue. It also records what each seed drew (the ``world.start`` record's
features, child count and fault kinds with rates, the spawns the run made, how it ended and
its probes); ``by_draw`` splits the expected median by draw (the seeds with a feature or fault
kind on against those with it off), to see which draws buy hits per step and which buy only
steps, and ``what_if`` re-weights the seeds to estimate other shares.

``python -m sim.bench.hits --seeds 200 --out FILE.json`` runs it (about 12,000 runs for the
catalogue: some 15 minutes on one core; progress on stderr, and FILE.json rewritten after each
mutant); ``--load FILE.json --compare OLD.json`` prints a saved one beside another. Counts only:
the figures are the same on any machine.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import Any

# A mutant with no failing seed in the sample: its expected steps are unbounded (reported as
# None in JSON, and counted as infinite in the median and max).
NOT_HIT = math.inf


def seed_draws(seeds: Sequence[int], scenario: Any = None) -> dict[int, dict[str, Any]]:
    """What each default-world seed drew (unmutated run): its steps and how and when it ended,
    the ``world.start`` record's features, child count and fault rates, how many children it
    spawned and the code probes it hit (actors/probes.py: a share change must keep the rare
    ones reached)."""
    from sim.bench.detect import default_world
    from sim.world import core as world

    scenario = scenario or default_world()
    draws: dict[int, dict[str, Any]] = {}
    for seed in seeds:
        result = world.run(scenario, seed=seed)
        start = next(record.data for record in result.trace if record.kind == "world.start")
        draws[seed] = {"steps": result.steps, "end": str(result.end_reason),
                       "end_minutes": result.end_ms // 60_000,
                       "features": list(start["features"]["on"]),
                       "children": start["features"]["children"],
                       "faults": dict(start["faults"]),
                       "spawns": sum(1 for record in result.trace
                                     if record.kind == "world.spawn"),
                       "probes": list(result.probes)}
    return draws


def mutant_seeds(mutant: str, seeds: Sequence[int], scenario: Any = None) -> dict[str, Any]:
    """One mutant over ``seeds`` of plain ``explore --mutant NAME``: each seed's steps, the
    failing seeds and the first invariant each failed."""
    from sim.bench.detect import default_world
    from sim.explore.sweeps import Sweep, run_seed

    spec = Sweep(scenario or default_world(), None, (mutant,), None)
    steps: list[int] = []
    failing: dict[int, str] = {}
    for seed in seeds:
        outcome = run_seed(spec, seed)
        steps.append(outcome.steps)
        if outcome.violations:
            failing[seed] = outcome.violations[0].invariant
    return {"steps": steps, "failing": failing}


def expected_steps(row: dict[str, Any], only: Callable[[int], bool] | None = None,
                   seeds: Sequence[int] = ()) -> float:
    """Steps per failing seed (``only``: over the seeds it keeps; ``seeds`` names the seeds
    ``row['steps']`` is for)."""
    total = hits = 0
    for seed, steps in zip(seeds, row["steps"], strict=True):
        if only is None or only(seed):
            total += steps
            hits += seed in row["failing"] or str(seed) in row["failing"]
    return total / hits if hits else NOT_HIT


def summary(table: dict[str, dict[str, Any]], seeds: Sequence[int],
            only: Callable[[int], bool] | None = None) -> dict[str, Any]:
    """Per mutant expected steps, and their median and max over the catalogue."""
    expected = {name: expected_steps(row, only, seeds) for name, row in table.items()}
    values = list(expected.values())
    return {"expected": expected,
            "median": statistics.median(values) if values else 0.0,
            "max": max(values, default=0.0),
            "within_300": sum(1 for value in values if value <= 300),
            "not_hit": sorted(name for name, value in expected.items() if value == NOT_HIT)}


def by_draw(table: dict[str, dict[str, Any]], draws: dict[int, dict[str, Any]],
            seeds: Sequence[int]) -> dict[str, dict[str, Any]]:
    """For each feature, fault kind and child count: the expected median over the seeds with
    it against the seeds without it, the seeds on each side and their mean steps. A draw whose
    "on" side has the lower median buys hits per step; one whose "off" side does buys steps."""
    def key(seed: int) -> dict[str, Any]:
        return draws[seed] if seed in draws else draws[str(seed)]  # type: ignore[index]

    def has(field: str, name: str) -> Callable[[int], bool]:
        return lambda seed: name in key(seed)[field]

    features = sorted({f for d in draws.values() for f in d["features"]})
    kinds = sorted({k for d in draws.values() for k in d["faults"]})
    top = max((d["children"] for d in draws.values()), default=0)
    names: list[tuple[str, Callable[[int], bool]]] = [
        *((f"feature:{f}", has("features", f)) for f in features),
        *((f"fault:{k}", has("faults", k)) for k in kinds),
        ("children:all", lambda seed: bool(key(seed)["children"] == top))]
    out: dict[str, dict[str, Any]] = {}
    for name, pred in names:
        on = [s for s in seeds if pred(s)]
        off = [s for s in seeds if not pred(s)]
        out[name] = {
            "seeds_on": len(on), "seeds_off": len(off),
            "median_on": summary(table, seeds, pred)["median"],
            "median_off": summary(table, seeds, _negated(pred))["median"],
            "mean_steps_on": round(statistics.fmean(key(s)["steps"] for s in on), 1) if on
            else 0.0,
            "mean_steps_off": round(statistics.fmean(key(s)["steps"] for s in off), 1) if off
            else 0.0}
    return out


# A fault kind is on in half the runs, each rate of its four with a quarter (sim/faults/plan.py,
# which this package does not import).
KIND_SHARE = 0.5
RATES_PER_KIND = 4


def what_if(data: dict[str, Any], feature_share: dict[str, float] | None = None,
            kind_share: dict[str, float] | None = None,
            rates: dict[str, dict[float, float]] | None = None,
            children: dict[int, float] | None = None) -> dict[str, Any]:
    """The summary the seeds would give if the world drew with other shares, by reweighting
    the measured seeds (importance sampling: each draw is on a stream of its own, so a seed's
    run given its draws does not depend on the shares that drew them). ``feature_share`` and
    ``kind_share``: name -> share of runs with it on; ``rates``: kind -> {rate: share}
    (rates left out are never drawn); ``children``: count -> share. Draws not named keep
    their shares. An estimate: check a chosen change by measuring it."""
    from sim.world.draws.features import ALL_CHILDREN_SHARE, FEATURE_SHARE

    draws, seeds = data["draws"], data["seeds"]
    top = max(d["children"] for d in draws.values())
    old_children = {n: (1 - ALL_CHILDREN_SHARE) / top for n in range(1, top + 1)}
    old_children[top] += ALL_CHILDREN_SHARE

    def weight(seed: int) -> float:
        draw = draws[seed]
        w = 1.0
        for name, share in (feature_share or {}).items():
            on = name in draw["features"]
            w *= share / FEATURE_SHARE if on else (1 - share) / (1 - FEATURE_SHARE)
        for kind, share in (kind_share or {}).items():
            on = kind in draw["faults"]
            w *= share / KIND_SHARE if on else (1 - share) / (1 - KIND_SHARE)
        for kind, shares in (rates or {}).items():
            rate = draw["faults"].get(kind)
            if rate is not None:
                w *= shares.get(rate, 0.0) * RATES_PER_KIND
        if children is not None:
            n = draw["children"]
            w *= children.get(n, 0.0) / old_children[n]
        return w

    weights = {seed: weight(seed) for seed in seeds}
    expected: dict[str, float] = {}
    for name, row in data["table"].items():
        total = hits = 0.0
        for seed, steps in zip(seeds, row["steps"], strict=True):
            total += weights[seed] * steps
            hits += weights[seed] * (seed in row["failing"])
        expected[name] = total / hits if hits else NOT_HIT
    values = list(expected.values())
    mean = sum(weights[s] * draws[s]["steps"] for s in seeds) / max(1e-9, sum(weights.values()))
    return {"expected": expected, "median": statistics.median(values),
            "max": max(values), "within_300": sum(1 for v in values if v <= 300),
            "steps_per_seed": mean,
            # How many seeds the estimate rests on (Kish's effective sample size).
            "effective_seeds": sum(weights.values()) ** 2 / max(
                1e-9, sum(w * w for w in weights.values()))}


def _negated(pred: Callable[[int], bool]) -> Callable[[int], bool]:
    return lambda seed: not pred(seed)


def measure(seeds: Sequence[int], mutants: Sequence[str] | None = None,
            progress: Callable[[str], None] | None = None,
            partial: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The whole measurement: draws per seed, every mutant over every seed, the summary
    (``partial`` gets the measurement so far after each mutant: a long run can be read, and
    is not lost, before it ends)."""
    from actors.mutant_catalogue import MUTANTS
    from sim.bench.detect import default_world

    scenario = default_world()
    names = list(MUTANTS) if mutants is None else list(mutants)
    draws = seed_draws(seeds, scenario)
    table: dict[str, dict[str, Any]] = {}
    for n, name in enumerate(names, 1):
        table[name] = mutant_seeds(name, seeds, scenario)
        if progress is not None:
            row = table[name]
            progress(f"hits {n}/{len(names)}: {name}: {len(row['failing'])} of {len(seeds)} "
                     f"seeds fail, {_shown(expected_steps(row, None, seeds))} steps per hit")
        if partial is not None:
            partial({"seeds": list(seeds), "draws": draws, "table": table})
    return {"seeds": list(seeds), "draws": draws, "table": table,
            "summary": summary(table, seeds)}


def _shown(value: float) -> str:
    return "not hit" if value == NOT_HIT else f"{value:,.0f}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return None if value == NOT_HIT else round(value, 1)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def load(path: str) -> dict[str, Any]:
    """A saved measurement, with its seed keys back to integers."""
    with open(path, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    data["draws"] = {int(seed): draw for seed, draw in data["draws"].items()}
    for row in data["table"].values():
        row["failing"] = {int(seed): inv for seed, inv in row["failing"].items()}
    return data


def report(data: dict[str, Any], other: dict[str, Any] | None = None) -> str:
    """Per mutant (slowest first) the failing seeds and expected steps, then the summary and
    the split by draw; with ``other``, its figures beside."""
    seeds = data["seeds"]
    mine = summary(data["table"], seeds)
    theirs = summary(other["table"], other["seeds"]) if other else None
    lines = [f"mutant | failing of {len(seeds)} | steps per hit"
             + (f" | before (failing of {len(other['seeds'])} / steps per hit)" if other else "")]
    for name in sorted(mine["expected"], key=lambda n: -mine["expected"][n]):
        row = data["table"][name]
        line = f"{name} | {len(row['failing'])} | {_shown(mine['expected'][name])}"
        if other and theirs and name in other["table"]:
            line += (f" | {len(other['table'][name]['failing'])} / "
                     f"{_shown(theirs['expected'][name])}")
        lines.append(line)
    mean = statistics.fmean(d["steps"] for d in data["draws"].values())
    lines.append(f"expected median {_shown(mine['median'])}, max {_shown(mine['max'])}, "
                 f"{mine['within_300']} of {len(mine['expected'])} within 300, "
                 f"steps per seed {mean:.1f}, not hit: {', '.join(mine['not_hit']) or 'none'}")
    if other and theirs:
        lines.append(f"before: median {_shown(theirs['median'])}, max {_shown(theirs['max'])}, "
                     f"{theirs['within_300']} within 300")
    lines.append("draw | seeds on/off | median on/off | mean steps on/off")
    for name, row in by_draw(data["table"], data["draws"], seeds).items():
        lines.append(f"{name} | {row['seeds_on']}/{row['seeds_off']} | "
                     f"{_shown(row['median_on'])}/{_shown(row['median_off'])} | "
                     f"{row['mean_steps_on']}/{row['mean_steps_off']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.bench.hits", description=__doc__
                                     and __doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200, help="seeds 1..N (default 200)")
    parser.add_argument("--mutant", action="append", help="only these mutants (repeatable)")
    parser.add_argument("--out", help="write the measurement as JSON here")
    parser.add_argument("--load", help="report a saved measurement instead of running")
    parser.add_argument("--compare", help="a saved measurement to show beside")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds: must be at least 1")
    if args.load:
        data = load(args.load)
    else:
        def save(data: dict[str, Any]) -> None:
            if args.out:
                with open(args.out, "w", encoding="utf-8") as handle:
                    json.dump(_jsonable(data), handle, separators=(",", ":"))
                    handle.write("\n")

        data = measure(range(1, args.seeds + 1), args.mutant,
                       lambda line: print(line, file=sys.stderr, flush=True), save)
        data["seeds"] = list(data["seeds"])
        save(data)
    print(report(data, load(args.compare) if args.compare else None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
