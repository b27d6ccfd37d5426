"""The user's path against the core, on SciFact: ``KnowledgeBase.query`` (passages, packing,
sentence marks and the trace; with and without naming the trace's units) against
``rank_documents`` (document ids only), interleaved query by query in one process, and the
query embedding alone as the floor.

    .venv/bin/python benchmarks/query_path.py --dataset ../shared/datasets/scifact \\
        --work-dir /tmp/ragsift-bench/eval --out benchmarks/results/query_path.json

The knowledge base: the dataset's corpus, embedder minilm, default settings (built once in
--work-dir, shared with ``ragsift eval``'s).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from harness import load_dataset, percentile, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.runner import build_kb  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "query_path.json"))
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), "minilm", progress=False)
    qs = [ds.queries[q] for q in ds.qrels if q in ds.queries][:args.queries]
    for q in qs[:10]:  # warm-up: the model, the indexes
        kb.query(q)
        kb.rank_documents(q)
    runs: dict[str, list[float]] = {"rank_documents": [], "query": [], "query_no_trace": [], "embedding": []}
    calls = {"rank_documents": lambda q: kb.rank_documents(q), "query": lambda q: kb.query(q),
             "query_no_trace": lambda q: kb.query(q, trace=False),
             "embedding": lambda q: kb.embedder().embed_queries([q])}
    for q in qs:  # interleaved: each question through every path in turn
        for name, fn in calls.items():
            t = time.perf_counter()
            fn(q)
            runs[name].append((time.perf_counter() - t) * 1000)
    p50 = {name: statistics.median(x) for name, x in runs.items()}
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/query_path.py " + " ".join(sys.argv[1:]),
              "dataset": str(ds.path), "queries": len(qs), "embedder": "minilm",
              "p50_ms": {k: round(v, 2) for k, v in p50.items()},
              "p95_ms": {k: round(percentile(x, 95, method="nearest"), 2) for k, x in runs.items()},
              "ratio_to_rank_documents": {k: round(p50[k] / p50["rank_documents"], 2) for k in ("query", "query_no_trace")}}
    write_result(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
