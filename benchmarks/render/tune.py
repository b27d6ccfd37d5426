"""``benchmarks/tune.py``'s results (``tune.json``, ``tune_lawbench.json``) on docs/benchmarks.md: its part
of *Languages*."""
from __future__ import annotations

from .common import fmt_p, load, source


def languages_part() -> list[str]:
    """`ragsift tune`'s tables of *Languages* (tune.json, tune_lawbench.json)."""
    lines: list[str] = []
    for name in ("tune.json", "tune_lawbench.json"):
        tu = load(name)
        if tu is None:
            continue
        lines += [f"**`ragsift tune`** ({tu['dataset']}, embedder {tu['embedder']}; {tu['date']}; `{tu['command']}`; "
                  f"{source(name)}):", "",
                  "| questions | held-out queries | current | tuned | p | settings |", "|---|---|---|---|---|---|"]
        for row in tu["runs"]:
            lines.append(f"| {row['label']} | {row['validation_queries']} | {row['current']:.4f} | {row['tuned']:.4f} "
                         f"| {fmt_p(row['p'])} | {row['chosen']} |")
        lines += ["", *tu.get("notes", []), ""]
    return lines
