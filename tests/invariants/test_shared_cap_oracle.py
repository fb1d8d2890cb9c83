"""The 160,000-character shared cap at its boundary (issue 36): ``announce-block`` restates a lone
completion's cut exactly, from the child's answer and the block the requester read alone, so a
``<`` written for ``<=`` at the cap, or a head a character short, is caught. The world sizes the
answers (``reply_to_cap``, sim/world/aims.py) so that the blocks are 159,999, 160,000 and
160,001 characters whole."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs

from sim import invariants, scenario
from sim.trace import Record
from sim.world import core as world

BOUNDARY = Path(__file__).parents[2] / "scenarios" / "shared-cap-boundary.toml"
CAP = 160_000


def _run(mutants: tuple[str, ...] = ()) -> world.RunResult:
    return world.run(scenario.load(BOUNDARY), seed=1, mutants=mutants)


def _accepts(trace: list[Record]) -> dict[str, Record]:
    return {r.data["run_id"]: r for r in trace if r.kind == "requester.accept"}


def _check(trace: list[Record]) -> list[str]:
    return [v.message for v in invariants.BY_NAME["announce-block"].check(trace)]


def test_the_world_lands_each_block_on_its_character() -> None:
    result = _run()
    assert result.ok
    lengths = {run: len(r.data["text"]) for run, r in _accepts(list(result.trace)).items()}
    # The one over is cut to 159,999: one more ampersand of head would cost five characters.
    assert lengths == {"run-1": CAP - 1, "run-2": CAP, "run-3": CAP - 1}
    for probe in ("announce.one-under-shared-cap", "announce.at-shared-cap",
                  "announce.one-over-shared-cap"):
        assert result.probes.get(probe) == 1


def test_a_block_at_the_cap_cut_is_caught() -> None:
    found = [v for v in _run(("shared-cap-cut-at-limit",)).violations]
    assert {v.invariant for v in found} == {"announce-block"}
    messages = " ".join(v.message for v in found)
    assert "run-2: the result was cut, yet the block whole is 160000 characters" in messages


def test_a_head_a_character_short_is_caught() -> None:
    # Forged: the cut block's head loses its last character (an escaped ampersand), the marker
    # counting one more.
    trace = list(_run().trace)
    assert _check(trace) == []
    accepts = _accepts(trace)
    text = accepts["run-3"].data["text"]
    close = text.index("\n</prompt-data>\n[truncated: ")
    marker = re.compile(r"\[truncated: (\d+) characters").search(text, close)
    assert marker is not None
    omitted = int(marker.group(1))
    assert text[close - 5:close] == "&amp;"  # the head ends in an escaped ampersand
    forged_text = (text[:close - 5] + text[close:marker.start(1)] + str(omitted + 1)
                   + text[marker.end(1):])
    forged = [attrs.evolve(r, data={**r.data, "text": forged_text}) if r is accepts["run-3"]
              else r for r in trace]
    problems = _check(forged)
    assert any("not the longest that fits" in p for p in problems), problems


def test_a_whole_block_over_the_cap_is_caught() -> None:
    # Forged: the one-over block delivered whole (a cap that let 160,001 characters through).
    trace = list(_run().trace)
    accepts = _accepts(trace)
    over = accepts["run-3"].data["text"]
    close = over.index("\n</prompt-data>\n[truncated: ")
    end = over.index("]", close) + 1
    answer = next(r.data["result"] for r in trace if r.kind == "child.end"
                  and r.data["run_id"] == "run-3")
    escaped = answer.replace("&", "&amp;").replace("<", "&lt;")
    start = over.index("<prompt-data>\n") + len("<prompt-data>\n")
    whole = over[:start] + escaped + "\n</prompt-data>" + over[end:]
    assert len(whole) == CAP + 1
    forged = [attrs.evolve(r, data={**r.data, "text": whole}) if r is accepts["run-3"]
              else r for r in trace]
    assert any("over the 160000 cap" in p for p in _check(forged))


# The floor (sim/invariants/yields/wake_floor.py): a wide batch's wake, rendered by the model,
# read back by wake-message's own parsing.

def _wide(offset: int) -> tuple[list[Any], str]:
    from actors.messages import ChildSpec, StepSpec
    from sim.choices import Chooser
    from sim.world.aims import floor_aim

    session = "agent:main:main"
    children = [ChildSpec(f"w{n}", session, f"wide task {n}", 1000 * n, (StepSpec(
        100, text="".join(f"Row {i:05d}: finding < limit & ok.\n" for i in range(
            (2_000 + 37 * n) // 32 + 1))[:2_000 + 37 * n]),), correction_after_ms=1000)
        for n in range(1, 81)]

    class Fixed(Chooser):  # the aim's one choice: the offset asked
        def choose(self, subsystem: str, n: int) -> int:
            return offset + 1

    return floor_aim(Fixed(1), session, children), session


def _rendered(offset: int, mutant: bool = False) -> tuple[str, Any, list[Any]]:
    from actors.announce import ChildResult
    from actors.announce.wake import Wake, format_wake
    from actors.requester.session import child_session_key

    wide, session = _wide(offset)
    results = [ChildResult(session_key=child_session_key(session, c.id), session_id=None,
                           task=c.task, status="ok", error=None,
                           text=f"{c.steps[-1].text}\n\nCorrection: {c.correction}",
                           created_at=c.spawn_at_ms, ended_at=c.spawn_at_ms + 100)
               for c in wide]
    wake = format_wake(Wake(tuple(results), require_visible_reply=True),
                       floor_fit_summarized=mutant)
    return wake.text, wake.findings, results


def _floor_verdict(text: str, results: list[Any]) -> str | None:
    from sim.invariants.yields import wake_message as wm
    from sim.invariants.yields.wake_floor import floor_problem

    keys = [r.session_key for r in results]
    key_of = {k: [f"run-{i}"] for i, k in enumerate(keys)}
    receipts: dict[str, list[str | None]] = {f"run-{i}": [r.text] for i, r in enumerate(results)}
    problems: list[str] = []
    body = text[text.index(wm.FINDINGS):text.rfind("\n<<<END")]
    shown, _summarized, costs, summary = wm._findings(body, key_of, keys, [], receipts, problems)
    assert problems == [] and summary is not None and costs is not None
    left = [k for k in keys if k not in shown]
    first = results[keys.index(left[0])]
    return floor_problem(text, summary, costs, (left[0], first.task, [first.text]), left[1:])


def test_the_floor_aim_lands_on_the_character() -> None:
    for offset, room, short in ((-1, 1, None), (0, 0, None), (1, None, 1)):
        text, findings, _ = _rendered(offset)
        assert len(text) <= CAP and findings.summarized
        if room is not None:
            assert findings.floor_room == room
        if short is not None:
            assert findings.floor_short == short


def test_a_child_summarized_though_its_floor_fits_is_caught() -> None:
    for offset in (-1, 0, 1):
        text, _, results = _rendered(offset)
        assert _floor_verdict(text, results) is None
    text, _findings, results = _rendered(0, mutant=True)
    verdict = _floor_verdict(text, results)
    assert verdict is not None and "within the cap" in verdict, verdict
    assert "160000 characters" in verdict  # exactly at the cap: a < written for <=
