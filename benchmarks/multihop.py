"""Multi-hop retrieval on HotpotQA: single-shot against multi-hop, with the gain threshold
measured on one part of the queries and the comparison made on the other.

    .venv/bin/python benchmarks/multihop.py --dataset ../shared/datasets/hotpotqa-ircot-dev500

1. Calibration (the judged queries after the first ``--test``): multi-hop in keywords mode for
   every ``hop_min_gain`` in a grid, per channel stack; the threshold with the best
   all-relevant@5 (then Recall@10, then the fewest rounds) is kept.
2. Test (the first ``--test`` queries): single-shot against multi-hop with the chosen threshold,
   without and with the LLM (the LLM on the first ``--llm-queries`` of them, it costs seconds a hop).

Writes benchmarks/results/multihop.json (both tables, the grid, the chosen thresholds).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.runner import build_kb, judged_queries, markdown_table, run_config  # noqa: E402

STACKS = {"bm25": {"channels": ["bm25"]},
          "hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf", "rrf_k": 60}}
GRID = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
METRICS = ["ndcg@10", "recall@10", "mrr@10", "all_relevant@5", "all_relevant@10"]


def payload(results) -> dict:
    return {r.name: {"settings": r.settings, "metrics": r.metrics, "p50_ms": r.p50, "p95_ms": r.p95,
                     "multihop": r.multihop, "per_query": r.per_query} for r in results}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--test", type=int, default=300, help="test queries (the first N); the rest calibrate")
    ap.add_argument("--llm", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--llm-queries", type=int, default=100)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "multihop.json"))
    args = ap.parse_args()

    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), args.embedder, progress=False)
    test = judged_queries(ds, args.test)
    cal = judged_queries(ds, None, skip=args.test)
    out: dict = {"dataset": str(ds.path), "embedder": args.embedder, "date": time.strftime("%Y-%m-%d"),
                 "command": "python " + " ".join(sys.argv), "calibration_queries": len(cal),
                 "test_queries": len(test), "grid": {}, "chosen": {}}

    # 1. calibration
    for stack, base in STACKS.items():
        rows = []
        for g in GRID:
            cfg = {**base, "multihop_mode": "keywords", "hop_min_gain": g}
            r = run_config(kb, ds, f"{stack} multi-hop gain>={g}", cfg, cal, metrics=METRICS)
            rows.append(r)
            print(f"calibration {stack} gain>={g}: all_rel@5 {r.metrics['all_relevant@5']:.4f} "
                  f"recall@10 {r.metrics['recall@10']:.4f} rounds {r.multihop['hops_mean']:.2f}", flush=True)
        best = max(rows, key=lambda r: (round(r.metrics["all_relevant@5"], 6), round(r.metrics["recall@10"], 6),
                                        -r.multihop["hops_mean"]))
        out["grid"][stack] = [{"hop_min_gain": r.settings["hop_min_gain"], **r.metrics,
                               "rounds": r.multihop["hops_mean"], "stops": r.multihop["stops"]} for r in rows]
        out["chosen"][stack] = best.settings["hop_min_gain"]

    # 2. test: keywords on every test query, the LLM on the first llm_queries
    results = []
    for stack, base in STACKS.items():
        g = out["chosen"][stack]
        results.append(run_config(kb, ds, f"{stack} single-shot", base, test, metrics=METRICS))
        results.append(run_config(kb, ds, f"{stack} multi-hop keywords", {**base, "multihop_mode": "keywords",
                                                                         "hop_min_gain": g}, test, metrics=METRICS))
    out["test"] = payload(results)
    out["test_table"] = markdown_table(results, results[0].name, METRICS)
    print(out["test_table"], flush=True)
    llm_q = test[: args.llm_queries]
    llm_results = []
    for stack, base in STACKS.items():
        g = out["chosen"][stack]
        llm_results.append(run_config(kb, ds, f"{stack} single-shot", base, llm_q, metrics=METRICS))
        llm_results.append(run_config(kb, ds, f"{stack} multi-hop keywords",
                                      {**base, "multihop_mode": "keywords", "hop_min_gain": g}, llm_q, metrics=METRICS))
        llm_results.append(run_config(kb, ds, f"{stack} multi-hop LLM",
                                      {**base, "multihop_mode": "llm", "hop_min_gain": g, "llm_model": args.llm,
                                       "channel_timeouts": {"follow_up": 120}}, llm_q, metrics=METRICS))
        print(markdown_table(llm_results, llm_results[0].name, METRICS), flush=True)
    out["llm_queries"] = len(llm_q)
    out["llm"] = payload(llm_results)
    out["llm_table"] = markdown_table(llm_results, llm_results[0].name, METRICS)
    write_result(args.out, out)
    print(out["llm_table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
