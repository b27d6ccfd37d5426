"""``benchmarks/fusion.py``'s results (``fusion.json``) on docs/benchmarks.md: *Default fusion chosen by
measurement, in every language pair* (``render``)."""
from __future__ import annotations

from .common import fmt_p, load


def render() -> list[str]:
    r = load("fusion.json")
    lines = ["## Default fusion chosen by measurement, in every language pair (`benchmarks/fusion.py`)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/fusion.py collect` then `sweep`._", ""]
    names = [s["name"] for s in r["sets"]]
    lines += ["_Superseded as the default's source: the fusion chosen here (weighted min-max, dense 0.4 / BM25 0.6) "
              "was the default until the leave-one-set-out choice over more domains replaced it with adaptive from "
              "dense 0.5 / BM25 0.5 (next section, `benchmarks/entries.py`). Kept as measured._", "",
              f"- Date: {r['date']}; command: `python benchmarks/fusion.py collect` (channel rankings per set, "
              f"once), then `{r['command']}`.",
              "- Sets (judged queries; embedder): " + ", ".join(f"{s['name']} ({s['queries']}; {s['embedder']})"
                                                              for s in r["sets"]) + ". The L-Eval part is its "
              "Natural Questions documents and questions (the others are asked within one document).",
              "- Each query's dense and BM25 rankings (depth 100, with store positions) are replayed through "
              "ragsift's own `fuse` for every setting; today's analyzer (`ragsift-zh-en-v1`) and the new one "
              "(`ragsift-unicode-v2`) each have their own BM25 rankings. Where no knowledge base of today's "
              "analyzer existed with the set's embedder, today's BM25 rankings come from a use-multilingual "
              "knowledge base of the same chunks (BM25 does not depend on the embedder).",
              f"- Rule: {r['rule']}. Chosen on the even-numbered judged queries of each set (file order, from 0); "
              "reported on the odd ones, p from a paired randomization test against today's default.", "",
              "**The choice** (top 10 settings on the even queries, nDCG@10, with the v2 analyzer):", "",
              "| setting | mean | worst drop vs today | " + " | ".join(names) + " |",
              "|---|---|---|" + "---|" * len(names)]
    for t in r["grid"][:10]:
        lines.append(f"| {t['label']} | {t['even_mean']:.4f} | {t['worst_drop'] * 100:+.2f} pt | "
                     + " | ".join(f"{t['even'][n]:.4f}" for n in names) + " |")
    lines += ["", f"Chosen: **{[t for t in r['grid'] if t['config'] == r['chosen']][0]['label']}**.", "",
              "**On the held-out (odd) queries**, nDCG@10 (Δ against today, p):", "",
              "| configuration | mean | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for name, row in r["report"].items():
        cells = []
        for n in names:
            x = row["odd"][n]
            cells.append(f"{x['ndcg@10']:.4f}" + ("" if x["p"] is None else
                                                   f" ({x['delta'] * 100:+.1f}, p={fmt_p(x['p'])})"))
        lines.append(f"| {name}: {row['label']} | {row['odd_mean']:.4f} | " + " | ".join(cells) + " |")
    g = r.get("granularity") or {}
    if g:
        variants = list(next(iter(g.values())))
        lines += ["", "**Multi-granularity** (odd queries, nDCG@10; p against the same fusion over chunks alone): "
                  "dense over the chunks alone against chunks and whole sections together (each section embedded "
                  "as one entry, its context line and text, as `small_index` `parents` stores it; for short "
                  "documents the section is the document; the store merges both kinds by cosine).", "",
                  "| set | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
        for n, row in g.items():
            lines.append(f"| {n} | " + " | ".join(f"{row[v]['ndcg@10']:.4f}" + ("" if row[v]["p"] is None else
                                                                               f" (p={fmt_p(row[v]['p'])})")
                                                 for v in variants) + " |")
    return lines + [""]
