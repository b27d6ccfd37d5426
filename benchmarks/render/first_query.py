"""``benchmarks/first_query.py``'s results (``first_query.json``) on docs/benchmarks.md: its part of the
commit section."""
from __future__ import annotations

from .common import load


def commit_part() -> list[str]:
    """The first question after a commit, default settings, in the commit section (first_query.json)."""
    lines: list[str] = []
    fq = load("first_query.json")
    if fq:
        p50 = fq["p50"]
        lines += [f"**The first question after a commit with the default settings** ({fq['date']}; `{fq['command']}`): "
                  f"{fq['note']} Each round in a process of its own, the two sides alternating; p50 over "
                  f"{len(fq['runs']['after'])} rounds (each: commit of {fq['documents_per_commit']} documents / first "
                  "question / second question, s):", "",
                  "| code | commit | first question | second question | rounds' first questions |", "|---|---|---|---|---|"]
        for side, label in (("before", fq.get("before_code", "before")), ("after", "this code")):
            if side in p50:
                lines.append(f"| {label} | {p50[side]['commit_s']:.2f} | {p50[side]['first_s']:.2f} | "
                             f"{p50[side]['second_s']:.2f} | "
                             + ", ".join(f"{x['first_s']:.2f}" for x in fq["runs"][side]) + " |")
        lines += ["", *fq.get("findings", []), ""]
    return lines
