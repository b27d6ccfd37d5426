"""``benchmarks/whole_weights.py``'s results (``whole_weights.json``) on docs/benchmarks.md: *Whole weights
through the package* (``render``)."""
from __future__ import annotations

import statistics

from .common import fmt_p, opened, ran, source


def render() -> list[str]:
    r, lines = opened("whole_weights.json", "Whole weights through the package (`benchmarks/whole_weights.py`)",
                      "python benchmarks/whole_weights.py --work-dir /tmp/ent --set NAME=FOLDER:EMBEDDER ...")
    if r is None:
        return lines
    w = r["whole_weights"]
    configs = ["chunks", "max", "mix", "mix, damped"]
    lines += [f"- {ran(r)}; {source('whole_weights.json')} (on the knowledge bases of `entries.py collect` above, "
              "chunks and whole sections in each small index).",
              "- `KnowledgeBase.rank_documents` single shot (`strategy = \"settings\"`), the default fusion (adaptive from "
              f"dense {r['weights']['dense']} / BM25 {r['weights']['bm25']}), nDCG@10 of the documents on each set's "
              "odd-numbered judged queries (HotpotQA: 250), p against `chunks` (paired randomization). `chunks`: "
              "`index_kinds = [\"chunk\"]` (the default); `max`: `[\"chunk\", \"parent\"]` without whole weights (a "
              "section counts by its better raw score); `mix`: the same with the default `whole_weights` "
              f"(dense {w['dense']}, BM25 {w['bm25']}: chosen leave-one-set-out in round 2 above); `mix, damped`: and "
              "`adaptive_power = 0.5` (round 2's whole rule). The replays are round 2's replays of the same rules from the "
              "cached lists: the package matches them to within 0.0003 where the question's vector is the same (the package "
              "scales a list over all its hits, the replay over each section's best; a question is embedded alone here, "
              "in batches there, and MiniLM's int8 query graph scales its activations per batch).", "",
              "| set | queries | " + " | ".join(configs) + " | replay mix | replay mix, damped | ms a query (chunks / mix) |",
              "|---|---|" + "---|" * (len(configs) + 3)]
    sets = r["sets"]
    for n, v in sets.items():
        cells = [f"{v[c]:.4f}" + ("" if c == "chunks" else f" (p={fmt_p(v['p ' + c])})") for c in configs]
        ms = v["ms_per_query"]
        lines.append(f"| {n} | {v['queries']} | " + " | ".join(cells)
                     + f" | {v['replay mix']:.4f} | {v['replay mix, damped']:.4f} | {ms['chunks']:.0f} / {ms['mix']:.0f} |")
    mean = {c: statistics.fmean(v[c] - v["chunks"] for v in sets.values()) * 100 for c in configs[1:]}
    lines += ["", "Mean change over the sets against `chunks`, in nDCG@10 points: " + ", ".join(
        f"{c} {mean[c]:+.2f}" for c in configs[1:]) + "."]
    return lines + [""]
