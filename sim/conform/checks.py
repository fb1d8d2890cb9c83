"""A differential check: the model's function and OpenClaw's on the same generated inputs.

Inputs come from a Hypothesis strategy (derandomized: the same inputs every run) plus a check's
fixed edge cases. All of them go to the Node driver in batches; each answer is compared with the
model's. A difference is *documented* when one of the check's rows in ``differences.toml``
explains it (its explainer, :mod:`sim.conform.differences`, says what OpenClaw does instead and
that is exactly what it did); any other difference is *undocumented*, and Hypothesis then shrinks
it to a minimal example, which the report shows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning

from actors.records.send_error import SendError
from sim.conform.differences import Difference, explain
from sim.conform.driver import Driver
from sim.conform.jsvalues import js_string

DEFAULT_INPUTS = 2_000
_BATCH_CHARS = 4_000_000  # a request line stays a few megabytes


@attrs.frozen
class Check:
    name: str
    what: str  # the OpenClaw function(s) called
    strategy: st.SearchStrategy[Any]
    model: Callable[[Any], Any]
    # All inputs at once: the driver answers a batch per request.
    real: Callable[[Driver, Sequence[Any]], list[Any]]
    edges: tuple[Any, ...] = ()
    # How an input reads in a report (the default: its repr, cut).
    show: Callable[[Any], str] = repr
    needs: tuple[str, ...] = ()  # manifest names the check calls
    # OpenClaw's side of an input, made before both answers (a batch at a time): what the
    # model then reads too (sessions_history: the rows as OpenClaw's store holds them).
    stage: Callable[[Driver, Sequence[Any]], list[Any]] | None = None


@attrs.define
class Outcome:
    check: str
    inputs: int = 0
    differences: int = 0
    undocumented: int = 0
    by_difference: dict[str, int] = attrs.field(factory=dict)
    example: dict[str, str] | None = None  # the minimal undocumented difference
    skipped: str | None = None  # why the check did not run (a function missing in a version)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def canonical(value: Any) -> Any:
    """A value as JavaScript holds it: each high-low surrogate pair is one character (Python
    keeps two lone surrogates apart; JSON carries both the same way)."""
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, tuple | list):
        return type(value)(canonical(item) for item in value)
    if isinstance(value, dict):
        return {canonical(k): canonical(v) for k, v in value.items()}
    if isinstance(value, SendError):
        return attrs.evolve(value, message=canonical(value.message),
                            cause=canonical(value.cause))
    return value


def generate(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` inputs (fewer only when the strategy has fewer), the same every run."""
    drawn: list[Any] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)  # large texts' reprs
        collect()
    return [canonical(value) for value in drawn]


def _batches(items: Sequence[Any], size_of: Callable[[Any], int]) -> list[list[Any]]:
    batches: list[list[Any]] = [[]]
    used = 0
    for item in items:
        size = size_of(item)
        if batches[-1] and used + size > _BATCH_CHARS:
            batches.append([])
            used = 0
        batches[-1].append(item)
        used += size
    return batches


def _size(value: Any) -> int:
    return len(repr(value))


def staged(check: Check, driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    """The inputs as both sides read them: through the check's stage when it has one."""
    if check.stage is None:
        return list(inputs)
    out: list[Any] = []
    for batch in _batches(inputs, _size):
        out.extend(canonical(value) for value in check.stage(driver, batch))
    return out


def real_answers(check: Check, driver: Driver, inputs: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for batch in _batches(inputs, _size):
        out.extend(check.real(driver, batch))
    return out


def model_answer(check: Check, value: Any) -> Any:
    """The model's answer; an exception is an answer too (and a difference)."""
    try:
        return canonical(check.model(value))
    except Exception as err:  # a model crash is reported as a difference, never hidden
        return ("model raised", type(err).__name__)


def _cut(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _minimal(check: Check, driver: Driver, table: Sequence[Difference],
             count: int) -> dict[str, str] | None:
    """Hypothesis' shrunk example of an undocumented difference (the last one it tried)."""
    failing: list[dict[str, str]] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(check.strategy)
    def compare(value: Any) -> None:
        value = staged(check, driver, [canonical(value)])[0]
        model, (real,) = model_answer(check, value), check.real(driver, [value])
        if model != real and explain(table, check.name, value, model, real) is None:
            failing.append({"input": _cut(check.show(value)), "model": _cut(repr(model)),
                            "openclaw": _cut(repr(real))})
            raise AssertionError("undocumented difference")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisWarning)
        try:
            compare()
        except AssertionError:
            pass
    return failing[-1] if failing else None


def run(check: Check, driver: Driver, table: Sequence[Difference],
        count: int = DEFAULT_INPUTS) -> Outcome:
    inputs = [*(canonical(edge) for edge in check.edges), *generate(check.strategy, count)]
    inputs = staged(check, driver, inputs)
    answers = real_answers(check, driver, inputs)
    outcome = Outcome(check.name, inputs=len(inputs))
    first_undocumented: dict[str, str] | None = None
    for value, real in zip(inputs, answers, strict=True):
        model = model_answer(check, value)
        if model == real:
            continue
        outcome.differences += 1
        reason = explain(table, check.name, value, model, real)
        if reason is not None:
            outcome.by_difference[reason] = outcome.by_difference.get(reason, 0) + 1
            continue
        outcome.undocumented += 1
        if first_undocumented is None:
            first_undocumented = {"input": _cut(check.show(value)), "model": _cut(repr(model)),
                                  "openclaw": _cut(repr(real))}
    if outcome.undocumented:
        outcome.example = _minimal(check, driver, table, count) or first_undocumented
    return outcome
