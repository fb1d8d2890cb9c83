"""Private parent completion's pure rules (actors/private/rules.py): spawn refusals, the hold
decision, the window, and the hand-off rendering (PRV-1..8)."""

from __future__ import annotations

import itertools

import attrs
import pytest

from actors.delivery.shell import render, requester_kind
from actors.private.rules import (
    HANDOFF_UNAVAILABLE,
    PRIVATE_WINDOW_MS,
    Hold,
    Runtime,
    SpawnMode,
    SpawnOptions,
    private_hold,
    spawn_refusal,
    window_deadline_ms,
    window_start_ms,
)
from actors.records.run_record import HandoffClosed, RunRecord, WindowStarted, apply
from actors.states import DeliveryStatus, OutcomeStatus
from actors.store.durable import RunStore
from actors.yields.turns import TurnState

_FORBIDDEN = {
    "runtime": (Runtime.ACP, 'runtime "acp"'),
    "collect": (True, "collect: true"),
    "visible": (True, "visible: true"),
    "thread": (True, "thread: true"),
    "mode": (SpawnMode.SESSION, 'mode: "session"'),
}


def test_plain_private_spawn_is_accepted() -> None:
    assert spawn_refusal("parent", SpawnOptions(), expects_completion=True) is None


def test_no_target_changes_nothing() -> None:
    # The options are only refused together with completionTarget (the default mode stays).
    options = SpawnOptions(Runtime.ACP, True, True, True, SpawnMode.SESSION)
    assert spawn_refusal(None, options, expects_completion=False) is None


def test_other_targets_are_refused_before_dispatch() -> None:
    assert spawn_refusal("channel", SpawnOptions(), True) == (
        'completionTarget must be "parent" (got "channel")')


@pytest.mark.parametrize("option", sorted(_FORBIDDEN))
def test_each_forbidden_option_is_named(option: str) -> None:
    value, words = _FORBIDDEN[option]
    refusal = spawn_refusal("parent", SpawnOptions(**{option: value}), True)
    assert refusal == (f'completionTarget "parent" cannot be combined with {words}: only '
                       "hidden, native, one-shot runs complete privately")


def test_expects_completion_false_is_refused() -> None:
    refusal = spawn_refusal("parent", SpawnOptions(), expects_completion=False)
    assert refusal is not None and "expectsCompletionMessage: false" in refusal


def test_every_combination_names_all_its_forbidden_options() -> None:
    for flags in itertools.product((False, True), repeat=6):
        chosen = [name for name, on in zip(sorted(_FORBIDDEN), flags[:5], strict=True) if on]
        options = SpawnOptions(**{name: _FORBIDDEN[name][0] for name in chosen})
        refusal = spawn_refusal("parent", options, expects_completion=not flags[5])
        if not chosen and not flags[5]:
            assert refusal is None
            continue
        assert refusal is not None
        for name in chosen:
            assert _FORBIDDEN[name][1] in refusal
        assert ("expectsCompletionMessage" in refusal) == flags[5]


BOUND = 1


def test_hold_retains_while_the_turn_is_open() -> None:
    assert private_hold(TurnState.OPEN, BOUND, BOUND) is Hold.RETAIN


def test_hold_releases_on_normal_finish_and_batches_on_yield() -> None:
    assert private_hold(TurnState.FINISHED, BOUND, BOUND) is Hold.RELEASE
    assert private_hold(None, BOUND, BOUND) is Hold.RELEASE  # spawned outside any turn
    assert private_hold(TurnState.YIELDED, BOUND, BOUND) is Hold.BATCH


@pytest.mark.parametrize("turn", [*TurnState, None])
@pytest.mark.parametrize("current", [2, None])
def test_a_changed_or_deleted_incarnation_closes_whatever_the_turn(
        turn: TurnState | None, current: int | None) -> None:
    assert private_hold(turn, BOUND, current) is Hold.CLOSE


def test_the_window_counts_from_the_release() -> None:
    # A child that ended 31 minutes before its turn settled still has its whole window (PRV-7).
    ended, settled = 60_000, 60_000 + 31 * 60_000
    start = window_start_ms(settled, ended)
    assert start == settled
    assert window_deadline_ms(start) == settled + 30 * 60_000 == start + PRIVATE_WINDOW_MS
    # One that finishes after its turn settled is released as it finishes.
    assert window_start_ms(settled, settled + 5_000) == settled + 5_000


def _record() -> RunRecord:
    record = RunRecord("run-1", "c1", "agent:main:subagent:c1", "agent:main:main", "task", True,
                       created_at_ms=0, ended_at_ms=90_000, outcome_status=OutcomeStatus.OK,
                       result_text="the private answer", child_session_id="sess-run-1",
                       started_at_ms=0, private=True)
    return apply(record, WindowStarted(100_000))


def test_private_hand_off_leaves_usage_out_and_is_byte_identical() -> None:
    kind = requester_kind("agent:main:main")
    before = _record()
    after = attrs.evolve(before, input_tokens=1200, output_tokens=80)
    assert render(before, kind) == render(after, kind)
    assert "Stats:" not in render(after, kind)
    assert "tokens" in render(after, kind, stats=True)  # what the known-bug variant sends


def test_changes_round_trip_through_the_store() -> None:
    store = RunStore()
    record = RunRecord("run-1", "c1", "agent:main:subagent:c1", "agent:main:main", "task", True,
                       created_at_ms=0, private=True)
    store.register(record)
    store.apply("run-1", WindowStarted(42))
    assert store.get("run-1").window_started_at_ms == 42
    store.apply("run-1", HandoffClosed(HANDOFF_UNAVAILABLE))
    row = store.get("run-1")
    assert row.private is True
    assert row.delivery_status == DeliveryStatus.DISCARDED
    assert row.last_error == HANDOFF_UNAVAILABLE
    assert apply(apply(record, WindowStarted(42)), HandoffClosed(HANDOFF_UNAVAILABLE)) == row


_SCENARIO = '[[sessions]]\nkey = "agent:main:main"\n[[children]]\nid = "c1"\n'


@pytest.mark.parametrize(("lines", "message"), [
    ('collect = true', "children[0].collect: is modelled only together with completion_target"),
    ('completion_target = "parent"\nruntime = "python"', "children[0].runtime: "),
    ('completion_target = "Parent!"', "children[0].completion_target: 'Parent!' is not a target"),
    ('completion_target = "parent"\nmode = "forever"', "children[0].mode: "),
])
def test_bad_private_keys_are_one_located_line(lines: str, message: str) -> None:
    from actors.errors import InputError
    from sim.scenario import loads

    with pytest.raises(InputError) as caught:
        loads(_SCENARIO + lines + "\n", "s.toml")
    assert str(caught.value).startswith("s.toml:")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_private_keys_load() -> None:
    from sim.scenario import loads

    loaded = loads(_SCENARIO + 'completion_target = "parent"\nthread = true\nmode = "session"\n')
    [child] = loaded.children
    assert child.completion_target == "parent"
    assert child.options == SpawnOptions(thread=True, mode=SpawnMode.SESSION)
