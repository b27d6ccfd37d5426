"""Retrieval metrics at document level, with graded relevance as given in the qrels.

Definitions (``rel(d)`` is the qrels grade, 0 when absent; ``R`` is the set of documents with
``rel > 0``; ranks are 1-based; a run lists each document once, best first):

- ``ndcg@k``: DCG@k / IDCG@k with DCG@k = sum_{i<=k} rel(d_i) / log2(i + 1) (linear gain, as
  trec_eval's ``ndcg_cut`` and ranx's default); IDCG@k is the DCG of the ideal ordering of
  the qrels. Järvelin and Kekäläinen, TOIS 2002.
- ``recall@k``: |R ∩ top k| / |R|.
- ``mrr@k``: 1 / rank of the first relevant document within the top k, else 0.
- ``map@k``: average precision: the sum over relevant d_i with i <= k of precision@i,
  divided by |R| (trec_eval's ``map_cut`` and ranx's ``map@k``).
- ``all_relevant@k``: 1 when every document in R is within the top k, else 0 (what a
  multi-hop question needs).

Queries whose qrels have no relevant document are left out; a query with no run scores 0.
Scores are means over queries. ``tests/eval/test_metrics.py`` checks them against ranx.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Run = Mapping[str, Sequence[str]]  # query id -> ranked doc ids
Qrels = Mapping[str, Mapping[str, int]]


def ndcg_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def ap_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    n_rel = sum(1 for r in rels.values() if r > 0)
    if n_rel == 0:
        return 0.0
    hits, total = 0, 0.0
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            hits += 1
            total += hits / (i + 1)
    return total / n_rel


def all_relevant_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return 1.0 if relevant and relevant.issubset(ranked[:k]) else 0.0


METRICS = {"ndcg": ndcg_at_k, "recall": recall_at_k, "mrr": mrr_at_k, "map": ap_at_k,
           "all_relevant": all_relevant_at_k}


def parse_metric(name: str) -> tuple[str, int]:
    base, _, k = name.partition("@")
    if base not in METRICS or not k.isdigit():
        raise ValueError(f"unknown metric {name!r}; use one of {', '.join(METRICS)} with @k")
    return base, int(k)


def per_query(run: Run, qrels: Qrels, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    parsed = [(m, *parse_metric(m)) for m in metrics]
    for qid, rels in qrels.items():
        if not any(r > 0 for r in rels.values()):
            continue
        ranked = _dedupe(run.get(qid, ()))
        out[qid] = {m: METRICS[base](ranked, rels, k) for m, base, k in parsed}
    return out


def evaluate(run: Run, qrels: Qrels, metrics: Sequence[str]) -> dict[str, float]:
    pq = per_query(run, qrels, metrics)
    if not pq:
        return {m: 0.0 for m in metrics}
    return {m: sum(v[m] for v in pq.values()) / len(pq) for m in metrics}


def _dedupe(ranked: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranked))
