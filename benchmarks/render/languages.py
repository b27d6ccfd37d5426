"""languages: moved from report.py."""
from __future__ import annotations

from .common import _p, load


def languages_section() -> list[str]:
    lines = ["## Languages: the fast multilingual embedder, translation, a mixed knowledge base", ""]
    m = load("multilingual.json")
    if m is None:
        lines += ["_`benchmarks/multilingual.py` not run yet._", ""]
    else:
        models = ["minilm", "e5-small", "use-multilingual"]
        lines += [f"- Date: {m['date']}; command: `{m['command']}` (quality from the `ragsift eval` files it "
                  "names; speed measured in that run).", "",
                  "nDCG@10, every judged query (dense alone / hybrid RRF k=60 / hybrid weighted 0.5-0.5 min-max):", "",
                  "| set | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
        for s, by in m["quality"].items():
            cells = []
            for mo in models:
                x = by.get(mo)
                cells.append("—" if x is None else
                             f"{x['dense']['ndcg@10']:.3f} / {x['hybrid']['ndcg@10']:.3f} / "
                             f"{x['hybrid-weighted']['ndcg@10']:.3f}")
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines += ["", "Embedding speed on the same chunks (chunks per second, 2 cores; "
                  + ", ".join(f"{k}: {v} chunks" for k, v in m["chunks"].items()) + "):", "",
                  "| model | " + " | ".join(m["chunks"]) + " |", "|---|" + "---|" * len(m["chunks"])]
        for mo, v in m["chunks_per_second"].items():
            lines.append(f"| {mo} | " + " | ".join(f"{v[k]:.1f}" for k in m["chunks"]) + " |")
        lines.append("")
    t = load("translate.json")
    if t is not None:
        lines += [f"**Translation** ({t['dataset']}, {t['queries']} odd-numbered queries, embedder {t['embedder']}, "
                  f"model `{t['llm']}`; {t['date']}; `{t['command']}`):", "",
                  "| configuration | nDCG@10 | Recall@10 | p vs defaults | seconds a query (cold cache) |",
                  "|---|---|---|---|---|"]
        for name, x in t["results"].items():
            lines.append(f"| {name} | {x['metrics']['ndcg@10']:.4f} | {x['metrics']['recall@10']:.4f} | "
                         f"{_p(x['p_vs_defaults'])} | {x['seconds_per_query']:.2f} |")
        base, tr = t["results"]["hybrid, no model (defaults)"], t["results"]["hybrid + translation"]
        fz = load("fusion.json")
        lines += ["", f"Translation adds {100 * (tr['metrics']['ndcg@10'] - base['metrics']['ndcg@10']):+.1f} points "
                  f"(p={_p(tr['p_vs_defaults'])}) for {tr['seconds_per_query']:.1f} s a question of model time. "
                  f"These {t['queries']} questions are easier than the set: the defaults score "
                  f"{base['metrics']['ndcg@10']:.3f} on them"
                  + (f" against {fz['report']['v2, chosen']['odd']['xquad-xling']['ndcg@10']:.3f} on all odd-numbered ones "
                     "(the fusion sweep)." if fz and "xquad-xling" in fz["report"]["v2, chosen"]["odd"] else ".")]
        ex = t.get("example") or {}
        if ex.get("translate"):
            lines += ["", f"Example: “{ex['question']}” → " + ", ".join(
                f"{k}: “{v}”" for k, v in ex["translate"]["translations"].items())]
        lines.append("")
    x = load("mixed.json")
    if x is not None:
        lines += [f"**A mixed knowledge base** ({x['embedder']}; chunks by language {x['chunks_by_language']}; "
                  f"{x['date']}; `{x['command']}`): same-language questions, odd-numbered queries, nDCG@10. "
                  "\"Alone\" is the set in a knowledge base of its own, the reference the mixed one must not "
                  "lose to." + (" HotpotQA scores far higher than in this script's run of 2026-12-01 (dense alone "
                                "0.6187, BM25 alone 0.8106, the defaults alone 0.8042 then), on every row alike: the "
                                "knowledge bases are ingested by today's code (the JSONL reader and the splitter "
                                "changed since); the cause was not isolated further. Compare within one run."
                                if x["date"] >= "2026-12-03" else ""), "",
                  "| questions | alone, new defaults | mixed, new defaults | p mixed vs alone "
                  "| mixed, today (RRF k=60) | p new vs today |", "|---|---|---|---|---|---|"]
        for name, r in x["sets"].items():
            lines.append(f"| {name} ({r['queries']}) | {r['alone, new defaults']:.4f} | {r['mixed, new defaults']:.4f} "
                         f"| {_p(r['p_mixed_vs_alone'])} | {r['mixed, today']:.4f} | {_p(r['p_new_vs_today_mixed'])} |")
        if all("mixed, new defaults, BM25 statistics shared" in r for r in x["sets"].values()):
            lines += ["", "BM25's statistics per language (what the embedded store does now) against one set shared by "
                      "both languages (what it did before), the same mixed knowledge base read both ways in one run "
                      "(nDCG@10, p paired randomization):", "",
                      "| questions | defaults, per language | defaults, shared | p | BM25 alone, per language "
                      "| BM25 alone, shared | p | BM25 in its own knowledge base |", "|---|---|---|---|---|---|---|---|"]
            for name, r in x["sets"].items():
                lines.append(f"| {name} | {r['mixed, new defaults']:.4f} "
                             f"| {r['mixed, new defaults, BM25 statistics shared']:.4f} "
                             f"| {_p(r['p_per_language_vs_shared'])} | {r['bm25 only, mixed']:.4f} "
                             f"| {r['bm25 only, mixed, statistics shared']:.4f} "
                             f"| {_p(r['p_bm25_per_language_vs_shared'])} | {r['bm25 only, alone']:.4f} |")
            sp = x.get("bm25_search_ms")
            if sp:
                lines += ["", "The store's BM25 search alone (100 results, every odd question of both sets, "
                          "interleaved, after a warm-up round): per language p50 "
                          f"{sp['per language']['p50']:.3f} ms (p95 {sp['per language']['p95']:.3f}), shared "
                          f"{sp['shared']['p50']:.3f} ms (p95 {sp['shared']['p95']:.3f}): "
                          f"{sp['per language']['p50'] / sp['shared']['p50']:.2f}x; a row's weight is gathered "
                          "by its language. A base of one language keeps the one-weight path."]
        if all("dense only, alone" in r for r in x["sets"].values()):
            lines += ["", "One channel alone, in its own knowledge base and in the mixed one (nDCG@10):", "",
                      "| questions | dense alone | dense mixed | BM25 alone | BM25 mixed |", "|---|---|---|---|---|"]
            for name, r in x["sets"].items():
                lines.append(f"| {name} | {r['dense only, alone']:.4f} | {r['dense only, mixed']:.4f} "
                             f"| {r['bm25 only, alone']:.4f} | {r['bm25 only, mixed']:.4f} |")
            lines += ["", "For the Chinese questions the cost is in the dense channel: the multilingual model "
                      "ranks English paragraphs near the Chinese ones (an experiment that also discounted dense "
                      "hits in the other language, 0.3-0.9, gained at most 0.03 points after fusion, so it was "
                      "not built). BM25 lost half a point to statistics shared with the other language (the "
                      "next section); kept per language, it is within the noise of its own knowledge base. Fusion "
                      "recovers most of the rest: "
                      + "; ".join(f"{n} {100 * (r['mixed, new defaults'] - r['alone, new defaults']):+.1f} points "
                                  f"(p={_p(r['p_mixed_vs_alone'])})" for n, r in x["sets"].items()) + "."]
        lines.append("")
    for tu in (load("tune.json"), load("tune_lawbench.json")):
        if tu is None:
            continue
        lines += [f"**`ragsift tune`** ({tu['dataset']}, embedder {tu['embedder']}; {tu['date']}; `{tu['command']}`):", "",
                  "| questions | held-out queries | current | tuned | p | settings |", "|---|---|---|---|---|---|"]
        for row in tu["runs"]:
            lines.append(f"| {row['label']} | {row['validation_queries']} | {row['current']:.4f} | {row['tuned']:.4f} "
                         f"| {_p(row['p'])} | {row['chosen']} |")
        lines += ["", *tu.get("notes", []), ""]
    return lines
