"""The readings several oracles share of what a requester read, each against the plain statement
the oracles made before (Hypothesis): an announcement's result block (``shown_block``, as
announce-block, result-intact, findings-scoped, redrive-from-retained and lost-answer-recovery
locate and un-escape it), its ``Stats: `` lines and its lines, a long answer as frozen, and the
runs a hand-off key carries and its delivery generation; and the runs' settles, fed once, read
as of each record. Texts are built from the markers' pieces, so forged and cut blocks (a close
before the opening, none at all, two of each) come up."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sim import scenario
from sim.cli import root as cli
from sim.invariants.child import output
from sim.invariants.child.announce import has_line
from sim.invariants.delivery import redrive
from sim.invariants.frozen import LIMIT, frozen, notice
from sim.invariants.nesting import findings
from sim.invariants.observations import DATA_CLOSE, lines_starting, shown_block, stats_lines
from sim.invariants.private.completion import carried_runs
from sim.invariants.settled import EXPIRY_MS, EarliestSettle, settles
from sim.world import core as world

_PIECES = ["<prompt-data>\n", "\n</prompt-data>", "<prompt-data>", "</prompt-data>", "&lt;",
           "&amp;", "&", "<", "x", "é", "\n", "\n[truncated: ", "Stats: ", "Stats: runtime 1s",
           "session_key: a", "\n\n", " "]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)


def _unescape(body: str) -> str:
    return body.replace("&lt;", "<").replace("&amp;", "&")


def _plain_shown(text: str) -> str | None:
    """output.py's and redrive.py's statement before the shared reading."""
    if "<prompt-data>\n" not in text or "\n</prompt-data>" not in text:
        return None
    return _unescape(text[text.index("<prompt-data>\n") + len("<prompt-data>\n"):
                          text.index("\n</prompt-data>")])


def _plain_findings_shown(text: str) -> tuple[str | None, bool]:
    """findings.py's statement before the shared reading (the first close after the opening)."""
    open_at = text.find("<prompt-data>\n")
    if open_at < 0:
        return None, False
    close = text.find("\n</prompt-data>", open_at)
    body = text[open_at + len("<prompt-data>\n"):close]
    return _unescape(body), text.startswith("\n[truncated: ", close + len("\n</prompt-data>"))


@settings(max_examples=600, deadline=None)
@given(_TEXTS)
@example("\n</prompt-data><prompt-data>\nx\n</prompt-data>\n[truncated: ")  # a forged close first
@example("<prompt-data>\n</prompt-data>")  # the opening's line break begins the close
@example("<prompt-data>\nx&amp;lt;")  # no close
def test_the_shown_block_is_each_readers_own(text: str) -> None:
    copy = "".join(list(text))  # an equal text, another object: the cache must not tell them apart
    for t in (text, copy):
        assert output._shown_result(t) == _plain_shown(t)
        assert redrive._shown(t) == _plain_shown(t)
        assert findings._shown_result(t) == _plain_findings_shown(t)
        block = shown_block(t)
        if block is not None:
            # result-intact reads a truncation marker anywhere after the first close.
            assert block[1] == t.index(DATA_CLOSE)
            assert (t.find("\n[truncated: ", block[1]) >= 0) == (
                "\n[truncated: " in t[t.index(DATA_CLOSE):])


@settings(max_examples=600, deadline=None)
@given(_TEXTS, st.sampled_from(["Stats: ", "S", "session_key: a", "x"]))
@example("Stats: a\nStats: b", "Stats: ")  # consecutive lines: the search starts at the break
def test_lines_are_the_split_texts(text: str, prefix: str) -> None:
    lines = text.split("\n")
    assert lines_starting(text, prefix) == [line for line in lines if line.startswith(prefix)]
    assert list(stats_lines(text)) == [line for line in lines if line.startswith("Stats: ")]
    for line in {*lines, prefix, "", "x\nx", text}:
        assert has_line(text, line) == (line in lines)


def _plain_frozen(answer: str) -> str:
    raw = answer.encode("utf-8", "surrogatepass")
    if len(raw) <= LIMIT:
        return answer
    tail = notice(len(raw))
    head = raw[:LIMIT - len(tail.encode("utf-8"))]
    for drop in range(4):
        try:
            kept = head[:len(head) - drop].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
        # The kept prefix went through UTF-8 and back: a lone surrogate reads U+FFFD (§c19).
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in kept) + tail
    raise AssertionError


@settings(max_examples=60, deadline=None)
@given(st.integers(LIMIT // 4 - 2, LIMIT + 8), st.sampled_from(["a", "é", "中", "😀", "\ud800"]),
       st.sampled_from(["", "a", "é", "😀"]))
def test_a_long_answer_reads_frozen_as_stated(size: int, fill: str, last: str) -> None:
    answer = fill * (size // len(fill.encode("utf-8", "surrogatepass"))) + last
    assert frozen(answer) == _plain_frozen(answer)
    assert frozen("".join([answer[:1], answer[1:]])) == _plain_frozen(answer)  # another object


_RUN_LIST = re.compile(r"^run-\d+(,run-\d+)*$")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["announce", "v1", "requester-settle", "run-1", "run-2,run-10",
                                 "run-x", "g2", "retry-1", "yield-3", "", "run-3,"]),
                max_size=7).map(":".join))
def test_carried_runs_are_the_keys_run_lists(key: str) -> None:
    plain = [run for part in key.split(":") if _RUN_LIST.match(part) for run in part.split(",")]
    assert carried_runs(key) == tuple(plain)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["announce", "v1", "run-1", "g", "g2", "g12", "gx", "", "g٣"]),
                max_size=6).map(":".join))
def test_a_keys_generation_is_read_as_stated(key: str) -> None:
    # Each oracle keeps its own reading of the suffix (kept per key now): findings-scoped's ...
    head, _, tail = key.rpartition(":g")
    assert findings._generation(key) == (int(tail) if head and tail.isdigit() else 1)
    # ... and redrive-from-retained's.
    found = re.search(r":g(\d+)$", key)
    assert redrive.generation(key) == (1 if found is None else int(found.group(1)))


def test_the_shared_settles_answer_as_a_feed_to_each_record_would() -> None:
    # findings-scoped and descendants-first asked their own EarliestSettle, fed record by
    # record, at each record they walked; they now ask the one fed the whole trace, as of that
    # record (``seen_to``). Over default-world traces, at every record, for every run and a few
    # moments around its expiry, both answer alike.
    asked = 0
    for seed in (1, 2, 3, 5, 8, 13, 21, 34):
        trace = world.run(scenario.load(cli.default_world_path()), seed=seed).trace.records
        book = settles(trace)
        fed = EarliestSettle(trace)
        runs = [r.data["run_id"] for r in trace if r.kind == "spawn"]
        for r in trace:
            if r.kind in EarliestSettle.KINDS:
                fed.see(r)
            for run_id in runs:
                for t_ms in (r.t_ms, r.t_ms + EXPIRY_MS // 2, r.t_ms + EXPIRY_MS + 1):
                    assert book.settled(run_id, t_ms, r.seq) == fed.settled(run_id, t_ms), (
                        seed, r.seq, run_id, t_ms)
                    asked += 1
        assert book.earliest(runs[0]) == fed.earliest(runs[0])
    assert asked > 10_000
