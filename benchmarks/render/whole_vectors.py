"""``benchmarks/whole_vectors.py``'s results (``whole_vectors.json``) on docs/benchmarks.md: *A section's
whole vector without embedding it?* (``render``)."""
from __future__ import annotations

import statistics

from .common import fmt_p, opened, ran, source


def render() -> list[str]:
    r, lines = opened("whole_vectors.json", "A section's whole vector without embedding it? (`benchmarks/whole_vectors.py`)",
                      "python benchmarks/whole_vectors.py --work-dir /tmp/ent --set NAME=FOLDER:EMBEDDER ...")
    if r is None:
        return lines
    lines += [f"- {ran(r)}; {source('whole_vectors.json')}.",
              "- Round 2's replay (the default whole weights and fusion, odd-numbered queries, nDCG@10) with the dense "
              "whole-section list taken three ways: none (`chunks`, the default), the section embedded whole "
              "(`embedded`, what whole sections cost 1.4-2.0x an ingest for) and the normalised mean of its chunks' "
              "vectors (`mean of chunks`, free at ingest); BM25's whole entries as stored. p against `embedded`.", "",
              "| set | sections | chunks | embedded | mean of chunks |", "|---|---|---|---|---|"]
    sets = r["sets"]
    for n, v in sets.items():
        lines.append(f"| {n} | {v['sections']:,} | {v['chunks']:.4f} (p={fmt_p(v['p chunks'])}) | {v['embedded']:.4f} | "
                     f"{v['mean of chunks']:.4f} (p={fmt_p(v['p mean of chunks'])}) |")
    gain = {c: statistics.fmean(v[c] - v["chunks"] for v in sets.values()) * 100 for c in ("embedded", "mean of chunks")}
    lines += ["", f"Mean change against `chunks`: embedded {gain['embedded']:+.2f} points, mean of chunks "
              f"{gain['mean of chunks']:+.2f}. The mean of a section's chunks is no stand-in for the section embedded "
              "whole: what the mix gains comes from the embedder reading the section at once."]
    return lines + [""]
