"""SPEC §3: scenario files load, and every bad one is reported as ``file:line: field: problem``.

Each malformed case marks the line the error must point at with a ``# <-`` comment; the test finds
that line in the text it wrote and asserts the loader's whole one-line message, line included.
"""

from __future__ import annotations

import itertools
import re
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.errors import InputError
from actors.inputs import Positions
from actors.mutant_catalogue import MUTANTS
from sim import scenario
from sim.faults.plan import FAULT_KINDS
from sim.invariants import BY_NAME
from tests.conftest import DEFAULT_WORLD, SCENARIOS

MARK = "# <-"
SESSION = '[[sessions]]\nkey = "agent:main:main"\n'
CHILD_FIELDS = ("id, requester, task, spawn_at, run_for, outcome, reply, reply_chars, reply_unit, "
                "error, "
                "expects_completion, usage_recorded, steps, run_timeout_seconds, cleanup, "
                "encoding, "
                "timeout, "
                "fork_seed, earlier_epoch, session, parent, caller, answer_lost, correction_after, "
                "correction, turn, route_change, tokens_in, tokens_out, receipts, reply_to_cap, "
                "completion_target, runtime, collect, visible, thread, mode")
TOP_FIELDS = ("name, description, covers, seed, strategy, mutants, until, sessions, children, "
              "workload, faults, timeline, expect, replay, limits, turns, lifecycle, "
              "archive_after_minutes")


def scenario_files() -> list[Path]:
    return sorted(SCENARIOS.rglob("*.toml"))


def marked_line(text: str) -> int:
    lines = [n for n, line in enumerate(text.split("\n"), start=1) if line.endswith(MARK)]
    assert len(lines) == 1, f"the case must mark exactly one line with {MARK!r}"
    return lines[0]


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        scenario.load(path)
    return caught.value


# -- the good files ------------------------------------------------------------------------------


def test_there_are_scenarios() -> None:
    assert len(scenario_files()) >= 10


@pytest.mark.parametrize("path", [*scenario_files(), DEFAULT_WORLD],
                         ids=lambda p: str(p.relative_to(SCENARIOS.parent)))
def test_every_shipped_scenario_loads(path: Path) -> None:
    loaded = scenario.load(path)
    assert loaded.path == str(path)
    assert loaded.name
    assert loaded.sessions
    assert loaded.children or loaded.workload is not None
    # SPEC §3: a scenario names the requirement IDs it covers, so coverage is measurable.
    assert loaded.covers


def test_the_default_world_is_one_requester_with_eight_drawn_children() -> None:
    world = scenario.load(DEFAULT_WORLD)
    assert [s.key for s in world.sessions] == ["agent:main:main"]
    assert world.children == ()
    assert world.workload is not None and world.workload.children == 8
    assert world.faults.kinds == tuple(FAULT_KINDS)
    assert world.faults.swarm is True
    assert world.faults.heal_at_ms == 2_400_000


def test_times_are_seconds_in_the_file_and_milliseconds_loaded() -> None:
    loaded = scenario.loads("until = 90.5\n" + SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        spawn_at = 1.25
        [[timeline]]
        at = 2
        fault = "delay"
        child = "a"
        delay = 0.5
    """), "t.toml")
    assert loaded.until_ms == 90_500
    assert loaded.children[0].spawn_at_ms == 1250
    assert loaded.timeline[0].at_ms == 2000
    assert loaded.timeline[0].delay_ms == 500


def test_expectation_lines_point_at_their_own_header() -> None:
    text = SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[children]]
        id = "b"

        [expect]
        [[expect.children]]
        child = "a"

        [[expect.children]]
        child = "b"
    """)
    loaded = scenario.loads(text, "e.toml")
    headers = [n for n, line in enumerate(text.splitlines(), start=1)
               if line == "[[expect.children]]"]
    assert [e.line for e in loaded.expect.children] == headers == [9, 12]


# -- malformed files: the exact one-line message -------------------------------------------------

CASES: list[tuple[str, str, str]] = [
    ("toml-syntax", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        run_for = # <-
    """), "invalid TOML: Invalid value"),
    ("toml-unterminated-at-end", SESSION + textwrap.dedent('''\
        [[children]]
        id = "a"
        reply = """never closed
        more text # <-'''), "invalid TOML: Unterminated string"),
    ("unknown-top-level-key", "seeds = 3 # <-\n" + SESSION + '[[children]]\nid = "a"\n',
     f"seeds: unknown field (expected one of: {TOP_FIELDS})"),
    ("unknown-key-in-second-child", SESSION + textwrap.dedent("""\

        [[children]]
        id = "a"
        run_for = 10

        [[children]]
        id = "b"
        run_fro = 10 # <-
    """), f"children[1].run_fro: unknown field (expected one of: {CHILD_FIELDS})"),
    ("unknown-key-in-inline-child", textwrap.dedent("""\
        children = [
          { id = "a" },
          { id = "b", run_fro = 10 }, # <-
        ]
    """) + SESSION, f"children[1].run_fro: unknown field (expected one of: {CHILD_FIELDS})"),
    ("unknown-dotted-key", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        spawn.at = 3 # <-
    """), f"children[0].spawn: unknown field (expected one of: {CHILD_FIELDS})"),
    ("string-for-number", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[children]]
        id = "b"
        run_for = "30" # <-
    """), "children[1].run_for: must be a number, not a string"),
    ("boolean-for-number", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        spawn_at = true # <-
    """), "children[0].spawn_at: must be a number, not a boolean"),
    ("boolean-for-integer", SESSION + textwrap.dedent("""\
        [workload]
        children = true # <-
    """), "workload.children: must be an integer, not a boolean"),
    ("float-for-integer", SESSION + textwrap.dedent("""\
        [workload]
        children = 2.5 # <-
    """), "workload.children: must be an integer, not a float"),
    ("string-for-array", 'mutants = "fresh-key-after-restart" # <-\n' + SESSION
     + '[[children]]\nid = "a"\n', "mutants: must be an array, not a string"),
    ("date-for-number", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        run_for = 1979-05-27 # <-
    """), "children[0].run_for: must be a number, not a date or time"),
    ("not-a-number", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        run_for = nan # <-
    """), "children[0].run_for: must be a finite number of seconds"),
    ("infinite", 'until = inf # <-\n' + SESSION + '[[children]]\nid = "a"\n',
     "until: must be a finite number of seconds"),
    # Every number has a documented range, checked before anything runs (docs/scenarios.md).
    *[(f"huge-{key}", SESSION + f'[[children]]\nid = "a"\n{key} = 1e308 # <-\n',
       f"children[0].{key}: must be at most 2,592,000 seconds, 30 days (the limit)")
      for key in ("run_for", "spawn_at", "timeout", "run_timeout_seconds")],
    ("steer-without-child", SESSION + '[[children]]\nid = "a"\n[[timeline]] # <-\nat = 1\n'
     'event = "steer"\n', "timeline[0].child: a steer names the child to steer"),
    ("steer-run-for-zero", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "steer"\nchild = "a"\nrun_for = 0 # <-\n',
     "timeline[0].run_for: must be at least 0.001 seconds"),
    ("restart-lost-unknown", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "gateway-restart"\nlost = ["a", "b"] # <-\n',
     "timeline[0].lost[1]: 'b' is not one of the [[children]]"),
    ("restart-lost-twice", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "gateway-restart"\nlost = ["a", "a"] # <-\n',
     "timeline[0].lost[1]: 'a' is named twice"),
    ("restart-down-zero", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "gateway-restart"\nrestart_after = 0 # <-\n',
     "timeline[0].restart_after: must be at least 0.001 seconds"),
    ("restart-notice-fails-negative", SESSION + '[[children]]\nid = "a"\n[[timeline]]\n'
     'at = 1\nevent = "gateway-restart"\nnotice_fails = -1 # <-\n',
     "timeline[0].notice_fails: must be at least 0"),
    ("restart-names-child", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "gateway-restart"\nchild = "a" # <-\n',
     "timeline[0].child: does not apply to a 'gateway-restart' event (it takes: at, event, "
     "restart_after, lost, notice_fails)"),
    ("reply-on-abort", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "abort"\nchild = "a"\nreply = "x" # <-\n',
     "timeline[0].reply: does not apply to a 'abort' event (it takes: at, event, child, caller)"),
    ("negative-run-timeout", SESSION + '[[children]]\nid = "a"\nrun_timeout_seconds = -1 # <-\n',
     "children[0].run_timeout_seconds: must be at least 0 seconds"),
    ("text-run-timeout", SESSION + '[[children]]\nid = "a"\nrun_timeout_seconds = "30" # <-\n',
     "children[0].run_timeout_seconds: must be a number, not a string"),
    ("cleanup-mode", SESSION + '[[children]]\nid = "a"\ncleanup = "archive" # <-\n',
     "children[0].cleanup: 'archive' is not one of: keep, delete"),
    ("negative-archive-after", 'archive_after_minutes = -1 # <-\n' + SESSION
     + '[[children]]\nid = "a"\n', "archive_after_minutes: must be at least 0"),
    ("huge-archive-after", 'archive_after_minutes = 50000 # <-\n' + SESSION
     + '[[children]]\nid = "a"\n', "archive_after_minutes: must be at most 43,200 (the limit)"),
    ("fractional-archive-after", 'archive_after_minutes = 2.5 # <-\n' + SESSION
     + '[[children]]\nid = "a"\n', "archive_after_minutes: must be an integer, not a float"),
    ("huge-until", 'until = 1e308 # <-\n' + SESSION + '[[children]]\nid = "a"\n',
     "until: must be at most 2,592,000 seconds, 30 days (the limit)"),
    ("huge-heal-at", SESSION + '[[children]]\nid = "a"\n[faults]\nheal_at = 1e308 # <-\n',
     "faults.heal_at: must be at most 2,592,000 seconds, 30 days (the limit)"),
    ("huge-at", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1e308 # <-\n'
     'fault = "duplicate"\n', "timeline[0].at: must be at most 2,592,000 seconds, 30 days "
     "(the limit)"),
    ("huge-reply-chars", SESSION + '[[children]]\nid = "a"\nreply_chars = 100000000000 # <-\n',
     "children[0].reply_chars: must be at most 10,000,000 (the limit)"),
    ("reply-unit-alone", SESSION + '[[children]]\nid = "a"\nreply_unit = "ab" # <-\n',
     "children[0].reply_unit: repeats to make reply_chars characters: give reply_chars too"),
    ("empty-reply-unit", SESSION + '[[children]]\nid = "a"\nreply_chars = 5\n'
     'reply_unit = "" # <-\n', "children[0].reply_unit: must not be empty"),
    ("huge-workload", SESSION + '[workload]\nchildren = 1000000000 # <-\n',
     "workload.children: must be at most 10,000 (the limit)"),
    ("huge-seed", f"seed = {2**63} # <-\n" + SESSION + '[[children]]\nid = "a"\n',
     f"seed: must be at most {2**63 - 1:,} (the limit)"),
    # sessions_history's offset: absent is no offset (no paging fields), 0 is one (§c19).
    ("negative-offset", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "history-read"\nchild = "a"\noffset = -1 # <-\n',
     "timeline[0].offset: must be at least 0"),
    ("huge-offset", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "archive-read"\nchild = "a"\noffset = 1000001 # <-\n',
     "timeline[0].offset: must be at most 1,000,000 (the limit)"),
    ("text-offset", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "history-read"\nchild = "a"\noffset = "0" # <-\n',
     "timeline[0].offset: must be an integer, not a string"),
    ("offset-on-abort", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 1\n'
     'event = "abort"\nchild = "a"\noffset = 0 # <-\n',
     "timeline[0].offset: does not apply to a 'abort' event (it takes: at, event, child, "
     "caller)"),
    ("huge-count", SESSION + '[[children]]\nid = "a"\n[[timeline]]\nat = 0\n'
     'fault = "duplicate"\ncount = 1000000000 # <-\n',
     "timeline[0].count: must be at most 1,000,000 (the limit)"),
    ("outcome", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        outcome = "crashed" # <-
    """), "children[0].outcome: 'crashed' is not one of: ok, error, timeout"),
    ("requester-not-a-session", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        requester = "agent:main:other" # <-
    """), "children[0].requester: 'agent:main:other' is not one of the [[sessions]]"),
    ("duplicate-child-id", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[children]]
        id = "b"
        [[children]]
        id = "a" # <-
    """), "children[2].id: child 'a' is defined twice"),
    ("duplicate-session", SESSION + textwrap.dedent("""\
        [[sessions]]
        key = "agent:main:main" # <-
        [[children]]
        id = "a"
    """), "sessions[1].key: session 'agent:main:main' is defined twice"),
    ("timeline-unknown-child", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "duplicate"
        child = "a"
        [[timeline]]
        at = 5
        fault = "delay"
        child = "b" # <-
    """), "timeline[1].child: 'b' is not one of the [[children]]"),
    ("abort-without-child", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]] # <-
        at = 30
        fault = "abort"
    """), "timeline[0].child: an abort names the child to abort"),
    ("crash-of-another-actor", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "crash"
        actor = "requester" # <-
    """), "timeline[0].actor: only the 'delivery' actor can crash"),
    ("unknown-crash-point", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "crash"
        point = "before-record-deliverd" # <-
    """), "timeline[0].point: 'before-record-deliverd' is not a crash point (known: "
          "before-persist, before-send, before-record-delivered, before-record-failed, "
          "before-record-suspended, before-record-cleanup, before-claim-reserved, "
          "before-claim-attempted, before-claim-consumed, before-save-evidence, "
          "before-clear-claim, before-claim-abandoned, before-reopen, before-redrive)"),
    ("field-that-disarms-a-send-fault", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "send-transient"
        actor = "delivery" # <-
    """), "timeline[0].actor: does not apply to a 'send-transient' fault "
          "(it takes: at, fault, child, count, error, chain)"),
    ("child-on-a-crash", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "crash"
        point = "before-send"
        child = "a" # <-
    """), "timeline[0].child: does not apply to a 'crash' fault "
          "(it takes: at, fault, actor, point, count, restart_after)"),
    ("unknown-timeline-fault", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 0
        fault = "meteor" # <-
    """), "timeline[0].fault: 'meteor' is not one of: send-transient, send-permanent, "
          "send-partial, send-other, send-ambiguous, duplicate, delay, crash, abort, chunk-fail, "
          "chunk-abort, ack-slow, callback-fail, recovery-fail, mirror-fail"),
    ("chunk-chars-without-channel", textwrap.dedent("""\
        [[sessions]]
        key = "agent:main:main"
        chunk_chars = 100 # <-
    """), "sessions[0].chunk_chars: needs an external channel"),
    ("chunk-chars-zero", textwrap.dedent("""\
        [[sessions]]
        key = "agent:main:main"
        channel = "telegram"
        chunk_chars = 0 # <-
    """), "sessions[0].chunk_chars: must be at least 1"),
    ("chunk-chars-huge", textwrap.dedent("""\
        [[sessions]]
        key = "agent:main:main"
        channel = "telegram"
        chunk_chars = 100001 # <-
    """), "sessions[0].chunk_chars: must be at most 100,000 (the limit)"),
    ("bad-channel-name", textwrap.dedent("""\
        [[sessions]]
        key = "agent:main:main"
        channel = "Tele gram" # <-
    """), "sessions[0].channel: 'Tele gram' is not a channel name like 'telegram'"),
    ("unknown-fault-kind", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [faults]
        kinds = [
          "crash",
          "meteor", # <-
        ]
    """), f"faults.kinds[1]: unknown fault kind 'meteor' (known: {', '.join(FAULT_KINDS)}, "
          'or "all")'),
    ("fault-kinds-string", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [faults]
        kinds = "crash" # <-
    """), """faults.kinds: must be an array of fault kinds or "all", not 'crash'"""),
    ("unknown-mutant", 'mutants = ["fresh-key-after-restart", "nope"] # <-\n' + SESSION
     + '[[children]]\nid = "a"\n',
     f"mutants[1]: unknown mutant 'nope' (known: {', '.join(MUTANTS)})"),
    ("unknown-invariant", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [expect]
        violations = ["at-most-once", "at-least-twice"] # <-
    """), f"expect.violations[1]: unknown invariant 'at-least-twice' "
          f"(known: {', '.join(BY_NAME)})"),
    ("expectation-for-unknown-child", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [expect]
        [[expect.children]]
        child = "a"
        [[expect.children]]
        child = "zz" # <-
    """), "expect.children[1].child: 'zz' is not one of the [[children]]"),
    ("negative-expected-count", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [expect]
        [[expect.children]]
        child = "a"
        received = -1 # <-
    """), "expect.children[0].received: must be at least 0"),
    ("covers-not-a-requirement", 'covers = ["DEL-3", "del-4"] # <-\n' + SESSION
     + '[[children]]\nid = "a"\n', "covers[1]: 'del-4' is not a requirement ID like 'DEL-3'"),
    ("bad-session-label", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        session = "two words" # <-
    """), "children[0].session: 'two words' may only use letters, digits, '-' and '_'"),
    ("cleanup-without-child", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]] # <-
        at = 5
        event = "cleanup"
    """), "timeline[0].child: a cleanup names the child whose session it deletes"),
    ("archive-read-with-a-crash-field", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = 5
        event = "archive-read"
        child = "a"
        point = "before-send" # <-
    """), "timeline[0].point: does not apply to a 'archive-read' event (it takes: at, event, "
          "child, limit, offset, include_tools, caller)"),
    ("negative-spawn-time", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        spawn_at = -5 # <-
    """), "children[0].spawn_at: must be at least 0 seconds"),
    ("negative-fault-time", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]]
        at = -0.5 # <-
        fault = "duplicate"
    """), "timeline[0].at: must be at least 0 seconds"),
    ("missing-required-field", SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"
        [[timeline]] # <-
        fault = "duplicate"
    """), "timeline[0].at: is missing"),
    ("sessions-not-an-array", textwrap.dedent("""\
        [sessions] # <-
        key = "agent:main:main"
        [[children]]
        id = "a"
    """), "sessions: must be an array of tables ([[sessions]]), not a table"),
    ("bad-session-key", textwrap.dedent("""\
        [[sessions]]
        key = "main" # <-
        [[children]]
        id = "a"
    """), "sessions[0].key: 'main' is not a session key like 'agent:main:main'"),
    # No line holds what is missing: the document as a whole is line 1.
    ("missing-sessions", textwrap.dedent("""\
        name = "nobody to deliver to" # <-
        [[children]]
        id = "a"
    """), "sessions: at least one [[sessions]] is required"),
    ("no-children-and-no-workload", textwrap.dedent("""\
        name = "an empty world" # <-
        """) + SESSION, "children: the world has no children (add [[children]] or [workload])"),
]


@pytest.mark.parametrize(("text", "message"), [(t, m) for _, t, m in CASES],
                         ids=[c[0] for c in CASES])
def test_malformed_scenario_is_one_located_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    line = marked_line(text)
    err = load_error(path)
    assert str(err) == f"{path}:{line}: {message}"
    assert err.line == line
    assert "\n" not in str(err)


# A multi-line string may hold lines that look like headers, keys or string delimiters; none of
# them may move the line numbers of what follows.
MULTILINE: list[tuple[str, list[str]]] = [
    ("basic", [
        'name = "tricky"',
        'description = """',
        "[[children]]",
        'id = "ghost"',
        "[expect]",
        "run_fro = 1",
        '"""',
    ]),
    ("literal", [
        'name = "tricky"',
        "description = '''",
        "[[children]]",
        "id = 'ghost'",
        "'''",
    ]),
    ("escaped-quotes-inside", [
        'description = """',
        'she wrote \\""" and left',
        "[[children]]",
        'id = "ghost"',
        '"""',
    ]),
    ("other-delimiter-inside", [
        'description = """',
        "a ''' inside",
        "[[children]]",
        'id = "ghost"',
        '"""',
        "name = 'the \"\"\" is literal here'",
    ]),
    ("ends-with-extra-quotes", [
        'description = """',
        "[[children]]",
        'quoted at the end: ""\\"""',
        'name = "x # not a comment"  # see """',
    ]),
    ("unicode-line-breaks-in-a-string", [
        'name = "one\u2028two\x85three\u2029four"',
        "description = 'five\u2028six\x85seven'",
    ]),
    ("one-line-triple-quotes", [
        'description = """[[children]] id = "ghost" """',
        "name = '''[expect]'''",
    ]),
]


@pytest.mark.parametrize("prefix", ["\n".join(lines) + "\n" for _, lines in MULTILINE],
                         ids=[name for name, _ in MULTILINE])
def test_multiline_strings_do_not_confuse_line_numbers(tmp_path: Path, prefix: str) -> None:
    text = prefix + SESSION + textwrap.dedent("""\
        [[children]]
        id = "a"

        [[children]]
        id = "b"
        run_fro = 10 # <-
    """)
    path = tmp_path / "multi.toml"
    path.write_text(text, encoding="utf-8")
    err = load_error(path)
    assert str(err) == (f"{path}:{marked_line(text)}: children[1].run_fro: unknown field "
                        f"(expected one of: {CHILD_FIELDS})")


def test_multiline_string_content_is_kept(tmp_path: Path) -> None:
    prefix = "\n".join(MULTILINE[0][1]) + "\n"
    loaded = scenario.loads(prefix + SESSION + '[[children]]\nid = "a"\n', "m.toml")
    assert loaded.description == '[[children]]\nid = "ghost"\n[expect]\nrun_fro = 1\n'
    assert [c.id for c in loaded.children] == ["a"]


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(SESSION.encode() + b'[[children]]\nid = "a"\nreply = "caf\xe9"\n')
    assert str(load_error(path)) == (f"{path}:5: not UTF-8 text: invalid continuation byte")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.toml"
    err = load_error(path)
    # There is no line to point at in a file that does not exist.
    assert str(err) == f"{path}: cannot read: No such file or directory"
    assert err.line is None


def test_a_folder_is_not_a_scenario(tmp_path: Path) -> None:
    assert str(load_error(tmp_path)) == f"{tmp_path}: is a folder, not a file"


# -- the line finder on its own ------------------------------------------------------------------


def test_positions_number_nested_arrays_of_tables_like_toml() -> None:
    text = textwrap.dedent("""\
        [[a]]
        x = 1
        [[a.b]]
        y = 1
        [[a]]
        [[a.b]]
        y = 2
        [[a.b]]
        y = 3
        [a.c]
        z = 1
    """)
    positions = Positions(text)
    assert positions.line("a", 0, "x") == 2
    assert positions.line("a", 0, "b", 0, "y") == 4
    assert positions.line("a", 1) == 5
    assert positions.line("a", 1, "b", 0, "y") == 7
    assert positions.line("a", 1, "b", 1, "y") == 9
    assert positions.line("a", 1, "c", "z") == 11
    # Unknown keys fall back to their table, and to the document's first line.
    assert positions.line("a", 1, "b", 1, "nope") == 8
    assert positions.line("nope") == 1


def test_positions_follow_quoted_and_dotted_keys_and_multiline_arrays() -> None:
    text = textwrap.dedent("""\
        "quoted key" = 1
        site."google.com".x = [
          1,  # a comment with ] and "
          [2, 3],
          { k = "}" },
        ]
        ['lit.eral']
        v = 'a # not a comment'
        w = 2
    """)
    positions = Positions(text)
    assert positions.line("quoted key") == 1
    assert positions.line("site", "google.com", "x") == 2
    assert positions.line("site", "google.com", "x", 1) == 4
    assert positions.line("site", "google.com", "x", 2, "k") == 5
    assert positions.line("lit.eral", "w") == 9


def test_positions_with_windows_line_endings() -> None:
    text = SESSION + '[[children]] # first\nid = "a"\n[[children]]\nid = "b"\nbogus = 1 # <-\n'
    with pytest.raises(InputError) as caught:
        scenario.loads(text.replace("\n", "\r\n"), "crlf.toml")
    assert str(caught.value) == (f"crlf.toml:{marked_line(text)}: children[1].bogus: unknown "
                                 f"field (expected one of: {CHILD_FIELDS})")


def _relabel(value: Any, counter: Iterator[int]) -> Any:
    """Give every key in the document a unique name, so its line can be found by text."""
    if isinstance(value, dict):
        return {f"k{next(counter)}": _relabel(v, counter) for v in value.values()}
    if isinstance(value, list):
        return [_relabel(v, counter) for v in value]
    return value


def _leaves(value: dict[str, Any], path: tuple[str | int, ...] = ()) -> Iterator[
        tuple[tuple[str | int, ...], str]]:
    for key, item in value.items():
        if isinstance(item, dict):
            yield from _leaves(item, (*path, key))
        elif isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
            for index, element in enumerate(item):
                yield from _leaves(element, (*path, key, index))
        else:
            yield (*path, key), key


_SCALARS = (st.integers() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=30) | st.text(alphabet='"\'\\\n[]=#{},. ab', max_size=30))
_KEYS = st.text(alphabet="ab", min_size=1, max_size=4)
_DOCUMENTS = st.dictionaries(_KEYS, st.recursive(
    _SCALARS | st.lists(_SCALARS, max_size=3),
    lambda inner: (st.dictionaries(_KEYS, inner, max_size=4)
                   | st.lists(st.dictionaries(_KEYS, inner, min_size=1, max_size=3),
                              min_size=1, max_size=3)),
    max_leaves=20), max_size=5)


@settings(max_examples=150, deadline=None)
@given(_DOCUMENTS, st.booleans())
def test_positions_find_every_key_of_any_document(document: dict[str, Any],
                                                  multiline: bool) -> None:
    document = _relabel(document, itertools.count())
    text = tomli_w.dumps(document, multiline_strings=multiline)
    tomllib.loads(text)  # valid TOML (a multi-line string may come back with \n for \r\n)
    lines = text.split("\n")  # TOML lines; str.splitlines() would also split at U+0085 etc.
    positions = Positions(text)
    for path, key in _leaves(document):
        line = positions.line(*path)
        assert re.search(rf"(^|[{{,]\s*){key} = ", lines[line - 1]), (path, line, text)
