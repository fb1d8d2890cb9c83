"""docs/fidelity.md's conformance section, generated from ``differences.toml`` (the table the
checks read): ``python -m sim.conform.docs`` rewrites it; tests/conform/test_differences.py
fails when it is stale."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sim.conform.differences import Difference, load
from sim.conform.install import PINNED_OPENCLAW

DOC = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"
BEGIN = "<!-- BEGIN conform differences (python -m sim.conform.docs) -->"
END = "<!-- END conform differences -->"
_KINDS = (("seed", "The seed wins over the released code"),
          ("model", "The model's own choices, with their reasons"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section(rows: Sequence[Difference]) -> str:
    lines = [BEGIN, "",
             f"`handoff conform` checks the model against `openclaw@{PINNED_OPENCLAW}` "
             "(sim/conform/differences.toml; a difference no row explains fails the check).", ""]
    for kind, title in _KINDS:
        chosen = [row for row in rows if row.kind == kind]
        if not chosen:
            continue
        lines += [f"### {title}", "", "| id | check | OpenClaw | handoff | why |",
                  "|---|---|---|---|---|"]
        for row in chosen:
            why = row.reason + (f" (seed: {row.seed})" if row.seed else "")
            lines.append(f"| `{row.id}` | {row.check} | {_cell(row.openclaw)} | "
                         f"{_cell(row.handoff)} | {_cell(why)} |")
        lines.append("")
    findings = [row for row in rows if row.kind == "finding"]
    lines += ["### Findings: where the released OpenClaw breaks a promise the seed states", ""]
    if findings:
        for row in findings:
            lines.append(f"* **{row.id}** ({row.check}): {row.openclaw} {row.reason}")
    else:
        lines.append("None found by the function checks.")
    lines += ["", END]
    return "\n".join(lines)


def render(text: str, rows: Sequence[Difference]) -> str:
    head, found, rest = text.partition(BEGIN)
    if not found:
        return text.rstrip("\n") + "\n\n## Checked against the released package\n\n" + section(
            rows) + "\n"
    _, _, tail = rest.partition(END)
    return head + section(rows) + tail


def main() -> None:
    DOC.write_text(render(DOC.read_text(encoding="utf-8"), load()), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
