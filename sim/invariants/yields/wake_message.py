"""The wake message (reference §c9 "Message", FMT-2 through the multi-result layout), restated
from what was asked and seen: each child's end record (status, error, result), each spawn record
(the child's session key and task), the route notices asked for (``world.spawn``), and the text of
each accepted batch wake (``requester.accept`` keyed ``announce:requester-settle:...``).

A wake says the batch settled; states the outcome policy (a visible reply required when the
requester yielded); carries, in the order the members were spawned, then ended, then by session
key (FMT-2's stable order; ``spawn`` and ``child.end`` times), for every member whose newest
result had not reached the requester individually when the wake was first handed to the gateway
(it is rendered once), a section in the shared 160,000-character layout (its result whole, or a
head plus an exact truncation marker, or the children past the floor folded into one summary
line; the result as frozen: over 102,400 bytes of UTF-8, its whole-character prefix plus the
frozen-result notice, reference §c14), or says the results were announced individually; lists
the unfinished children to reconcile; and ends with the members' route notices deduplicated,
sorted and capped at 1,024 characters. (A result whose own send may have landed unbeknown to
the registry, an acknowledgement lost or slowed or the delivery process dead after a send of it,
may be carried or not: the registry may have given it up, and repeating it is the safe side.
The registry's own give-up and skip records are never read.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sim.invariants.base import Invariant, Violation
from sim.invariants.frozen import frozen
from sim.invariants.index import of_kinds
from sim.invariants.observations import asked_runs, is_delivery_crash, is_wake, key_runs
from sim.invariants.yields.seen import batches
from sim.invariants.yields.wake_floor import block_cost, floor_cost, floor_problem
from sim.trace import Record

CAP = 160_000
SETTLED = ("Every child run in this batch, including their descendants, has settled. Do not "
           "wait or call sessions_yield again for this batch; other batches may still be "
           "running.")
VISIBLE_REQUIRED = "A visible reply is required: NO_REPLY is not allowed."
INDIVIDUALLY = "Child results were announced individually."
FINDINGS = "Child completion results:"
RECONCILE = "Reconcile each unfinished child:"
ROUTES = "Model route changes:"
ROUTE_CAP = 1_024
ROUTE_TRUNCATED = "\n[model-route changes truncated]"
KILLED = "subagent run terminated"
_SECTION = re.compile(r"^(\d+)\. .*\nsession_key: (.*)\nstatus: .*\n", re.M)
_MARKER = re.compile(r"\n\[truncated: (\d+) characters omitted; read the rest with "
                     r"sessions_history sessionKey=(\S+)\]")
_SUMMARY = re.compile(r"\[(\d+) more child results omitted: ([^;]*); inspect them with "
                      r"sessions_list and sessions_history\]")
_END = "\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"


def _silent(result: str | None) -> bool:
    return result is not None and result.strip() in ("NO_REPLY", "ANNOUNCE_SKIP")


def _skip(result: str | None) -> bool:
    return result is not None and result.strip() == "ANNOUNCE_SKIP"


def _visible(result: str | None) -> bool:
    return result is not None and result.strip() not in ("", "NO_REPLY")


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&amp;", "&")


def wake_message(trace: Sequence[Record]) -> list[Violation]:
    asked = asked_runs(trace)
    spawns: dict[str, Record] = {}
    ends: dict[str, Record] = {}
    # Each run's receipts so far (DEL-12): its end's result, then each correction's, each as the
    # registry freezes it (over 102,400 bytes: a prefix plus a notice, reference §c14).
    receipts: dict[str, list[str | None]] = {}
    skipped: set[str] = set()  # runs whose reply was an exact ANNOUNCE_SKIP
    # Receipts that reached the requester on their own: (run, producer end time).
    individually: set[tuple[str, int]] = set()
    newest: dict[str, int] = {}  # each run's newest receipt so far: its end time
    # What each batch's wake owed when it was first handed to the gateway (it is rendered then,
    # once): by (session, member runs), the members whose newest receipt had reached the
    # requester on its own (or was skipped), and those given up.
    rendered: dict[tuple[str, tuple[str, ...]], tuple[set[str], set[str]]] = {}
    # Runs whose own send may have reached their requester unbeknown to the registry (an
    # acknowledgement lost or slowed, a send held on its way past the registry's give-up, or
    # the delivery process died after a send of it): it may
    # give them up and the wake may carry them again, or not (never the registry's give-up
    # record).
    unsure: set[str] = set()
    sent: set[str] = set()  # runs handed to the gateway on their own
    # When each yielded batch froze, by (session, member runs): a member that ended after it is
    # handed to its batch as it ends, so its own delivery never ran; a failed run's exact
    # ANNOUNCE_SKIP text then announces nothing on its own, and the wake reports its status
    # (a terminal failure reports its status, not its reply text; seed 9784).
    frozen_at = {(b.session, b.members): b.yielded.t_ms for b in batches(trace)}
    violations: list[Violation] = []
    for r in of_kinds(trace, ("spawn", "child.end", "child.correction", "fault", "crash",
                              "requester.accept", "gateway.send")):
        if r.kind == "spawn":
            spawns[r.data["run_id"]] = r
        elif r.kind == "child.end":
            ends[r.data["run_id"]] = r
            receipts[r.data["run_id"]] = [frozen(r.data["result"])]  # as frozen (§c14)
            newest[r.data["run_id"]] = r.t_ms
            if _skip(r.data["result"]):
                skipped.add(r.data["run_id"])  # an exact ANNOUNCE_SKIP: announced by nothing
        elif r.kind == "child.correction":
            receipts.setdefault(r.data["run_id"], []).append(frozen(r.data["result"]))
            newest[r.data["run_id"]] = r.data["ended_at"]
        elif r.kind == "fault" and r.data.get("kind") in ("send-ambiguous", "ack-slow", "delay") \
                and r.data.get("run_id") and not is_wake(str(r.data.get("key") or "")):
            unsure.add(r.data["run_id"])
        elif is_delivery_crash(r):
            unsure.update(sent)
        elif r.kind == "requester.accept" and not is_wake(r.data.get("key", "")):
            individually.add((r.data["run_id"], r.data["ended_at"]))  # announced on its own
        elif r.kind == "gateway.send" and not is_wake(r.data["key"]):
            sent.add(r.data["run_id"])
        elif r.kind == "gateway.send" and is_wake(r.data["key"]):
            runs = key_runs(r.data["key"])
            # Owed: a member whose newest receipt did not reach the requester on its own (a
            # correction after its own announcement is owed again, DEL-12), as of this first
            # rendering.
            # A member announced on its own whose correction came since may be carried or left
            # to its own delivery: the delivery process may not have heard of the correction
            # yet (a late notice), and then delivers it on its own afterwards.
            since = frozen_at.get((r.data["requester"].removeprefix("requester:"), runs))
            # A failed run's exact ANNOUNCE_SKIP text: its own delivery may have skipped it (the
            # registry's skip is silent) or its batch may carry it, reporting its status (a
            # terminal failure reports its status, not its reply text): either (seeds 9784,
            # 7134, 18620).
            failed_skip = {run for run in runs if run in skipped and since is not None
                           and ends[run].data["status"] != "ok"}
            taken = {run for run in runs if run in skipped
                     or (run, newest.get(run, -1)) in individually} - unsure - failed_skip
            announced = {run for run, _ in individually} | unsure | failed_skip
            rendered.setdefault((r.data["requester"], runs),
                                (taken, {run for run in runs if run in announced} - taken))
        elif r.kind == "requester.accept":
            runs = key_runs(r.data["key"])
            taken, maybe = rendered.get((r.actor, runs), (set(), set()))
            problems = _problems(r, runs, spawns, ends, receipts, taken, maybe, asked)
            if problems:
                violations.append(Violation("wake-message", "FMT-2", f"the wake {r.data['key']} "
                                            + "; ".join(problems), (r.seq,)))
    return violations


def _problems(r: Record, runs: tuple[str, ...], spawns: dict[str, Record],
              ends: dict[str, Record], receipts: dict[str, list[str | None]],
              individually: set[str], maybe: set[str], asked: Mapping[str, object]
              ) -> list[str]:
    text: str = r.data["text"]
    problems = []
    if len(text) > CAP:
        problems.append(f"is {len(text)} characters, over the {CAP} cap")
    if SETTLED not in text:
        problems.append("does not say that the batch settled")
    # A wake carrying a private result (completionTarget "parent") stays private input: no
    # visible reply is required of it (reference §c9 flags, §c10).
    private = any(_private_request(asked.get(run_id)) for run_id in runs)
    if ":yield-" in r.data["key"] and VISIBLE_REQUIRED not in text and not private:
        problems.append("does not require a visible reply after a yield")
    key_of: dict[str, list[str]] = {}  # a reused child session key names several runs
    for run in runs:
        if run in spawns:
            key_of.setdefault(spawns[run].data["child_session_key"], []).append(run)
    # One entry per owed run: a reused child session key may be owed twice (two results).
    owed_runs = [spawns[run].data["child_session_key"] for run in runs
                 if run in spawns and run not in individually and run in ends
                 and not (ends[run].data["status"] == "ok" and _silent(ends[run].data["result"]))]
    owed = set(owed_runs)
    optional = [spawns[run].data["child_session_key"] for run in runs if run in maybe]
    required = owed - set(optional)
    tail_at = min((i for i in (text.find("\n\n" + RECONCILE), text.find("\n\n" + ROUTES),
                               text.rfind(_END)) if i >= 0), default=len(text))
    if FINDINGS not in text:
        if required:
            problems.append(f"carries no findings, yet {', '.join(sorted(required))} never "
                            "reached the requester individually")
        elif INDIVIDUALLY not in text:
            problems.append("neither carries findings nor says they were announced individually")
    else:
        body = text[text.index(FINDINGS):tail_at]
        shown, summarized, costs, summary = _findings(body, key_of, owed_runs, optional,
                                                      receipts, problems)
        # FMT-2's stable order: spawned first, then ended first, then by session key (the
        # tie-break when two were spawned and ended in one instant).
        when = {key: (spawns[ran[0]].t_ms, ends[ran[0]].t_ms, key)
                for key, ran in key_of.items() if len(ran) == 1 and ran[0] in ends}
        placed = [key for key in shown if key in when]
        if len(placed) == len(shown) and placed != sorted(placed, key=when.__getitem__):
            problems.append(f"shows {placed}, not in the order spawned, ended, session key "
                            f"({sorted(placed, key=when.__getitem__)})")
        if not required <= set(shown) | set(summarized) <= owed:
            problems.append(f"shows {sorted(shown)} and omits {sorted(summarized)}, but owes "
                            f"{sorted(owed)}")
        elif summary is not None and costs is not None and set(summarized) <= set(when) and \
                int(summary.group(1)) == len(summarized) == len(owed_runs) - len(shown):
            # The floor (wake_floor.py): the first child summarized did not fit at its floor.
            # (Judged when the summary counts every owed child not shown: none was left out
            # as announced on its own, so the summarized children are known.)
            left = sorted(summarized, key=when.__getitem__)
            run = key_of[left[0]][0]
            if summary.group(2).split(", ")[0] == left[0] and \
                    ends[run].data["status"] == "ok":
                problem = floor_problem(text, summary, costs, (
                    left[0], spawns[run].data["task"],
                    [result if _visible(result) else None for result in receipts[run]]),
                    left[1:])
                if problem:
                    problems.append(problem)
    unfinished = sorted({spawns[run].data["child_session_key"] for run in runs
                        if run in ends and (ends[run].data["status"] == "timeout" or (
                            ends[run].data["status"] == "error"
                            and ends[run].data["error"] == KILLED))})
    listed: list[str] = []
    if "\n\n" + RECONCILE in text:
        part = text[text.index("\n\n" + RECONCILE):].split("\n\n")[1]
        listed = [line[2:] for line in part.split("\n")[1:] if line.startswith("- ")]
    if listed != unfinished:
        problems.append(f"asks to reconcile {listed}, but the unfinished children are "
                        f"{unfinished}")
    notices = sorted({n for run in runs for n in [_notice(asked, run)] if n})
    want = "\n".join(notices)
    if len(want) > ROUTE_CAP:
        want = want[:ROUTE_CAP] + ROUTE_TRUNCATED
    got = ""
    if "\n\n" + ROUTES + "\n" in text:
        start = text.index("\n\n" + ROUTES + "\n") + len(ROUTES) + 3
        got = text[start:text.rfind(_END)]
    if got != want:
        problems.append(f"carries route notices {got[:80]!r}..., not {want[:80]!r}...")
    return problems


def _notice(asked: Mapping[str, object], run: str) -> str | None:
    request = getattr(asked.get(run), "request", None)
    return None if request is None else request.data.get("route_change")


def _findings(body: str, key_of: dict[str, list[str]], owed_runs: list[str],
              optional: list[str], receipts: dict[str, list[str | None]], problems: list[str]
              ) -> tuple[list[str], list[str], list[tuple[str, int, str | None]] | None,
                         re.Match[str] | None]:
    starts = list(_SECTION.finditer(body))
    shown: list[str] = []
    # Each shown section's key, its result's cost in the text and the result it shows (the
    # floor's reading, wake_floor.py); None once a section shows no receipt of its run.
    costs: list[tuple[str, int, str | None]] | None = []
    for i, match in enumerate(starts):
        key = match.group(2)
        shown.append(key)
        stop = starts[i + 1].start() if i + 1 < len(starts) else len(body)
        section = body[match.end():stop]
        runs = [run for run in key_of.get(key, []) if run in receipts]
        if not runs:
            problems.append(f"shows {key}, not a member of the batch")
            continue
        # Any receipt of the run produced so far (the wake shows the one current when it was
        # rendered; a correction may come between that and this send).
        found = [_section_problem(section, key, result) for run in runs
                 for result in receipts[run]]
        if None not in found:
            problems.append(found[0] or "")
            costs = None
        elif costs is not None:
            # The largest floor cost of the receipts it may show: judged on the safe side.
            costs.append(max(((key, block_cost(section), result if _visible(result) else None)
                              for run in runs for result in receipts[run]
                              if _section_problem(section, key, result) is None),
                             key=lambda c: floor_cost(c[2], key)))
    summarized: list[str] = []
    summary = _SUMMARY.search(body)
    if summary is not None:
        left = list(owed_runs)  # the summary counts results (runs), not session keys
        for key in shown:
            if key in left:
                left.remove(key)
        summarized = sorted(set(left))
        must = list(left)
        for key in optional:
            if key in must:
                must.remove(key)
        count = int(summary.group(1))
        named = summary.group(2).split(", ")
        if not len(must) <= count <= len(left) or not set(named) <= set(summarized) \
                or len(named) != min(5, count):
            problems.append(f"its summary line counts {count} omitted children and names "
                            f"{named}, but {len(left)} were left out")
    return shown, summarized, costs, summary


def _section_problem(section: str, key: str, result: str | None) -> str | None:
    """What is wrong with one findings section as the result of ``result`` (None: nothing)."""
    if not _visible(result):
        return None if "Child result: (no output)" in section else \
            f"shows {key} without '(no output)'"
    assert result is not None
    opening, closing = "<prompt-data>\n", "\n</prompt-data>"
    if section.count(opening) != 1 or closing not in section:
        return f"shows {key} without exactly one result block"
    head = _unescape(section[section.index(opening) + len(opening):section.index(closing)])
    marker = _MARKER.match(section[section.index(closing) + len(closing):])
    if marker is None:
        return None if head == result else f"shows {key}'s result altered"
    if not result.startswith(head) or int(marker.group(1)) != len(result) - len(head) \
            or marker.group(2) != key:
        return f"shows {key}'s head with a marker that does not add up"
    return None


INVARIANTS = (
    Invariant("wake-message", "FMT-2", "safety",
              "A batch wake says the batch settled, requires a visible reply after a yield, "
              "carries every result not announced individually (whole, an exact head and "
              "marker, or in the summary line, under the 160,000 cap), lists the unfinished "
              "children to reconcile and the route notices capped at 1,024 characters.",
              wake_message),
)


def _private_request(run: object) -> bool:
    request = getattr(run, "request", None)
    return request is not None and request.data.get("completion_target") == "parent"
