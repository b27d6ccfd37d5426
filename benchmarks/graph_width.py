"""Why filtered dense search misses at a million synthetic children: the graph's own recall@10 and
time by search width, without a filter and with filters keeping 10% and 50%; and, on the same
BM25 index, how many row blocks a block-max bound would leave to score.

    .venv/bin/python benchmarks/graph_width.py --kb /tmp/ragsift-filtered/filtered-1000000 \\
        --dataset ../shared/datasets/scifact --out benchmarks/results/graph_width.json

- The store of ``benchmarks/filtered.py --n 1000000`` (its largest segment's saved HNSW graph,
  vectors and BM25 postings). 40 SciFact queries embedded by minilm.
- Graph: usearch's search ``width`` candidates wide, the allowed ones' first 40 re-ranked exactly
  (what ``AnnIndex.search`` does for k=10), recall@10 against exact filtered search in NumPy.
- Blocks: per query, each block of B rows bounded by the sum over query terms of the term's best
  weight in the block (exact, the tightest block-max bound); the share of blocks whose bound
  reaches the query's exact 100th best score (those a block-max search must score).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from harness import write_result

HERE = Path(__file__).resolve().parent


def main() -> int:
    import onnxruntime  # noqa: F401  # loaded before usearch and lancedb (the other order crashed here)

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, str(HERE))
    from filtered import truth
    from scale import queries
    from usearch.index import Index

    from ragsift.kb import KnowledgeBase
    from ragsift.store.memindex import weigh
    from ragsift.store.segments import norm_of

    kb_path = Path(args.kb)
    kb = KnowledgeBase.open(kb_path, create=False)
    qs = queries(Path(args.dataset), 40)
    qv = kb.embedder().embed_queries(qs)
    qv = qv / np.linalg.norm(qv, axis=1, keepdims=True)
    vecs, buckets, _ = truth(kb_path)
    seg = max(kb.store.segments(), key=lambda s: s.rows.n)
    d = seg.cache_dir("vector")
    index = Index.restore(str(d / "graph.usearch"), view=True)
    index.expansion_search = 1024
    full = np.memmap(d / "vectors.f32", np.float32, "r").reshape(-1, vecs.shape[1])
    n = full.shape[0]
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/graph_width.py " + " ".join(sys.argv[1:]),
                 "rows": n, "graph": [], "blocks": {}}
    for share in (1.0, 0.1, 0.5):
        mask = buckets[:n] < int(share * 1000)
        idx = np.flatnonzero(mask)
        for width in (1024, 2048, 4096, 8192):
            rec, ts = [], []
            for v in qv:
                exact = set(idx[np.argsort(-(vecs[idx] @ v))[:10]].tolist())
                t = time.perf_counter()
                keys = np.asarray(index.search(v, width).keys, np.int64)
                keys = np.sort(keys[mask[keys]][:40])
                top = keys[np.argsort(-(full[keys] @ v))[:10]]
                ts.append((time.perf_counter() - t) * 1000)
                rec.append(len(exact & set(top.tolist())) / 10)
            out["graph"].append({"share": share, "width": width, "recall_at_10": float(np.mean(rec)),
                                 "p50_ms": float(np.median(ts))})
            print(out["graph"][-1], flush=True)
    bm25 = kb.store.bm25_index(seg)
    stats = kb.store.bm25_stats()
    norm = norm_of(bm25, stats.avgdl)
    items = [stats.weights(kb.analyzer.analyze(q)) for q in qs]
    thetas = []
    for it in items:
        hits = bm25.search(it, 100, None, norm, stats.avgdl)
        thetas.append(float(hits.scores[-1]) if len(hits.scores) == 100 else 0.0)
    for size in (16, 32, 64, 256):
        shares = []
        for it, theta in zip(items, thetas):
            bound = np.zeros(n // size + 1)
            for term, w in it:
                i = bm25.vocab.get(term)
                if i is None:
                    continue
                a, b = int(bm25.indptr[i]), int(bm25.indptr[i + 1])
                rows = np.asarray(bm25.post_rows[a:b])
                best = np.zeros(n // size + 1)
                np.maximum.at(best, rows // size, weigh(bm25.post_tf[a:b], norm[rows], w))
                bound += best
            shares.append(float((bound >= theta).mean()))
        out["blocks"][size] = {"mean_share_to_score": float(np.mean(shares)), "median": float(np.median(shares))}
        print(size, out["blocks"][size], flush=True)
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
