"""English questions over Chinese paragraphs (XQuAD cross-lingual) with a language model that
translates the question for the term channels, against the same defaults without a model.

    .venv/bin/python benchmarks/translate.py --dataset ../shared/datasets/xquad-xling --queries 100

The queries are the first ``--queries`` odd-numbered judged queries (file order; the even ones
chose the fusion defaults). Each configuration is the knowledge base's defaults plus what the row
names; the model's answers are cached, so the cost per question is the first run's.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.runner import build_kb, run_config  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--embedder", default="e5-small")
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--llm", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "translate.json"))
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), args.embedder, progress=False)
    judged = [q for q in ds.queries if q in ds.qrels]
    qids = judged[1::2][:args.queries]
    configs = {
        "dense": {"channels": ["dense"]},
        "hybrid, no model (defaults)": {},
        "hybrid + translation": {"llm_model": args.llm, "translate": True, "channel_timeout_s": 300},
    }
    results = {}
    for name, overrides in configs.items():
        t = time.perf_counter()
        r = run_config(kb, ds, name, overrides, qids)
        results[name] = {"settings": overrides, "metrics": r.metrics, "p50_ms": r.p50,
                         "seconds_per_query": (time.perf_counter() - t) / len(qids), "per_query": r.per_query}
        print(name, {k: round(v, 4) for k, v in r.metrics.items() if k in ("ndcg@10", "recall@10")},
              f"{results[name]['seconds_per_query']:.2f} s/query", flush=True)
    base = results["hybrid, no model (defaults)"]["per_query"]
    for r in results.values():
        a = np.array([base[q]["ndcg@10"] for q in qids])
        b = np.array([r["per_query"][q]["ndcg@10"] for q in qids])
        r["p_vs_defaults"] = paired_randomization_test(a, b)
    sample = kb.query(ds.queries[qids[0]], llm_model=args.llm, channel_timeout_s=300).trace.transforms.get("translate")
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "dataset": args.dataset,
           "embedder": args.embedder, "llm_model": args.llm, "queries": len(qids),
           "example": {"question": ds.queries[qids[0]], "translate": sample},
           "results": {k: {kk: vv for kk, vv in v.items() if kk != "per_query"} for k, v in results.items()}}
    write_result(args.out, out)


if __name__ == "__main__":
    main()
