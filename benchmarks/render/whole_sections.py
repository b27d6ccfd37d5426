"""``benchmarks/whole_sections.py``'s results (``whole_sections.json``) on docs/benchmarks.md: *What whole
sections beside chunks cost at ingest* (``render``)."""
from __future__ import annotations

from .common import opened, ran, source


def render() -> list[str]:
    r, lines = opened("whole_sections.json", "What whole sections beside chunks cost at ingest (`benchmarks/whole_sections.py`)",
                      "python benchmarks/whole_sections.py --set NAME=FOLDER")
    if r is None:
        return lines
    lines += [f"- {ran(r)}; {source('whole_sections.json')}. Each set's first {r['docs']} documents, a full "
              "`KnowledgeBase.ingest` with the default embedder (e5-small) into a fresh knowledge base, chunks alone "
              "(`small_index = [\"chunk\"]`, the default) or with whole sections (`[\"chunk\", \"parent\"]`: what the "
              "entry mixes of round 2 above need), each twice in alternating order; seconds are the mean. A section "
              "held in one chunk shares its vector; a longer one is embedded whole.", "",
              "| set | chunks: s (entries) | chunks + sections: s (entries) | ratio |", "|---|---|---|---|"]
    for n, v in r["sets"].items():
        a, b = v["chunks"], v["chunks + sections"]
        lines.append(f"| {n} | {a['seconds']:.1f} ({a['children']:,}) | {b['seconds']:.1f} ({b['children']:,}) | "
                     f"{v['ratio']:.2f}x |")
    ratios = [v["ratio"] for v in r["sets"].values()]
    lines += ["", f"Whole sections make an ingest {min(ratios):.1f}-{max(ratios):.1f}x as long on these sets: the price of "
              "round 2's entry mixes (`whole_weights`); whole sections are not in the default small index."]
    return lines + [""]
