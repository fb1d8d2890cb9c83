"""docs/fidelity.md's conformance section, generated from ``differences.toml`` (the table the
checks read): ``python -m sim.conform.docs`` rewrites it; tests/conform/test_differences.py
fails when it is stale."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sim.conform.differences import Difference, Finding, load, load_findings
from sim.conform.install import PINNED_OPENCLAW

DOC = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"
BEGIN = "<!-- BEGIN conform differences (python -m sim.conform.docs) -->"
END = "<!-- END conform differences -->"
_KINDS = (("seed", "The seed wins over the released code"),
          ("model", "The model's own choices, with their reasons"),
          ("open", "Open: the seed is silent, the model should follow the released code "
                   "(not done yet, and why)"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section(rows: Sequence[Difference], findings: Sequence[Finding] = ()) -> str:
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
    lines += ["### Findings: where the released OpenClaw breaks a promise the seed states", "",
              "Apart from the model's own differences: the model keeps the seed's promise; the "
              "released code does not.", ""]
    for finding in findings:
        lines += [f"* **{finding.id}** (shown by `{finding.shown_by}`). The seed: "
                  f"{finding.promise}. OpenClaw {PINNED_OPENCLAW}: {finding.openclaw}. Where: "
                  f"{finding.where}. Repro: {finding.repro}."]
    lines += ["", END]
    return "\n".join(lines)


def render(text: str, rows: Sequence[Difference], findings: Sequence[Finding] = ()) -> str:
    head, found, rest = text.partition(BEGIN)
    if not found:
        return (text.rstrip("\n") + "\n\n## Checked against the released package\n\n"
                + section(rows, findings) + "\n")
    _, _, tail = rest.partition(END)
    return head + section(rows, findings) + tail


def main() -> None:
    DOC.write_text(render(DOC.read_text(encoding="utf-8"), load(), load_findings()),
                   encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
