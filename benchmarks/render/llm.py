"""*Language models*: ``ragsift eval`` with the model's configs, run by benchmarks/llm.sh
(results/llm/*.json), and what its tables show."""
from __future__ import annotations

import sys

from .common import ROOT, load, source

LLM_NOTES = {
    "hybrid": "dense + BM25, RRF k=60 (no model)",
    "dense": "dense alone (no model)",
    "hyde-dense": "the HyDE dense channel alone (hypothesis embedded alone)",
    "hybrid+hyde": "hybrid + HyDE dense + HyDE BM25, mode `hypothesis`",
    "hybrid+hyde-concat": "the same, mode `query+hypothesis`",
    "hybrid+hyde-mean3": "the same, mode `mean` of 3 hypotheses and the question",
    "hybrid+rewrite": "hybrid over the LLM's rewrite of the question",
    "hybrid+judge5": "hybrid, top 5 reranked by the LLM judge (passages cut to 128 tokens)",
}


def _compare_cells(base: dict, row: dict, metric: str = "ndcg@10") -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from ragsift.eval.stats import compare

    c = compare(base["per_query"], row["per_query"], metric)
    return [f"{c.diff:+.4f}", f"{c.p_value:.3f}"]


def render() -> list[str]:
    lines = ["## Language models: HyDE, rewriting, LLM-judge reranking", ""]
    found = False
    for ds, title in (("scifact", "SciFact"), ("hotpotqa-ircot-dev500", "HotpotQA (IRCoT dev 500)")):
        for part in ("A", "B"):
            cold, warm = load(f"llm/{ds}-{part}-cold.json"), load(f"llm/{ds}-{part}-warm.json")
            if cold is None:
                continue
            found = True
            res, wres = cold["results"], (warm or {}).get("results", {})
            base = res["hybrid"]
            lines += [f"**{title}, the first {cold['queries']} queries** ({cold['date']}; embedder "
                      f"`{cold['embedder']}`; `benchmarks/llm.sh`, configs in `benchmarks/configs/llm.json`; "
                      + source(*(f"llm/{ds}-{part}-{c}.json" for c in ("cold", "warm")[:1 + (warm is not None)]))
                      + ")", "",
                      "| config | what | nDCG@10 | Recall@10 | all-relevant@5 | Δ nDCG@10 vs hybrid | p | "
                      "p50 ms, cold cache | p50 ms, warm cache |", "|---|---|---|---|---|---|---|---|---|"]
            for name, r in res.items():
                m = r["metrics"]
                delta = ["—", "—"] if name == "hybrid" else _compare_cells(base, r)
                w = f"{wres[name]['p50_ms']:.1f}" if name in wres else "—"
                lines.append(f"| {name} | {LLM_NOTES.get(name, '')} | {m['ndcg@10']:.4f} | {m['recall@10']:.4f} | "
                             f"{m['all_relevant@5']:.4f} | {delta[0]} | {delta[1]} | {r['p50_ms']:.1f} | {w} |")
            lines.append("")
    if not found:
        return lines + ["_Not run yet: `benchmarks/llm.sh`._", ""]
    lines += llm_findings()
    lines += ["", "Setup:", "",
              "- Model: the packaged Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) in process through llama.cpp on the "
              "same 2 cores; greedy decoding for the first hypothesis, rewrites and judgements; the other "
              "`mean` samples at temperature 0.7 with seeds 1 and 2.",
              "- Cold cache: the model cache was empty when the script started, and every answer not yet "
              "generated earlier in the same script was generated in that config's run: `hybrid+hyde` and "
              "`hybrid+hyde-concat` reuse the hypotheses of `hyde-dense` (so their cold and warm columns are "
              "alike), and `hybrid+hyde-mean3` generates only its two extra samples. Warm cache: the same configs "
              "again, every model answer cached; what is left is embedding the hypothesis and the searches.",
              "- Query subsets, because a hypothesis costs about 4 s and a judged passage about 1.5 s here: "
              "the confidence is limited (see p).", ""]
    return lines


def llm_findings() -> list[str]:
    """What the LLM tables show, with the numbers read from the results."""
    def get(ds: str, part: str, name: str) -> dict | None:
        d = load(f"llm/{ds}-{part}-cold.json")
        return None if d is None or name not in d["results"] else d["results"][name]

    def delta(ds: str, part: str, name: str) -> str:
        base, row = get(ds, part, "hybrid"), get(ds, part, name)
        if base is None or row is None:
            return "n/a"
        d, p = _compare_cells(base, row)
        return f"{float(d) * 100:+.1f} points (p={p})"

    def p50(ds: str, part: str, name: str) -> str:
        row = get(ds, part, name)
        return "n/a" if row is None else f"{row['p50_ms'] / 1000:.1f} s"

    sf, hp = "scifact", "hotpotqa-ircot-dev500"
    return [
        "What the numbers show (nDCG@10 against hybrid on the same queries):", "",
        f"- **HyDE alone does not beat the question's own vector** with this model: the HyDE dense channel "
        f"alone is {delta(sf, 'A', 'hyde-dense')} on SciFact and {delta(hp, 'A', 'hyde-dense')} on HotpotQA; "
        f"plain dense is {delta(sf, 'A', 'dense')} and {delta(hp, 'A', 'dense')}.",
        f"- **As a channel beside hybrid**, one hypothesis is {delta(sf, 'A', 'hybrid+hyde')} (SciFact) and "
        f"{delta(hp, 'A', 'hybrid+hyde')} (HotpotQA); `query+hypothesis` {delta(sf, 'A', 'hybrid+hyde-concat')} "
        f"and {delta(hp, 'A', 'hybrid+hyde-concat')}. The paper's `mean` mode is the best variant: "
        f"{delta(sf, 'B', 'hybrid+hyde-mean3')} on SciFact and {delta(hp, 'B', 'hybrid+hyde-mean3')} on "
        "HotpotQA (50 queries each).",
        f"- **Cost**: one hypothesis is {p50(sf, 'A', 'hyde-dense')} (SciFact) and {p50(hp, 'A', 'hyde-dense')} "
        f"(HotpotQA) at the median with a cold cache; three for `mean` {p50(sf, 'B', 'hybrid+hyde-mean3')} and "
        f"{p50(hp, 'B', 'hybrid+hyde-mean3')} (two generated in that run). With a warm cache HyDE adds only the "
        "hypothesis embedding and two searches (tens of milliseconds).",
        f"- **Rewriting hurts**: {delta(sf, 'A', 'hybrid+rewrite')} (SciFact), {delta(hp, 'A', 'hybrid+rewrite')} "
        f"(HotpotQA), for {p50(sf, 'A', 'hybrid+rewrite')} a query cold. The model often answers instead of "
        "rewriting (\"What science fantasy young adult series, told in first person, ...?\" became \"Star Wars: "
        "The Clone Wars\") or drops words BM25 needed (\"5% of perinatal mortality is due to low birth "
        "weight.\" became \"Low birth weight mortality rate\"). It is off by default.",
        f"- **LLM-judge reranking hurts** with this model: {delta(sf, 'B', 'hybrid+judge5')} (SciFact) and "
        f"{delta(hp, 'B', 'hybrid+judge5')} (HotpotQA), for {p50(sf, 'B', 'hybrid+judge5')} and "
        f"{p50(hp, 'B', 'hybrid+judge5')} a query (five passages). The 1.5B coder model says yes to nearly "
        "every passage with small margins (on SciFact's claims, log-odds between 0.5 and 1.2 for relevant and "
        "irrelevant abstracts alike), so ordering by them throws away the fused order. The judge is for "
        "stronger models behind an endpoint; with internet, a cross-encoder (`cross-encoder:<model>`) is the "
        "better reranker.", ""]
