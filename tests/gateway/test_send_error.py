"""Error chains and their delivery class (reference §c16, DEL-10): examples from the rule, the
rule as properties, retry timing by class in the simulator, the scenario syntax, and the two
DEL-10 oracles catching broken classifiers."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import actors.records.retry
from actors.errors import InputError
from actors.records.send_error import (
    PLATFORM_REJECTED,
    WRITER_CLAIM_REBOUND,
    ErrorClass,
    SendError,
    classify,
)
from sim import scenario
from sim.faults.errors import OTHER_ERRORS, PARTIAL_ERRORS, PERMANENT_ERRORS, TRANSIENT_ERRORS
from sim.invariants.delivery.send_errors import chain_class
from sim.world import core as world
from tests.conftest import SCENARIOS

T, P, S, O = ErrorClass.TRANSIENT, ErrorClass.PERMANENT, ErrorClass.SENT, ErrorClass.OTHER  # noqa: E741


# -- examples, each taken from the rule's own wording --------------------------------------------


@pytest.mark.parametrize("message, expected", [
    # transient patterns, case-insensitive with word boundaries
    ("errorcode=unavailable", T),
    ("ErrorCode=UNAVAILABLE", T),
    ("status: unavailable", T),
    ('status = "unavailable"', T),
    ("status=unavailable", T),
    ("No active WhatsApp Web listener", T),
    ("gateway not connected", T),
    ("gateway closed (1006 abnormal closure)", T),
    ("Gateway Timeout", T),
    ("connect ECONNREFUSED 127.0.0.1:18789", T),
    ("econnreset", T),
    ("ETIMEDOUT", T),
    ("getaddrinfo ENOTFOUND example.invalid", T),
    ("EHOSTUNREACH", T),
    ("Network error while sending", T),
    ("UNAVAILABLE", T),
    # word boundaries and the one case-sensitive pattern
    ("UNAVAILABLEX", O),
    ("unavailable", O),
    ("xeconnreset", O),
    ("errorcode=unavailablefoo", O),
    # the writer-claim rebound alone is transient
    (WRITER_CLAIM_REBOUND, T),
    # permanent patterns
    ("Chat not found", P),
    ("unsupported channel: fax", P),
    ("unknown channel", P),
    ("user not found", P),
    ("bot is not a member of the channel", P),
    ("bot was blocked by the user", P),
    ("Forbidden: bot was kicked from the group chat", P),
    ("recipient is not a valid phone number", P),
    ("outbound not configured for channel slack", P),
    # OpenClaw's closed-turn wording, and only that wording
    ("Session transcript keyed user is outside the current turn: announce:v1:x", P),
    ("Error: Session transcript keyed user is outside the current turn: k", P),
    ("Pending input is no longer active in its admitted transcript", P),
    ("Error: Pending input is no longer active in its admitted transcript", P),
    ("Session transcript keyed user is outside the current turn: ", O),
    ("Pending input is no longer active in its admitted transcript.", O),
    ("Pending input is no longer active in its admitted transcript\n", O),
    # the invented strings of the old classifier are no patterns at all
    ("message rejected", O),
    ("transcript turn mismatch", O),
    ("something odd happened", O),
])
def test_single_message(message: str, expected: ErrorClass) -> None:
    assert classify(SendError(message)) is expected


def test_chain_examples_in_order() -> None:
    # A permanent cause anywhere wins over the transient-looking wrapper (DEL-10).
    assert classify(SendError.of("gateway timeout", "chat not found")) is P
    # ... also over the writer-claim rebound around it.
    assert classify(SendError.of(WRITER_CLAIM_REBOUND, "bot was blocked by the user")) is P
    assert classify(SendError.of("transcript append failed", WRITER_CLAIM_REBOUND)) is T
    # A writer-claim message and a permanent phrase in the same link: OpenClaw skips the
    # permanent patterns on the writer-claim link itself, so it is transient (issue 24) ...
    assert classify(SendError(f"{WRITER_CLAIM_REBOUND}: chat not found")) is T
    assert chain_class(SendError(f"chat not found; {WRITER_CLAIM_REBOUND}").to_json()) == \
        "transient"
    # ... unless a typed platform rejection, or another link, says permanent.
    assert classify(SendError(f"{WRITER_CLAIM_REBOUND}: chat not found",
                              platform_error=PLATFORM_REJECTED)) is P
    assert classify(SendError.of(f"{WRITER_CLAIM_REBOUND}: x", "chat not found")) is P
    # Send evidence anywhere makes it never transient, never resent; it wins over permanent too.
    assert classify(SendError.of("ECONNRESET", sent_before_error=True)) is S
    assert classify(SendError("outer", SendError("chat not found", visible_reply_sent=True))) is S
    # A platform "message not dispatched" type is permanent whatever the text says.
    assert classify(SendError("send failed", platform_error=PLATFORM_REJECTED)) is P
    assert classify(SendError("gateway timeout", platform_error="rate_limited")) is T


def test_chain_text_and_json_form() -> None:
    chain = SendError("outer", SendError("inner", sent_before_error=True,
                                         platform_error=PLATFORM_REJECTED))
    assert chain.text() == "outer: inner"
    assert chain.to_json() == {"message": "outer", "cause": {
        "message": "inner", "sentBeforeError": True, "platformError": PLATFORM_REJECTED}}
    assert SendError.from_json(chain.to_json()) == chain


def test_the_fault_catalogue_draws_every_class() -> None:
    for catalogue, expected in ((TRANSIENT_ERRORS, T), (PERMANENT_ERRORS, P),
                                (PARTIAL_ERRORS, S), (OTHER_ERRORS, O)):
        assert {classify(chain) for chain in catalogue} == {expected}
    assert any(chain.cause is not None and classify(chain.cause) is P
               for chain in PERMANENT_ERRORS)  # a wrapped permanent cause
    assert any(WRITER_CLAIM_REBOUND in chain.text() for chain in TRANSIENT_ERRORS)
    assert any(WRITER_CLAIM_REBOUND in chain.text() for chain in PERMANENT_ERRORS)


# -- the rule as properties ----------------------------------------------------------------------

# Filler that can never form a pattern: digits, spaces and punctuation only.
filler = st.text(alphabet="0123456789 .,;:-/()#", max_size=20)
TRANSIENT_WORDS = ("errorcode=unavailable", "status: unavailable", "no active web listener",
                   "gateway not connected", "gateway closed (1006", "gateway timeout",
                   "econnreset", "econnrefused", "etimedout", "enotfound", "ehostunreach",
                   "network error")
PERMANENT_WORDS = ("unsupported channel", "unknown channel", "chat not found", "user not found",
                   "bot not member", "bot was blocked by the user", "forbidden: bot was kicked",
                   "recipient is not a valid", "outbound not configured for channel")


@st.composite
def any_case(draw: st.DrawFn, words: tuple[str, ...]) -> str:
    word = draw(st.sampled_from(words))
    flips = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    return "".join(c.upper() if f else c.lower() for c, f in zip(word, flips, strict=True))


@st.composite
def message_with(draw: st.DrawFn, words: st.SearchStrategy[str]) -> str:
    return draw(filler) + " " + draw(words) + " " + draw(filler)


def chain_of(messages: list[str], evidence_at: int | None = None,
             evidence: str = "sent") -> SendError:
    error: SendError | None = None
    for i in reversed(range(len(messages))):
        flagged = evidence_at == i
        error = SendError(messages[i], error,
                          sent_before_error=flagged and evidence == "sent",
                          visible_reply_sent=flagged and evidence == "visible")
    assert error is not None
    return error


plain = st.lists(filler, min_size=0, max_size=3)


@settings(max_examples=300, deadline=None)
@given(plain, st.data())
def test_rule_a_transient_word_in_any_case_anywhere_is_transient(
    others: list[str], data: st.DataObject,
) -> None:
    word = data.draw(message_with(any_case(TRANSIENT_WORDS)))
    at = data.draw(st.integers(0, len(others)))
    assert classify(chain_of([*others[:at], word, *others[at:]])) is T


@settings(max_examples=300, deadline=None)
@given(plain, st.data())
def test_rule_a_permanent_cause_anywhere_wins_over_transient_and_rebound(
    others: list[str], data: st.DataObject,
) -> None:
    permanent = data.draw(message_with(any_case(PERMANENT_WORDS)))
    noise = data.draw(st.lists(st.one_of(message_with(any_case(TRANSIENT_WORDS)),
                                         st.just(WRITER_CLAIM_REBOUND), filler), max_size=3))
    messages = [*others, *noise]
    at = data.draw(st.integers(0, len(messages)))
    assert classify(chain_of([*messages[:at], permanent, *messages[at:]])) is P


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_rule_send_evidence_anywhere_means_never_transient(data: st.DataObject) -> None:
    messages = data.draw(st.lists(st.one_of(message_with(any_case(TRANSIENT_WORDS)),
                                            message_with(any_case(PERMANENT_WORDS)),
                                            st.just(WRITER_CLAIM_REBOUND), filler),
                                  min_size=1, max_size=4))
    at = data.draw(st.integers(0, len(messages) - 1))
    evidence = data.draw(st.sampled_from(("sent", "visible")))
    assert classify(chain_of(messages, at, evidence)) is S


@settings(max_examples=300, deadline=None)
@given(plain, st.data())
def test_rule_the_rebound_without_a_permanent_cause_is_transient(
    others: list[str], data: st.DataObject,
) -> None:
    at = data.draw(st.integers(0, len(others)))
    rebound = data.draw(filler) + WRITER_CLAIM_REBOUND + data.draw(filler)
    assert classify(chain_of([*others[:at], rebound, *others[at:]])) is T


ANCHORED_WORDS = ("errorcode=unavailable", "econnreset", "econnrefused", "etimedout",
                  "enotfound", "ehostunreach", "network error", "unavailable")


@settings(max_examples=300, deadline=None)
@given(any_case(ANCHORED_WORDS), st.sampled_from("abcxyzXYZ_0123456789"))
def test_rule_word_bounded_patterns_need_word_boundaries(word: str, glue: str) -> None:
    # Glued to a word character on both ends, a \b-anchored pattern does not match.
    assert classify(SendError(glue + word + glue)) is O


@settings(max_examples=300, deadline=None)
@given(st.lists(filler, min_size=1, max_size=4))
def test_rule_no_pattern_no_evidence_is_left_to_the_registry(messages: list[str]) -> None:
    assert classify(chain_of(messages)) is O


CLOSED_TURN = ("Session transcript keyed user is outside the current turn: k",
               "Error: Pending input is no longer active in its admitted transcript")
link_messages = st.one_of(st.text(max_size=30), message_with(any_case(TRANSIENT_WORDS)),
                          message_with(any_case(PERMANENT_WORDS)), st.sampled_from(CLOSED_TURN),
                          st.just(WRITER_CLAIM_REBOUND), st.just("UNAVAILABLE"))
platform = st.none() | st.sampled_from([PLATFORM_REJECTED, "rate_limited"])
links = st.builds(SendError, link_messages, st.none(), st.booleans(), st.booleans(), platform)


@settings(max_examples=300, deadline=None)
@given(st.recursive(links, lambda inner: st.builds(
    SendError, link_messages, inner, st.booleans(), st.booleans(), platform), max_leaves=4))
def test_rule_the_json_form_carries_the_whole_chain(chain: SendError) -> None:
    assert SendError.from_json(chain.to_json()) == chain
    # The DEL-10 oracle restates the class from the reference on its own, from the JSON form.
    assert chain_class(chain.to_json()) == classify(chain).value


# -- retry timing by class, seen at the gateway --------------------------------------------------


def _sends(result: world.RunResult, run_child: str) -> list[int]:
    runs = {r.data["run_id"] for r in result.trace.records
            if r.kind == "spawn" and r.data["child"] == run_child}
    return [r.t_ms for r in result.trace.records
            if r.kind == "gateway.send" and r.data["run_id"] in runs]


def _run(name: str) -> world.RunResult:
    result = world.run(scenario.load(SCENARIOS / name))
    assert result.violations == ()
    return result


def test_transient_classes_retry_in_the_transport_loop_after_5_s() -> None:
    result = _run("writer-claim-rebound.toml")
    first, second = _sends(result, "c1")
    assert second - first == 5_000
    listener = _sends(_run("unclassified-send-error.toml"), "listener")
    assert listener[1] - listener[0] == 5_000


def test_other_errors_wait_the_registry_backoff() -> None:
    first, second = _sends(_run("unclassified-send-error.toml"), "other")
    assert 15_000 <= second - first <= 18_000


@pytest.mark.parametrize("name, child", [
    ("error-after-partial-send.toml", "c1"),
    ("closed-turn-rejection.toml", "c1"),
    ("closed-turn-rejection.toml", "c2"),
    ("wrapped-permanent-error.toml", "c1"),
    ("unclassified-send-error.toml", "typed"),
])
def test_permanent_and_sent_chains_are_sent_once(name: str, child: str) -> None:
    assert len(_sends(_run(name), child)) == 1


def test_trace_records_carry_the_chain() -> None:
    result = _run("error-after-partial-send.toml")
    faults = [r for r in result.trace.records if r.kind == "fault"]
    assert faults[0].data["error"] == {"message": "announce delivery failed", "cause": {
        "message": "connect ECONNRESET 10.0.0.7:443", "sentBeforeError": True}}
    failed = [r for r in result.trace.records if r.kind == "delivery.send_failed"]
    assert failed[0].data["class"] == "sent"


# -- scenario syntax -----------------------------------------------------------------------------

_BASE = '[[sessions]]\nkey = "agent:main:main"\n[[children]]\nid = "c1"\n'


def test_scenario_chain_syntax() -> None:
    loaded = scenario.loads(_BASE + (
        '[[timeline]]\nat = 0\nfault = "send-partial"\n'
        '[[timeline.chain]]\nmessage = "outer"\n'
        '[[timeline.chain]]\nmessage = "inner"\nvisible_reply_sent = true\n'
        'platform_error = "x"\n'))
    assert loaded.timeline[0].error == SendError(
        "outer", SendError("inner", visible_reply_sent=True, platform_error="x"))
    one = scenario.loads(_BASE + '[[timeline]]\nat = 0\nfault = "send-other"\nerror = "e"\n')
    assert one.timeline[0].error == SendError("e")


@pytest.mark.parametrize("timeline, message", [
    ('fault = "send-other"\nerror = "e"\n[[timeline.chain]]\nmessage = "m"\n',
     "timeline[0].chain: give either error (one message) or chain, not both"),
    ('fault = "send-other"\n[[timeline.chain]]\nmesage = "m"\n',
     "timeline[0].chain[0].mesage: unknown field"),
    ('fault = "send-other"\n[[timeline.chain]]\nmessage = "m"\nsent_before_error = 1\n',
     "timeline[0].chain[0].sent_before_error: must be true or false"),
    ('fault = "delay"\n[[timeline.chain]]\nmessage = "m"\n',
     "timeline[0].chain: does not apply to a 'delay' fault"),
])
def test_scenario_chain_errors(timeline: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        scenario.loads(_BASE + "[[timeline]]\nat = 0\n" + timeline, "s.toml")
    assert message in str(caught.value)
    assert str(caught.value).startswith("s.toml:")


# -- the oracles catch broken classifiers --------------------------------------------------------


def _broken(monkeypatch: pytest.MonkeyPatch, always: ErrorClass) -> None:
    def classify_wrongly(error: Any) -> ErrorClass:
        return always

    monkeypatch.setattr(actors.records.retry, "classify", classify_wrongly)


def _names(result: world.RunResult) -> list[str]:
    return sorted({v.invariant for v in result.violations})


@pytest.mark.parametrize("name", ["permanent-rejection.toml", "error-after-partial-send.toml",
                                  "closed-turn-rejection.toml"])
def test_terminal_not_resent_catches_retrying_terminal_chains(
    monkeypatch: pytest.MonkeyPatch, name: str,
) -> None:
    _broken(monkeypatch, ErrorClass.TRANSIENT)
    result = world.run(scenario.load(SCENARIOS / name))
    assert "terminal-not-resent" in _names(result)


@pytest.mark.parametrize("name", ["transient-then-success.toml", "writer-claim-rebound.toml",
                                  "unclassified-send-error.toml"])
def test_retryable_keeps_trying_catches_giving_up_on_retryable_chains(
    monkeypatch: pytest.MonkeyPatch, name: str,
) -> None:
    _broken(monkeypatch, ErrorClass.PERMANENT)
    result = world.run(scenario.load(SCENARIOS / name))
    assert "retryable-keeps-trying" in _names(result)


def test_saved_scenarios_keep_their_chains() -> None:
    import attrs

    from sim.scenario import write as scenario_write

    for name in ("error-after-partial-send.toml", "unclassified-send-error.toml",
                 "wrapped-permanent-error.toml"):
        loaded = scenario.load(SCENARIOS / name)
        loaded = attrs.evolve(loaded, expect=attrs.evolve(loaded.expect, children=()))
        assert scenario.loads(scenario_write.dumps(loaded)).timeline == loaded.timeline
