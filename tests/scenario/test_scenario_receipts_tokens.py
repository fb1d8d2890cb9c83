"""Scenario fields of issue 24: a child's scripted token usage (FMT-3, FMT-4) and further
receipts of one run with their own producer end times and replies (DEL-12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.errors import InputError
from actors.messages import ExtraReceipt
from sim import scenario
from sim.scenario import write as scenario_write
from sim.world import core as world
from tests.conftest import SCENARIOS

HEAD = '[[sessions]]\nkey = "agent:main:main"\n\n[[children]]\nid = "a"\nrun_for = 5\n'


def _load(tmp_path: Path, text: str) -> scenario.Scenario:
    path = tmp_path / "s.toml"
    path.write_text('name = "x"\ndescription = "x"\ncovers = ["DEL-12"]\n' + text,
                    encoding="utf-8")
    return scenario.load(path)


def test_tokens_and_receipts_load_and_write_back(tmp_path: Path) -> None:
    loaded = _load(tmp_path, HEAD + 'reply = "r"\ntokens_in = 999999\ntokens_out = 0\n'
                   '[[children.receipts]]\nafter = 20\nended_at = 3\nreply = "late"\n'
                   '[[children.receipts]]\nafter = 40\nended_at = 7.5\nreply = "newer"\n')
    child = loaded.children[0]
    assert child.steps[0].tokens == (999_999, 0)
    assert child.receipts == (ExtraReceipt(20_000, 3_000, "late"),
                              ExtraReceipt(40_000, 7_500, "newer"))
    again = scenario.loads(scenario_write.dumps(loaded))
    assert again.children == loaded.children


@pytest.mark.parametrize(("extra", "field", "what"), [
    ('tokens_in = 5\n', "tokens_out", "together"),
    ('tokens_in = -1\ntokens_out = 0\n', "tokens_in", ""),
    ('outcome = "error"\n[[children.receipts]]\nafter = 1\nended_at = 3\nreply = "r"\n',
     "receipts", "ends ok"),
    ('[[children.receipts]]\nafter = 9\nended_at = 3\nreply = "r"\n'
     '[[children.receipts]]\nafter = 1\nended_at = 3\nreply = "r"\n', "after", "order"),
    ('[[children.receipts]]\nafter = 9\nreply = "r"\n', "ended_at", ""),
])
def test_bad_fields_are_clear_errors(tmp_path: Path, extra: str, field: str,
                                     what: str) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, HEAD + extra)
    assert field in str(caught.value) and what in str(caught.value)


def test_only_a_newer_receipt_reaches_the_requester() -> None:
    result = world.run(scenario.load(SCENARIOS / "receipts-of-one-run.toml"))
    assert result.violations == ()
    taken = [(r.data["ended_at"], r.data["key"]) for r in result.trace.records
             if r.kind == "requester.accept"]
    assert taken == [(5_000, "announce:v1:agent:main:subagent:a:run-1"),
                     (7_000, "announce:v1:agent:main:subagent:a:run-1:g2")]


def test_the_stats_line_reads_the_scripted_usage() -> None:
    result = world.run(scenario.load(SCENARIOS / "stats-line-token-usage.toml"))
    assert result.violations == ()
    texts = {r.data["run_id"]: r.data["text"] for r in result.trace.records
             if r.kind == "requester.accept"}
    tokens = sorted(line.split(" • ")[1] for text in texts.values()
                    for line in text.splitlines() if line.startswith("Stats:"))
    assert tokens == ["tokens 0 (in 0 / out 0)", "tokens 1.0m (in 1.0m / out 0)",
                      "tokens 2.0k (in 2.0k / out 25)", "tokens unknown"]
