"""``benchmarks/two_embedders.py``'s results (``two_embedders.json``) on docs/benchmarks.md: *A second
embedder as a third channel* (``render``)."""
from __future__ import annotations

import statistics

from .common import fmt_p, opened, source


def render() -> list[str]:
    r, lines = opened("two_embedders.json", "A second embedder as a third channel (`benchmarks/two_embedders.py`)",
                      "python benchmarks/two_embedders.py collect --set NAME=FOLDER; python benchmarks/two_embedders.py report")
    if r is None:
        return lines
    sets = r["sets"]
    runs = [k for k in next(iter(sets.values())) if k not in ("queries", "even", "ingest_s") and not k.startswith("p ")]
    lines += [f"- Date: {r['date']}; commands: `python benchmarks/two_embedders.py collect --set NAME=FOLDER` per set (a "
              "MiniLM knowledge base of the set's chunks, and MiniLM's dense list for each question), then "
              f"`{r['command']}`; {source('two_embedders.json')}.",
              "- Replayed from each question's lists with ragsift's own fusion (each channel deduplicated by section, "
              "min-max, equal weights; `adaptive`: the default fusion's per-query weights): e5-small dense (the default "
              "embedder) and BM25, the default; MiniLM in its place; and all three channels, what a knowledge base made "
              "with `extra_embedders=[\"minilm\"]` searches with `channels=[\"dense\", \"dense:minilm\", \"bm25\"]`. "
              "nDCG@10 on the odd-numbered judged queries, p against the default (paired randomization); sets collected "
              "with e5-small only.", "",
              "| set | queries | " + " | ".join(runs) + " |", "|---|---|" + "---|" * len(runs)]
    for n, v in sets.items():
        lines.append(f"| {n} | {v['queries']} | " + " | ".join(
            f"{v[k]:.4f}" + (f" (p={fmt_p(v['p ' + k])})" if f"p {k}" in v else "") for k in runs) + " |")
    even = {k: statistics.fmean(v["even"][k] for v in sets.values()) for k in runs}
    odd = {k: statistics.fmean(v[k] for v in sets.values()) for k in runs}
    lines += ["", "Mean over the sets, even-numbered queries (where a choice would be made): " + ", ".join(
        f"{k} {even[k]:.4f}" for k in runs) + "; odd-numbered: " + ", ".join(f"{k} {odd[k]:.4f}" for k in runs) + "."]
    three, default = runs[-2], runs[0]  # all three channels, adaptive; the default
    up = [n for n, v in sets.items() if v[three] > v[default] and v["even"][three] > v["even"][default]]
    down = [n for n, v in sets.items() if v[three] < v[default] and v["even"][three] < v["even"][default]]
    mixed = [n for n in sets if n not in up and n not in down]
    lines += ["", f"All three channels (adaptive) against the default, on both halves: higher on {', '.join(up) or 'none'}; "
              f"lower on {', '.join(down) or 'none'}; higher on one half only on {', '.join(mixed) or 'none'}. MiniLM "
              "reads English: it lifts an English FAQ and costs every Chinese and cross-lingual set. Not a default; an "
              "option for English knowledge bases (`extra_embedders=[\"minilm\"]`, channel `dense:minilm`; MiniLM's "
              "ingest of the sets' chunks here: " + ", ".join(f"{n} {v['ingest_s']:.0f} s" for n, v in sets.items())
              + "). SciFact's odd half above 0.73 is not a choice: its even "
              "half puts the default first."]
    return lines + [""]
