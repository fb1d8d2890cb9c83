"""PRV invariants: private parent completion (``completionTarget: "parent"``), judged from what was
asked and what an outsider saw.

Read from the trace alone: each spawn request with its completion target and options
(``world.spawn``), whether ``sessions_spawn`` refused it (``spawn.refused``) or started a run
(``spawn``), what each channel's user received (``gateway.chunk``), what the gateway was handed
(``gateway.send``, with a digest of the text the session would read), what entered the
requester's transcript (``requester.accept``), the turn script the harness played (``world.turn``,
``world.turn_end``, ``world.lifecycle``: each turn's start and end, resets and deletes), when each
session took a reset or delete (``requester.lifecycle``) and the registry's give-ups
(``delivery.give_up``). The rules are restated from SPEC PRV-1..8 and reference §c10, never
taken from the model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from sim.invariants.base import Invariant, Violation
from sim.invariants.index import of_kinds, shared
from sim.invariants.observations import Asked, asked_runs, rejection_class, stats_lines
from sim.trace import Record

PARENT = "parent"
WINDOW_MS = 30 * 60_000  # a released private result's delivery window (reference §c9)
# What a refusal must name for each forbidden option (the reference's spelling, §c10), and
# the option's value that is forbidden together with completionTarget "parent".
_FORBIDDEN: tuple[tuple[str, str, object], ...] = (
    ("runtime", "acp", "acp"),
    ("collect", "collect", True),
    ("visible", "visible", True),
    ("thread", "thread", True),
    ("mode", "session", "session"),
)


def is_private(run: Asked | None) -> bool:
    return run is not None and run.request.data.get("completion_target") == PARENT


def private_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    """The runs asked for with completionTarget "parent", by run id (computed once per trace:
    read, never change)."""
    return shared(trace, "private.runs", _private_runs)


def _private_runs(trace: Sequence[Record]) -> dict[str, Asked]:
    return {run_id: run for run_id, run in asked_runs(trace).items() if is_private(run)}


def refusal_wanted(request: Mapping[str, Any]) -> list[str]:
    """What a spawn request combines with completionTarget that sessions_spawn must refuse (the
    words its refusal must name); [] when it must be accepted (PRV-4)."""
    target = request.get("completion_target")
    if target is None:
        return []  # private completion does not change the default completion mode
    if target != PARENT:
        return [str(target)]
    options = request.get("options") or {}
    wanted = [word for option, word, value in _FORBIDDEN if options.get(option) == value]
    if not request["required"]:
        wanted.append("expectsCompletionMessage")
    return wanted


def spawn_refusals(trace: Sequence[Record]) -> list[Violation]:
    """PRV-4: a request combining completionTarget "parent" with a forbidden option (or naming
    another target) is refused before dispatch, by an error naming each forbidden option; no
    other request is refused for its completion options (a refusal for the spawn limits is
    spawn-limits' to judge)."""
    waiting: dict[tuple[str, str], list[Record]] = {}
    violations = []
    for r in of_kinds(trace, ("world.spawn", "spawn", "spawn.refused")):
        if r.kind == "world.spawn":
            waiting.setdefault((r.data["actor"], r.data["child"]), []).append(r)
            continue
        if r.kind not in ("spawn", "spawn.refused"):
            continue
        requests = waiting.get((r.actor, r.data["child"]))
        if not requests:
            continue
        request = requests.pop(0)
        wanted = refusal_wanted(request.data)
        child = request.data["child"]
        if r.kind == "spawn" and wanted:
            violations.append(Violation(
                "spawn-refusals", "PRV-4",
                f"{child} was spawned with completionTarget "
                f"{request.data['completion_target']!r} combined with {', '.join(wanted)}, yet "
                f"sessions_spawn started {r.data['run_id']} instead of refusing it",
                (request.seq, r.seq)))
        elif r.kind == "spawn.refused" and not wanted and "completionTarget" in r.data["reason"]:
            # A refusal for the spawn limits (reference §c15) is spawn-limits' to judge.
            violations.append(Violation(
                "spawn-refusals", "PRV-4",
                f"{child}'s spawn request was refused ({r.data['reason']!r}) though it asks "
                "for nothing forbidden", (request.seq, r.seq)))
        elif r.kind == "spawn.refused" and wanted:
            missing = [word for word in wanted if word not in r.data["reason"]]
            if missing:
                violations.append(Violation(
                    "spawn-refusals", "PRV-4",
                    f"{child}'s refusal {r.data['reason']!r} does not name {', '.join(missing)}",
                    (request.seq, r.seq)))
    return violations


def private_never_to_channel(trace: Sequence[Record]) -> list[Violation]:
    """PRV-1: nothing of a private run reaches a channel automatically: no chunk of its hand-off
    (by run or by any key it was handed to the gateway under)."""
    private = private_runs(trace)
    keys: dict[str, str] = {}
    violations = []
    for r in of_kinds(trace, ("gateway.send", "gateway.chunk")):
        if r.kind == "gateway.send" and r.data["run_id"] in private:
            keys[r.data["key"]] = r.data["run_id"]
        elif r.kind == "gateway.chunk":
            run_id = r.data["run_id"] if r.data["run_id"] in private else keys.get(r.data["key"])
            if run_id is not None:
                violations.append(Violation(
                    "private-never-to-channel", "PRV-1",
                    f"{run_id} was spawned with completionTarget \"parent\", yet chunk "
                    f"{r.data['index'] + 1} of its hand-off reached channel {r.data['channel']}",
                    (private[run_id].request.seq, r.seq)))
    return violations


def private_handoff_stable(trace: Sequence[Record]) -> list[Violation]:
    """PRV-8: a private hand-off leaves out the changing usage statistics (no stats line), and
    every retry of it hands the session exactly the input of the first (unless a carried run's
    producer corrected its result in between, ``child.correction``: that is new input)."""
    private = private_runs(trace)
    first: dict[tuple[str, tuple[int, ...]], Record] = {}
    receipts: dict[str, int] = {}  # run -> receipts its producer wrote so far (DEL-12)
    violations = []

    def carries_private(r: Record) -> str | None:
        """The private run a hand-off (its own, or a batch wake naming it) carries, if any."""
        return next((run for run in carried_runs(r.data["key"]) if run in private), None)

    for r in of_kinds(trace, ("child.end", "child.correction", "gateway.send",
                              "requester.accept")):
        if r.kind in ("child.end", "child.correction"):
            receipts[r.data["run_id"]] = receipts.get(r.data["run_id"], 0) + 1
        elif r.kind == "gateway.send" and carries_private(r) is not None:
            # A producer's correction since an earlier send is a new result, not a retry: a
            # batch wake carries each member's newest receipt (docs/yield.md).
            produced = tuple(receipts.get(run, 0) for run in carried_runs(r.data["key"]))
            earlier = first.setdefault((r.data["key"], produced), r)
            if earlier.data["text_sha256"] != r.data["text_sha256"]:
                violations.append(Violation(
                    "private-handoff-stable", "PRV-8",
                    f"{r.data['run_id']}'s private hand-off {r.data['key']} was retried at "
                    f"{r.t_ms} ms with other input than at {earlier.t_ms} ms",
                    (earlier.seq, r.seq)))
        elif r.kind == "requester.accept" and (run_id := carries_private(r)) is not None:
            stats = [line for line in stats_lines(r.data["text"])
                     if "tokens " in line or "runtime " in line]
            if stats:
                violations.append(Violation(
                    "private-handoff-stable", "PRV-8",
                    f"{run_id}'s private hand-off carries usage statistics: "
                    f"{stats[0][:120]!r}", (private[run_id].request.seq, r.seq)))
    return violations


# -- the spawning turn and the requester incarnation (the harness's turn script) ------------------

PER_CHILD_KEY = "announce:v1:"
_RUN_LIST = re.compile(r"^run-\d+(,run-\d+)*$")


# Asked about each hand-off key by several oracles, a regular-expression match per part each time.
@functools.lru_cache(maxsize=4096)
def carried_runs(key: str) -> tuple[str, ...]:
    """The run ids whose results a hand-off key carries, as an outside reader of the key sees
    them: ``announce:v1:<childSessionKey>:<runId>[:g<n>]`` carries one (a later generation's
    key has the suffix, DEL-12), a batch wake
    ``announce:requester-settle:<agent>:<session>:<sorted run ids>[:yield-n][:retry-n]`` its
    members (reference §a)."""
    parts = key.split(":")
    runs: list[str] = []
    for part in parts:
        if _RUN_LIST.match(part):
            runs += part.split(",")
    return tuple(runs)


@attrs.frozen
class _Turn:
    session: str
    turn: str
    incarnation: int
    ended_ms: int | None = None
    how: str | None = None  # finish | yield


@attrs.frozen
class Release:
    """What became of a finished private result, from the harness's turn script: ``released``
    (``at``: the normal finish of its spawning turn, or its own end if later, or just its end
    outside any turn), ``yielded`` (its turn yielded at ``at``: the parent gets it back once it
    settles), ``closed`` (the session was reset or deleted at ``at``, before any release), or
    ``retained`` (its turn is still open when the world ends: nothing is owed yet)."""

    how: str
    at: int | None
    # The first reset or delete of its requester after the spawn, if any: from then on the
    # result may rightly be closed instead of handed back (PRV-3).
    reset_at: int | None = None

    def due_from(self, ended_ms: int) -> int | None:
        """From when a hand-off (or, once closed, nothing) is owed; None while retained."""
        return None if self.at is None else max(self.at, ended_ms)


def releases(trace: Sequence[Record]) -> dict[str, Release]:
    """Each ended private run's :class:`Release` (computed once per trace: read, never
    change)."""
    return shared(trace, "private.releases", _releases)


def _releases(trace: Sequence[Record]) -> dict[str, Release]:
    private = private_runs(trace)
    turns = _turns(trace)
    ends: dict[str, int] = {}
    resets: dict[str, list[int]] = {}
    for r in of_kinds(trace, ("child.end", "world.lifecycle")):
        if r.kind == "child.end":
            ends[r.data["run_id"]] = r.t_ms
        elif r.kind == "world.lifecycle":
            resets.setdefault(r.data["session"], []).append(r.t_ms)
    found: dict[str, Release] = {}
    for run_id, run in private.items():
        end = ends.get(run_id)
        if end is None:
            continue
        request = run.request.data
        turn = turns.get((request["requester"], request.get("turn"), request.get("incarnation")))
        if request.get("turn") is None or turn is None:
            release = Release("released", end)
        elif turn.ended_ms is None:
            release = Release("retained", None)
        elif turn.how == "yield":
            release = Release("yielded", turn.ended_ms)
        else:
            release = Release("released", max(end, turn.ended_ms))
        reset = next((t for t in resets.get(request["requester"], [])
                      if t >= run.request.t_ms), None)
        if reset is not None and (release.at is None or reset < max(release.at, end)):
            release = Release("closed", reset)
        found[run_id] = attrs.evolve(release, reset_at=reset)
    return found


def _turns(trace: Sequence[Record]) -> dict[tuple[str, str | None, int | None], _Turn]:
    turns: dict[tuple[str, str | None, int | None], _Turn] = {}
    for r in of_kinds(trace, ("world.turn", "world.turn_end")):
        if r.kind == "world.turn":
            at = (r.data["session"], r.data["turn"], r.data["incarnation"])
            turns[at] = _Turn(*at)
        elif r.kind == "world.turn_end":
            at = (r.data["session"], r.data["turn"], r.data["incarnation"])
            if at in turns:
                turns[at] = attrs.evolve(turns[at], ended_ms=r.t_ms, how=r.data["how"])
    return turns


def private_bound_to_incarnation(trace: Sequence[Record]) -> list[Violation]:
    """PRV-3: a private result reaches only the incarnation of its requester session that
    spawned it: once that session was reset (``/new``) or deleted, nothing of it reaches the
    session's transcript, neither alone nor in a batch wake; nor does it ever reach another
    session (a deleted nested requester's fallback)."""
    private = private_runs(trace)
    # Requester actor -> its incarnation: 1 plus the resets and deletes its transcript shows so
    # far (the session takes a /new in its own order: a hand-off it took just before the /new
    # the harness asked for at the same instant went to the old incarnation, rightly).
    incarnation: dict[str, int] = {}
    violations = []
    for r in of_kinds(trace, ("requester.lifecycle", "requester.accept")):
        if r.kind == "requester.lifecycle":
            incarnation[r.actor] = incarnation.get(r.actor, 1) + 1
        elif r.kind == "requester.accept":
            now = incarnation.get(r.actor, 1)
            for run_id in carried_runs(r.data["key"]):
                run = private.get(run_id)
                if run is None:
                    continue
                if run.actor != r.actor:
                    violations.append(Violation(
                        "private-bound-to-incarnation", "PRV-3",
                        f"{run_id} was spawned privately by {run.request.data['requester']}, "
                        f"yet its result reached {r.actor} at {r.t_ms} ms (never another "
                        "session, not even a fallback)", (run.request.seq, r.seq)))
                    continue
                bound = run.request.data.get("incarnation", 1)
                if bound != now:
                    violations.append(Violation(
                        "private-bound-to-incarnation", "PRV-3",
                        f"{run_id} was spawned privately by incarnation {bound} of "
                        f"{run.request.data['requester']}, yet its result reached incarnation "
                        f"{now} at {r.t_ms} ms (the session was reset or deleted meanwhile)",
                        (run.request.seq, r.seq)))
    return violations


def private_retained_until_turn_settles(trace: Sequence[Record]) -> list[Violation]:
    """PRV-5: while the spawning turn is open a private result stays retained: it reaches the
    requester only after that turn finished or yielded."""
    private = private_runs(trace)
    found = releases(trace)
    turns: dict[tuple[str, str | None, int | None], _Turn] = {}
    violations = []
    for r in of_kinds(trace, ("world.turn", "world.turn_end", "requester.accept")):
        if r.kind == "world.turn":
            at = (r.data["session"], r.data["turn"], r.data["incarnation"])
            turns[at] = _Turn(*at)
        elif r.kind == "world.turn_end":
            at = (r.data["session"], r.data["turn"], r.data["incarnation"])
            if at in turns:
                turns[at] = attrs.evolve(turns[at], ended_ms=r.t_ms, how=r.data["how"])
        elif r.kind == "requester.accept" and r.data["key"].startswith(PER_CHILD_KEY):
            carried = carried_runs(r.data["key"])
            run = private.get(carried[0]) if carried else None
            if run is None or run.request.data.get("turn") is None:
                continue
            request = run.request.data
            turn = turns.get((request["requester"], request["turn"], request.get("incarnation")))
            if turn is None:
                continue
            reset = run.run_id in found and found[run.run_id].reset_at is not None
            if turn.ended_ms is None and not reset:  # an abandoned turn is PRV-3's
                violations.append(Violation(
                    "private-retained-until-turn-settles", "PRV-5",
                    f"{run.run_id}'s private result reached {r.actor} at {r.t_ms} ms while its "
                    f"spawning turn {turn.turn} was still open", (run.request.seq, r.seq)))
    return violations


def private_window_from_release(trace: Sequence[Record]) -> list[Violation]:
    """PRV-7: waiting for the spawning turn uses none of a private result's window: it is never
    given up while retained, and (but on a rejection that stops retries) not before 30 minutes
    after its release."""
    found = releases(trace)
    ends: dict[str, int] = {}
    stopped: set[str] = set()
    violations = []
    for r in of_kinds(trace, ("child.end", "fault", "requester.gone", "gateway.refused",
                              "delivery.give_up")):
        if r.kind == "child.end":
            ends[r.data["run_id"]] = r.t_ms
        elif rejection_class(r) in ("permanent", "sent"):
            stopped.add(r.data["run_id"])
        elif (r.kind == "delivery.give_up" and r.data["run_id"] in found
              and r.data["run_id"] not in stopped):
            run_id = r.data["run_id"]
            if found[run_id].how == "yielded":
                continue  # its yield batch owns it: the batch wake's budgets decide (YLD-3)
            release = found[run_id].due_from(ends[run_id])
            if found[run_id].how == "closed" and release is not None and r.t_ms >= release:
                continue  # a reset or delete closed it (PRV-3): no window is owed (seed 792)
            if release is None or r.t_ms < release:
                violations.append(Violation(
                    "private-window-from-release", "PRV-7",
                    f"{run_id}'s private result was given up at {r.t_ms} ms before its spawning "
                    "turn released it", (r.seq,)))
            elif r.t_ms < release + WINDOW_MS:
                violations.append(Violation(
                    "private-window-from-release", "PRV-7",
                    f"{run_id}'s private result was given up at {r.t_ms} ms, before its window "
                    f"of 30 minutes from its release at {release} ms ran out", (r.seq,)))
    return violations


INVARIANTS = (
    Invariant("spawn-refusals", "PRV-4", "safety",
              "completionTarget \"parent\" with ACP, collect, visible, thread, mode session or "
              "expectsCompletionMessage false (or another target) is refused, naming each "
              "forbidden option; nothing else is refused.", spawn_refusals),
    Invariant("private-never-to-channel", "PRV-1", "safety",
              "A private result never reaches a channel automatically.",
              private_never_to_channel),
    Invariant("private-handoff-stable", "PRV-8", "safety",
              "A private hand-off carries no usage statistics and every retry equals the first.",
              private_handoff_stable),
    Invariant("private-bound-to-incarnation", "PRV-3", "safety",
              "A private result reaches only the requester incarnation that spawned it.",
              private_bound_to_incarnation),
    Invariant("private-retained-until-turn-settles", "PRV-5", "safety",
              "A private result is retained while its spawning turn is open.",
              private_retained_until_turn_settles),
    Invariant("private-window-from-release", "PRV-7", "safety",
              "A private result's 30-minute window starts at its release, not at its end.",
              private_window_from_release),
)
