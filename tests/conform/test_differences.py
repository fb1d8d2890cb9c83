"""The table of deliberate differences and the check machinery, without Node: every row has its
explainer, docs/fidelity.md is generated from the table, and an unlisted difference fails with a
minimal example."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from sim.conform import checks, differences, docs
from sim.conform.functions import CHECKS
from sim.conform.session import manifest_for


def test_every_row_has_its_explainer_and_names_a_check() -> None:
    from sim.conform.registry import explain

    rows = differences.load()
    assert sorted(row.id for row in rows) == sorted({**differences.EXPLAINERS,
                                                     **explain.EXPLAINERS})
    names = {check.name for check in CHECKS} | {explain.CHECK}
    for row in rows:
        assert row.check in names, row.id
        assert row.reason and row.openclaw and row.handoff, row.id
    assert len({row.id for row in rows}) == len(rows)


def test_fidelity_md_is_generated_from_the_table() -> None:
    text = docs.DOC.read_text(encoding="utf-8")
    assert docs.BEGIN in text, "run python -m sim.conform.docs"
    assert docs.render(text, differences.load(), differences.load_findings()) == text, (
        "stale: run python -m sim.conform.docs")


def test_each_finding_is_shown_by_a_difference_row() -> None:
    ids = {row.id for row in differences.load()}
    findings = differences.load_findings()
    assert findings
    for finding in findings:
        assert finding.shown_by in ids, finding.id
        assert finding.promise and finding.openclaw and finding.repro, finding.id


def test_an_explainer_accepts_only_what_openclaw_is_said_to_do() -> None:
    table = differences.load()
    # The frozen cap: a trimmed answer is explained; any other answer is not.
    assert differences.explain(table, "frozen-cap", " a ", " a ", "a") is not None
    assert differences.explain(table, "frozen-cap", " a ", " a ", "b") is None
    # The prompt-data block: `>` escaped, `&` not, trimmed.
    block = differences.openclaw_data_block(" a>&b ")
    assert block.endswith("<prompt-data>\na&gt;&b\n</prompt-data>")
    assert differences.explain(table, "prompt-data", " a>&b ", "x", block) is not None
    assert differences.explain(table, "prompt-data", " a>&b ", "x", block + " ") is None
    # A row explains differences of its own check only.
    assert differences.explain(table, "tokens", " a ", " a ", "a") is None


def test_js_compact_duration_is_exact_below_2_to_the_53() -> None:
    from actors.announce.stats import format_duration

    for ms in (1, 999, 1000, 1499, 1500, 59_999, 3_600_000, 90_061_000, 2**53 - 1):
        assert differences.js_compact_duration(float(ms)) == format_duration(ms)


def _shout(_: Any, values: Sequence[str]) -> list[str]:
    # A stand-in for OpenClaw that differs from the model on texts holding an "x".
    return [value.upper() if "x" in value else value for value in values]


def test_an_unlisted_difference_fails_with_a_minimal_example() -> None:
    check = checks.Check("shout", "stand-in", st.text(alphabet="abx"), lambda value: value,
                         _shout, edges=("",))
    outcome = checks.run(check, None, differences.load(), 300)  # type: ignore[arg-type]
    assert outcome.inputs >= 100
    assert outcome.undocumented == outcome.differences > 0
    assert outcome.example == {"input": "'x'", "model": "'x'", "openclaw": "'X'"}


def test_equal_answers_are_no_difference() -> None:
    check = checks.Check("same", "stand-in", st.text(), lambda value: value,
                         lambda _, values: list(values))
    outcome = checks.run(check, None, differences.load(), 200)  # type: ignore[arg-type]
    assert (outcome.differences, outcome.undocumented, outcome.example) == (0, 0, None)


def test_a_version_without_its_own_manifest_uses_the_newest() -> None:
    assert manifest_for("2026.9.6")[0] == "2026.9.6"
    assert manifest_for("2099.1.1")[0] == "2026.9.6"


def _staged_history(shown: list[dict[str, Any]], redactions: list[list[str]] | None = None,
                    rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A sessions-history input as the check stages it (store and gateway forged)."""
    stored = rows if rows is not None else shown
    return {"sessionKey": "agent:main:subagent:x", "args": {}, "ticket": 1, "shown": shown,
            "redactions": redactions or [], "rows": [{"message": row, "meta": None}
                                                     for row in stored]}


def test_history_explainers_accept_only_what_openclaw_is_said_to_do() -> None:
    from sim.conform.history_sides import model_answer

    table = differences.load()
    stored = [{"role": "assistant", "content": "a", "details": {"x": 1}}]
    shown = [{"role": "assistant", "content": "a"}]  # the projection dropped the details
    value = _staged_history(shown, rows=stored)
    over_shown = model_answer(value, shown)
    model = model_answer(value)
    assert model != over_shown  # the model marks the dropped details; OpenClaw never saw them
    check = "sessions-history"
    assert differences.explain(table, check, value, model, over_shown) == (
        "history-display-projection")
    assert differences.explain(table, check, value, model, {"ok": {}}) is None
    # A row the projection hides (fewer shown than stored) is explained by no row.
    hidden = _staged_history([], rows=stored)
    assert differences.explain(table, check, hidden, model, model_answer(hidden, [])) is None
    # OpenClaw's read-time masking in place of the model's patterns.
    secret = [{"role": "user", "content": "password=hunter2hunter2"}]
    masked = _staged_history(secret, [["password=hunter2hunter2", "password=***"]])
    real = model_answer(_staged_history([{"role": "user", "content": "password=***"}]))
    real["ok"]["contentRedacted"] = True
    mine = model_answer(masked)
    assert mine["ok"]["messages"][0]["content"] == "password=[redacted]"
    assert differences.explain(table, check, masked, mine, real) == "history-redaction"
    # A thinking block's `signature` (masked by OpenClaw's store) kept.
    signed = [{"role": "assistant", "content": [
        {"type": "text", "text": "t"}, {"type": "thinking", "thinking": "h", "signature": "***"}]}]
    value = _staged_history(signed)
    real = model_answer(_staged_history(signed))
    real["ok"]["messages"][0]["content"][1]["signature"] = "***"
    real["ok"]["bytes"] += len(',"signature":"***"')
    assert differences.explain(table, check, value, model_answer(value), real) == (
        "history-signature-dropped")
    # The explainers leave the model as it was.
    assert model_answer(masked)["ok"]["messages"][0]["content"] == "password=[redacted]"
