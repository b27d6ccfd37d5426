"""``benchmarks/milvus.py``'s results (``milvus.json``) on docs/benchmarks.md: *The same knowledge base on
LanceDB and on Milvus (SciFact)* (``render``)."""
from __future__ import annotations

from .common import load, source


def render() -> list[str]:
    r = load("milvus.json")
    lines = ["## The same knowledge base on LanceDB and on Milvus (SciFact)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/milvus.py`._", ""]
    st = r["stats"]["milvus"]
    lines += [f"- Date: {r['date']}; embedder `{r['embedder']}`; command: `{r['command']}`; {source('milvus.json')}",
              f"- The SciFact knowledge base ({st['documents']} documents, {st['parents']} parents, "
              f"{st['children']} children) was copied to a milvus-lite server on 127.0.0.1 with `copy_to` "
              f"(what `ragsift migrate` runs; vectors and terms as stored, no re-embedding) in {r['copy_seconds']} s. "
              f"Both answered the same {r['queries']} judged queries, alternating which went first; "
              "Milvus used an exact (FLAT) vector index and its own BM25 function.",
              "- Top 10: the documents `rank_documents` returns. Latency: `rank_documents` (channels, "
              "fusion) and the full `query` (also the parent look-up and packing), milliseconds, in one process.",
              "", "| config | identical top 10 | other differences | nDCG@10 LanceDB | nDCG@10 Milvus | "
              "rank p50 / p95 LanceDB | rank p50 / p95 Milvus | query p50 LanceDB | query p50 Milvus |",
              "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for name, c in r["configs"].items():
        same = c["top10"].get("identical", 0)
        other = ", ".join(f"{v} {k}" for k, v in c["top10"].items() if k != "identical") or "none"
        lat = c["latency_ms"]
        lines.append(f"| {name} | {same} / {r['queries']} | {other} | {c['metrics']['lancedb']['ndcg@10']:.4f} | "
                     f"{c['metrics']['milvus']['ndcg@10']:.4f} | {lat['lancedb']['p50']} / {lat['lancedb']['p95']} | "
                     f"{lat['milvus']['p50']} / {lat['milvus']['p95']} | {lat['lancedb_query']['p50']} | "
                     f"{lat['milvus_query']['p50']} |")
        for qid, e in c["differences"].items():
            t = e["there"]
            notes.append(f"{name}, query {qid}: the lists part at rank {e['first_difference']}: "
                         f"{t['lancedb'][0]} (score {t['lancedb'][1]:.6g}) on LanceDB, {t['milvus'][0]} "
                         f"(score {t['milvus'][1]:.6g}) on Milvus: " + ("a tie broken the other way" if e["tie"]
                                                                        else "different fused scores"))
    lines += ["", "Where the lists differ:", ""] + [f"- {n}" for n in notes] + [
        "", "Dense search is exact on both stores. BM25 runs in tantivy on LanceDB and in the engine on "
        "Milvus, both with k1 1.2 and b 0.75 (milvus-lite's own default k1 is 1.5: ragsift sets it); their "
        "scores agree to within 1e-6 relative, so the lists part only where documents tie, and the engines "
        "order equal scores differently. After RRF a tie inside a channel becomes a one-rank shift, and so "
        "a different fused score: both hybrid queries above hold exact ties in their BM25 and dense lists "
        "(checked). milvus-lite is a Python implementation: its latency says nothing about a Milvus cluster; "
        "it is here to show the cost of the network path and that the answers are the same.", ""]
    ef = r.get("engine_fusion")
    if ef:
        lines += ["### Fusion in ragsift or in Milvus' engine (`store_fusion`)", "",
                  "- The same Milvus knowledge base and questions, dense and BM25 fused two ways: by ragsift "
                  "(`store_fusion = \"ragsift\"`, the default: each channel's top 100 children deduplicated by "
                  "parent, then fused) and by Milvus' `hybrid_search` (`\"engine\"`: the two top-100 child lists fused "
                  "by its RRFRanker or WeightedRanker, then deduplicated). The engine has no min-max: with any "
                  "normalization but `none` it uses its own arctan normalization (`norm_score`). Weights are "
                  "the knowledge base's (dense 0.4, BM25 0.6). All judged queries; no setting was chosen on them.", "",
                  "| fusion | nDCG@10 | recall@10 | rank p50 ms |", "|---|---|---|---|"]
        for name, row in ef.items():
            lines.append(f"| {name} | {row['ndcg@10']:.4f} | {row['recall@10']:.4f} | {row['p50_ms']} |")
        rr, re_ = ef["rrf ragsift"]["ndcg@10"], ef["rrf engine"]["ndcg@10"]
        wr, we = ef["weighted minmax ragsift"]["ndcg@10"], ef["weighted arctan engine"]["ndcg@10"]
        lines += ["", f"- RRF in the engine is {re_ - rr:+.4f} nDCG@10 against ragsift's: the engine fuses a "
                  "child's two ranks, ragsift a parent's best dense and best BM25 ranks, which may come from two "
                  "different children (SciFact's abstracts have 1.8 children each, so the two rarely part). Weighted "
                  f"fusion loses {wr - we:.4f} in the engine: arctan squeezes BM25's unbounded scores near 1 where "
                  "min-max spreads each list over [0, 1]. With raw scores the two agree. The default stays "
                  "ragsift's weighted min-max; `store_fusion = \"engine\"` is there for the seed design's path "
                  "and a Milvus cluster where one round trip matters more.", ""]
    return lines
