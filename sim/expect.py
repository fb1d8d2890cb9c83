"""Judging a scenario's run against its expectations, from the trace and the final store."""

from __future__ import annotations

import shlex

from sim.world.core import RunResult

SETTLE_PREFIX = "announce:requester-settle:"


def failures(result: RunResult) -> list[str]:
    """What did not go as the scenario expects; empty when it passed."""
    scenario = result.scenario
    problems: list[str] = []
    found = [v.invariant for v in result.violations]
    for name in scenario.expect.violations:
        if name not in found:
            problems.append(f"expected a violation of {name}, found none")
    for violation in result.violations:
        if violation.invariant not in scenario.expect.violations:
            problems.append(f"{violation.invariant} ({violation.requirement}): "
                            f"{violation.message}")
    missing = unreached(result)
    if missing:
        problems.append(stale(result, missing))
    refusals = sum(1 for r in result.trace if r.kind == "requester.refused")
    if scenario.expect.refusals is not None and refusals != scenario.expect.refusals:
        problems.append(f"{scenario.path}: {refusals} session-control action(s) refused, "
                        f"expected {scenario.expect.refusals}")
    runs = {run.child_id: run for run in result.runs}
    for want in scenario.expect.children:
        where = f"{scenario.path}:{want.line}" if want.line else scenario.path
        run = runs.get(want.child)
        if want.refused_with is not None:
            problems += _refused(result, want.child, want.refused_with, where, run is not None)
            continue
        if want.refused:
            if run is not None:
                problems.append(f"{where}: child {want.child} was spawned, expected a refusal")
            elif not any(r.kind == "spawn.refused" and r.data["child"] == want.child
                         for r in result.trace):
                problems.append(f"{where}: child {want.child} was never refused")
            continue
        if run is None:
            problems.append(f"{where}: child {want.child} was never spawned")
            continue
        accepted = [r for r in result.trace
                    if r.kind == "requester.accept" and r.data["run_id"] == run.run_id]
        # Its text may also come in a batch wake whose key names it (docs/yield.md).
        read = accepted + [r for r in result.trace if r.kind == "requester.accept"
                           and run.run_id in _wake_runs(r.data["key"])]
        if want.delivery is not None and run.delivery_status != want.delivery:
            problems.append(f"{where}: child {want.child}: delivery is {run.delivery_status}, "
                            f"expected {want.delivery}")
        if want.received is not None and len(accepted) != want.received:
            problems.append(f"{where}: child {want.child}: its requester received it "
                            f"{len(accepted)} time(s), expected {want.received}")
        woken = len(read) - len(accepted)
        if want.woken is not None and woken != want.woken:
            problems.append(f"{where}: child {want.child}: {woken} settle wake(s) naming it "
                            f"reached its requester, expected {want.woken}")
        if want.status is not None and run.outcome_status != want.status:
            problems.append(f"{where}: child {want.child}: status {run.outcome_status}, "
                            f"expected {want.status}")
        if want.sent_to is not None:
            sent = sorted({" ".join(p for p in (r.data["channel"], r.data["to"], r.data["thread"])
                                    if p is not None)
                           for r in result.trace
                           if r.kind == "gateway.chunk" and r.data["run_id"] == run.run_id})
            if sent != ([] if want.sent_to == "none" else [want.sent_to]):
                problems.append(f"{where}: child {want.child}: sent to "
                                f"{', '.join(sent) or 'none'}, expected {want.sent_to}")
        readers = {r.actor.removeprefix("requester:") for r in read}
        if want.reader is not None and readers - {want.reader}:
            problems.append(f"{where}: child {want.child}: read by {', '.join(sorted(readers))}"
                            f", expected {want.reader}")
        if want.text is not None and not any(want.text in str(r.data["text"]) for r in read):
            problems.append(f"{where}: child {want.child}: no completion its requester received "
                            f"contains {want.text!r}")
    return problems


def unreached(result: RunResult) -> list[str]:
    """The probes of ``[expect] reaches`` the run never hit, in the file's order."""
    return [name for name in result.scenario.expect.reaches if name not in result.probes]


def stale(result: RunResult, missing: list[str]) -> str:
    """A saved run that no longer reaches the moments it keeps: its replay left its timeline."""
    scenario = result.scenario
    line = scenario.expect.reaches_line
    where = f"{scenario.path}:{line}" if line else scenario.path
    names = ", ".join(missing)
    refresh = ["handoff", "shrink", "--seed", str(scenario.seed),
               *(arg for mutant in scenario.mutants for arg in ("--mutant", mutant)),
               "--save", scenario.path]
    return (f"{where}: expect.reaches: stale: the run never reached {names}. A change to the "
            "world's draws or to the model has moved its replay off the timeline this file "
            f"keeps, so it no longer tests it. Refresh it: {shlex.join(refresh)} (in the world "
            "it was found in, see its description), or re-aim its [replay.choices]")


def _wake_runs(key: str) -> list[str]:
    if not key.startswith(SETTLE_PREFIX):
        return []
    for part in key[len(SETTLE_PREFIX):].split(":"):
        if part.startswith("run-"):
            return part.split(",")
    return []


def _refused(result: RunResult, child: str, wanted: str, where: str, ran: bool) -> list[str]:
    """PRV-4: the child's spawn request was refused, naming ``wanted``, and it never ran."""
    errors = [str(r.data["reason"]) for r in result.trace
              if r.kind == "spawn.refused" and r.data["child"] == child]
    if ran:
        return [f"{where}: child {child} ran; its spawn should have been refused"]
    if not any(wanted in error for error in errors):
        return [f"{where}: child {child}: no refusal names {wanted!r} (refusals: {errors})"]
    return []
