"""DEL-4, DEL-5: route resolution (actors/gateway/routing.py), its oracle, its scenario keys and
draws."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from actors import mutants
from actors.gateway import routing
from actors.gateway.routing import WEBCHAT, SessionRouting
from actors.messages import Target
from sim import invariants, scenario
from sim.choices import Chooser
from sim.invariants.gateway.routes import expected_target
from sim.world import core as world
from sim.world.draws.routes import draw_routing
from tests.scenario.test_scenario import load_error, marked_line

ORIGIN = Target("telegram", "chat-1", "topic-1")


def target(routing_: SessionRouting, mutants: tuple[str, ...] = ()) -> Target | None:
    return routing.resolve(routing_, mutants).target


@pytest.mark.parametrize(("facts", "want", "probe"), [
    # A binding beats the hook and keeps its explicit thread.
    (SessionRouting(ORIGIN, binding=Target(None, "chat-2", "bound-7"),
                    hook=Target("discord", "chan-5")),
     Target("telegram", "chat-2", "bound-7"), "route.bound"),
    # A hook naming another chat: the old thread is not inherited.
    (SessionRouting(ORIGIN, hook=Target("telegram", "chat-3")),
     Target("telegram", "chat-3"), "route.thread-not-inherited"),
    # ... another channel, the same chat id: still another chat.
    (SessionRouting(ORIGIN, hook=Target("discord", "chat-1")),
     Target("discord", "chat-1"), "route.thread-not-inherited"),
    # A hook naming the same chat: the thread may follow.
    (SessionRouting(ORIGIN, hook=Target(None, "chat-1")),
     Target("telegram", "chat-1", "topic-1"), "route.thread-inherited"),
    # A hook returning only webchat leaves the origin in place.
    (SessionRouting(ORIGIN, hook=Target(WEBCHAT)), ORIGIN, "route.hook-ignored"),
    # The origin beats a stale stored route.
    (SessionRouting(ORIGIN, stored=Target("telegram", "chat-9", "topic-9")), ORIGIN, None),
    # A channel-only origin is filled from a compatible stored route (chat and thread).
    (SessionRouting(Target("telegram"), stored=Target("telegram", "chat-9", "topic-9")),
     Target("telegram", "chat-9", "topic-9"), "route.origin-filled-from-stored"),
    # ... but not from a stored route on another channel: no chat, so internal.
    (SessionRouting(Target("telegram"), stored=Target("discord", "chan-2")), None,
     "route.internal"),
    # A threadless origin takes the stored thread only when the chat is the same.
    (SessionRouting(Target("telegram", "chat-1"), stored=Target("telegram", "chat-1", "t9")),
     Target("telegram", "chat-1", "t9"), "route.origin-filled-from-stored"),
    (SessionRouting(Target("telegram", "chat-1"), stored=Target("telegram", "chat-2", "t9")),
     Target("telegram", "chat-1"), None),
    # No origin: the stored route is the fallback.
    (SessionRouting(stored=Target("discord", "chan-2")), Target("discord", "chan-2"),
     "route.stored-fallback"),
    # A webchat origin inherits no earlier external target.
    (SessionRouting(Target(WEBCHAT), stored=Target("telegram", "chat-9")), None,
     "route.webchat-ignores-stored"),
    # ... though an explicit external route still works.
    (SessionRouting(Target(WEBCHAT), hook=Target("telegram", "chat-3")),
     Target("telegram", "chat-3"), "route.hook"),
    # Nothing at all: internal injection.
    (SessionRouting(), None, "route.internal"),
])
def test_each_branch_of_del_5(facts: SessionRouting, want: Target | None,
                              probe: str | None) -> None:
    resolution = routing.resolve(facts)
    assert resolution.target == want
    if probe is not None:
        assert probe in resolution.probes


def test_the_mutants_break_the_thread_rule_and_the_order() -> None:
    other_chat = SessionRouting(ORIGIN, hook=Target("telegram", "chat-3"))
    assert target(other_chat, (mutants.MUTANT_OVERRIDE_KEEPS_THREAD,)) == Target(
        "telegram", "chat-3", "topic-1")
    stale = SessionRouting(ORIGIN, stored=Target("telegram", "chat-9", "topic-9"))
    assert target(stale, (mutants.MUTANT_STORED_ROUTE_BEATS_ORIGIN,)) == Target(
        "telegram", "chat-9", "topic-9")


def _facts() -> list[SessionRouting]:
    """Every combination of a small vocabulary of routing facts."""
    origins = [None, Target(WEBCHAT), Target("telegram"), Target("telegram", "chat-1"), ORIGIN]
    stored = [None, Target("telegram", "chat-1", "t9"), Target("telegram", "chat-9", "t9"),
              Target("discord", "chat-1")]
    overrides = [None, Target(None, "chat-1"), Target("telegram", "chat-2", "b1"),
                 Target("discord", "chan-5")]
    hooks = [*overrides, Target(WEBCHAT)]
    return [SessionRouting(*f) for f in itertools.product(origins, stored, overrides, hooks)]


def _as_recorded(facts: SessionRouting) -> dict[str, object]:
    def js(t: Target | None) -> object:
        return None if t is None else t.to_json()
    return {"origin": js(facts.origin), "route": js(facts.stored), "binding": js(facts.binding),
            "hook": js(facts.hook)}


def test_the_oracle_restates_the_same_rules() -> None:
    """The oracle's restatement (no import of the model) agrees with the model on every
    combination of the vocabulary; each mutant disagrees on some."""
    disagree = {m: 0 for m in (mutants.MUTANT_OVERRIDE_KEEPS_THREAD,
                               mutants.MUTANT_STORED_ROUTE_BEATS_ORIGIN)}
    for facts in _facts():
        got = target(facts)
        want = expected_target(_as_recorded(facts))
        assert (None if got is None else (got.channel, got.to, got.thread)) == want, facts
        for mutant in disagree:
            broken = target(facts, (mutant,))
            disagree[mutant] += broken != got
    assert all(disagree.values()), disagree


def test_the_default_world_draws_every_branch() -> None:
    session = scenario.load("sim/default_world.toml").sessions[0]
    probes: set[str] = set()
    for seed in range(1, 301):
        drawn = draw_routing(Chooser(seed, "random"), session)
        probes.update(routing.resolve(drawn.routing).probes)
    assert probes >= {"route.bound", "route.hook", "route.hook-ignored", "route.stored-fallback",
                      "route.origin-filled-from-stored", "route.webchat-ignores-stored",
                      "route.thread-not-inherited", "route.thread-inherited", "route.internal"}


SCENARIO = textwrap.dedent("""\
    [[sessions]]
    key = "agent:main:main"
    channel = "telegram"
    to = "chat-1"
    thread = "topic-1"
    hook = { channel = "telegram", to = "chat-3" }

    [[children]]
    id = "c1"
    run_for = 5
    reply = "done"
""")


def test_the_oracle_reads_the_channel_not_the_model() -> None:
    loaded = scenario.loads(SCENARIO)
    assert not invariants.check(world.run(loaded).trace.records, ["route-as-configured"])
    broken = world.run(loaded, mutants=[mutants.MUTANT_OVERRIDE_KEEPS_THREAD])
    found = invariants.check(broken.trace.records, ["route-as-configured"])
    assert found and "chat-3, thread topic-1" in found[0].message


def test_a_nested_or_webchat_requester_sends_nothing_to_a_channel() -> None:
    text = SCENARIO.replace('channel = "telegram"\nto = "chat-1"\nthread = "topic-1"\n'
                            'hook = { channel = "telegram", to = "chat-3" }',
                            'channel = "webchat"')
    run = world.run(scenario.loads(text))
    assert [r for r in run.trace.records if r.kind == "requester.accept"]
    assert not [r for r in run.trace.records if r.kind == "gateway.chunk"]
    # Recorded as a channel send although webchat is internal: the oracle objects.
    records = [r for r in world.run(scenario.loads(SCENARIO)).trace.records
               if r.kind != "world.session"]
    session = next(r for r in run.trace.records if r.kind == "world.session")
    assert invariants.check([session, *records], ["route-as-configured"])


BAD: list[tuple[str, str, str]] = [
    ("webchat-chunks", 'channel = "webchat"\nchunk_chars = 100 # <-',
     "sessions[0].chunk_chars: needs an external channel"),
    ("to-without-channel", 'to = "chat-1" # <-',
     "sessions[0].to: needs an external channel (the origin's chat)"),
    ("thread-with-webchat", 'channel = "webchat"\nthread = "t1" # <-',
     "sessions[0].thread: needs an external channel (the origin's chat)"),
    ("chat-with-space", 'channel = "telegram"\nto = "chat 1" # <-',
     "sessions[0].to: 'chat 1' is not a chat id (no spaces, 1 to 128 characters)"),
    ("route-without-channel", 'route = { to = "chat-9" } # <-',
     "sessions[0].route.channel: a stored route names its channel"),
    ("route-webchat", 'route = { channel = "webchat", to = "x" } # <-',
     "sessions[0].route.channel: a route is an external target, not webchat"),
    ("binding-without-chat", 'binding = { thread = "t1" } # <-',
     "sessions[0].binding.to: a binding names its chat"),
    ("hook-webchat-and-chat", 'hook = { channel = "webchat", to = "x" } # <-',
     "sessions[0].hook.to: a hook that returns webchat returns nothing else"),
    ("hook-unknown-key", 'hook = { chat = "x" } # <-',
     "sessions[0].hook.chat: unknown field (expected one of: channel, to, thread)"),
    ("owners-empty", "owners = [] # <-", "sessions[0].owners: must not be empty"),
    ("owner-name", 'owners = ["a b"] # <-',
     "sessions[0].owners[0]: 'a b' is not a person's name (letters, digits, - and _)"),
]


@pytest.mark.parametrize(("lines", "message"), [(t, m) for _, t, m in BAD],
                         ids=[c[0] for c in BAD])
def test_bad_routing_facts_are_one_located_line(tmp_path: Path, lines: str,
                                                message: str) -> None:
    text = f'[[sessions]]\nkey = "agent:main:main"\n{lines}\n[[children]]\nid = "a"\n'
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert str(load_error(path)) == f"{path}:{marked_line(text)}: {message}"


@pytest.mark.parametrize(("lines", "message"), [
    ('caller = "report:zz" # <-', "children[0].caller: 'report:zz': no child 'zz' among the "
     "[[children]]"),
    ('caller = "a b" # <-', "children[0].caller: 'a b' is not a person's name or "
     "'report:<child>'"),
])
def test_bad_callers_are_one_located_line(tmp_path: Path, lines: str, message: str) -> None:
    text = f'[[sessions]]\nkey = "agent:main:main"\n[[children]]\nid = "a"\n{lines}\n'
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert str(load_error(path)) == f"{path}:{marked_line(text)}: {message}"


def test_a_bad_sent_to_expectation(tmp_path: Path) -> None:
    text = ('[[sessions]]\nkey = "agent:main:main"\n[[children]]\nid = "a"\n[expect]\n'
            '[[expect.children]]\nchild = "a"\nsent_to = "telegram" # <-\n')
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert str(load_error(path)) == (
        f"{path}:{marked_line(text)}: expect.children[0].sent_to: 'telegram' is not "
        "'channel chat', 'channel chat thread' or 'none'")
