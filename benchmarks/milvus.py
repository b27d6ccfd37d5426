"""The same knowledge base on LanceDB and on Milvus: are the answers the same, and what does
each cost? SciFact (MiniLM), copied to a milvus-lite server with ``copy_to`` (no re-embedding).

    .venv/bin/python benchmarks/milvus.py --dataset ../shared/datasets/scifact

For each configuration (BM25, dense, hybrid RRF) and each judged query, the top 10 documents
from both stores are compared and both are timed, alternating, in this one process. Writes
benchmarks/results/milvus.json.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from harness import load_dataset, percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.metrics import evaluate  # noqa: E402
from ragsift.eval.runner import build_kb, judged_queries  # noqa: E402
from ragsift.store.milvus_lite import LiteServer  # noqa: E402

CONFIGS = {"bm25": {"channels": ["bm25"]}, "dense": {"channels": ["dense"]},
           "hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf", "rrf_k": 60}}
# Fusion in ragsift (each channel deduplicated by parent, then fused) against fusion in Milvus'
# engine (hybrid_search over children, then deduplicated): the same channels and weights.
HYBRID = {"channels": ["dense", "bm25"]}
ENGINE_CONFIGS = {
    "rrf ragsift": {**HYBRID, "fusion": "rrf", "rrf_k": 60, "store_fusion": "ragsift"},
    "rrf engine": {**HYBRID, "fusion": "rrf", "rrf_k": 60, "store_fusion": "engine"},
    "weighted minmax ragsift": {**HYBRID, "fusion": "weighted", "normalization": "minmax", "store_fusion": "ragsift"},
    "weighted arctan engine": {**HYBRID, "fusion": "weighted", "normalization": "minmax", "store_fusion": "engine"},
    "weighted raw ragsift": {**HYBRID, "fusion": "weighted", "normalization": "none", "store_fusion": "ragsift"},
    "weighted raw engine": {**HYBRID, "fusion": "weighted", "normalization": "none", "store_fusion": "engine"},
}


def explain(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> dict:
    """How two top-10 lists (LanceDB ``a``, Milvus ``b``) differ, and whether the documents that
    trade places have the same score (a tie broken another way) or not."""
    ids_a, ids_b = [d for d, _ in a], [d for d, _ in b]
    if ids_a == ids_b:
        return {"kind": "identical"}
    kind = "same set, other order" if set(ids_a) == set(ids_b) else "different set"
    first = next((i for i, (x, y) in enumerate(zip(ids_a, ids_b)) if x != y), min(len(ids_a), len(ids_b)))
    sa, sb = dict(a), dict(b)
    pair = (ids_a[first], ids_b[first]) if first < min(len(ids_a), len(ids_b)) else None
    tie = pair is not None and abs(sa[pair[0]] - sb[pair[1]]) <= 1e-6 * max(abs(sa[pair[0]]), 1e-9)
    return {"kind": kind, "first_difference": first + 1, "overlap": len(set(ids_a) & set(ids_b)),
            "there": {"lancedb": [pair[0], sa[pair[0]]], "milvus": [pair[1], sb[pair[1]]]} if pair else None,
            "tie": tie, "only_lancedb": [d for d in ids_a if d not in ids_b],
            "only_milvus": [d for d in ids_b if d not in ids_a]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--max-queries", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "milvus.json"))
    args = ap.parse_args()

    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), args.embedder, progress=False)
    qids = judged_queries(ds, args.max_queries)
    work = Path(args.work_dir) / f"milvus-{int(time.time())}"
    out: dict = {"dataset": str(ds.path), "embedder": args.embedder, "date": time.strftime("%Y-%m-%d"),
                 "command": "python " + " ".join(sys.argv), "queries": len(qids), "configs": {}}
    with LiteServer(work / "server") as uri:
        t = time.perf_counter()
        mkb = kb.copy_to(work / "kb", store_kind="milvus", store_uri=uri)
        out["copy_seconds"] = round(time.perf_counter() - t, 1)
        out["stats"] = {"lancedb": {k: kb.stats()[k] for k in ("documents", "parents", "children")},
                        "milvus": {k: mkb.stats()[k] for k in ("documents", "parents", "children")}}
        print("copied", out["stats"], "in", out["copy_seconds"], "s", flush=True)
        for name, cfg in CONFIGS.items():
            runs = {"lancedb": {}, "milvus": {}}
            lat = {"lancedb": [], "milvus": [], "lancedb_query": [], "milvus_query": []}
            kb.rank_documents(ds.queries[qids[0]], k=10, **cfg)  # warm-up both
            mkb.rank_documents(ds.queries[qids[0]], k=10, **cfg)
            diffs = {}
            for i, qid in enumerate(qids):
                q = ds.queries[qid]
                pair = [("lancedb", kb), ("milvus", mkb)]
                if i % 2:
                    pair.reverse()  # alternate who goes first
                got = {}
                for label, k in pair:
                    t = time.perf_counter()
                    got[label] = k.rank_documents(q, k=10, **cfg)
                    lat[label].append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    k.query(q, **cfg)  # the full query: channels, fusion, parent look-up, packing
                    lat[label + "_query"].append((time.perf_counter() - t) * 1000)
                    runs[label][qid] = [d for d, _ in got[label]]
                e = explain(got["lancedb"], got["milvus"])
                if e["kind"] != "identical":
                    diffs[qid] = e
            metrics = {label: evaluate(run, {q: ds.qrels[q] for q in qids}, ["ndcg@10", "recall@10"])
                       for label, run in runs.items()}
            kinds: dict[str, int] = {}
            for qid in qids:
                kind = diffs[qid]["kind"] if qid in diffs else "identical"
                kinds[kind] = kinds.get(kind, 0) + 1
            out["configs"][name] = {
                "settings": cfg, "top10": kinds, "metrics": metrics,
                "mean_overlap@10": statistics.fmean([diffs[q]["overlap"] if q in diffs else 10 for q in qids]),
                "latency_ms": {label: {"p50": round(percentile(v, 50, method="nearest"), 2), "p95": round(percentile(v, 95, method="nearest"), 2)}
                               for label, v in lat.items()},
                "differences": diffs}
            print(name, kinds, metrics, out["configs"][name]["latency_ms"], flush=True)
        out["engine_fusion"] = engine_fusion(mkb, ds, qids)
        mkb.store.drop()
    write_result(args.out, out)
    return 0


def engine_fusion(mkb, ds, qids: list[str]) -> dict:
    """store_fusion "ragsift" against "engine" on the Milvus knowledge base: nDCG@10 of the
    documents and the mean time of a query, all judged queries, alternating who goes first."""
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in ENGINE_CONFIGS}
    lat: dict[str, list[float]] = {name: [] for name in ENGINE_CONFIGS}
    names = list(ENGINE_CONFIGS)
    for name in names:
        mkb.rank_documents(ds.queries[qids[0]], k=10, **ENGINE_CONFIGS[name])  # warm-up
    for i, qid in enumerate(qids):
        for name in (names if i % 2 == 0 else names[::-1]):
            t = time.perf_counter()
            runs[name][qid] = [d for d, _ in mkb.rank_documents(ds.queries[qid], k=10, **ENGINE_CONFIGS[name])]
            lat[name].append((time.perf_counter() - t) * 1000)
    qrels = {q: ds.qrels[q] for q in qids}
    out = {name: {"settings": ENGINE_CONFIGS[name], **evaluate(runs[name], qrels, ["ndcg@10", "recall@10"]),
                  "p50_ms": round(percentile(lat[name], 50, method="nearest"), 2)} for name in names}
    for name, row in out.items():
        print(name, row, flush=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
