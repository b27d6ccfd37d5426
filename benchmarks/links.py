"""Multi-hop without a model, following the documents that titles name (``multihop_mode="keywords"``:
named in the question, named by the passages found), on HotpotQA (IRCoT dev 500), on the
package's default single shot (weighted hybrid).

    .venv/bin/python benchmarks/links.py --dataset ../shared/datasets/hotpotqa-ircot-dev500

1. Calibration, the last ``--calibrate`` judged queries: a grid of hops_max, hop_min_gain and
   hop_protect; kept: the best all-relevant@5, then Recall@10, then the fewest rounds.
2. Test, the first ``--test`` judged queries (and all of them): single shot against the kept
   setting and against the package defaults for multi-hop, with paired randomization p-values.
3. With ``--llm N``: multi-hop with the packaged model (``multihop_mode="llm"``: the named and linked
   documents, and the model's own follow-up query) on the first N test queries, beside single shot
   and keywords mode on the same queries, with its cost per question (model calls, seconds).

Writes benchmarks/results/links.json.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.runner import build_kb, judged_queries, run_config  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402

METRICS = ["ndcg@10", "recall@10", "all_relevant@5", "all_relevant@10"]
GRID = {"hops_max": [2, 3], "hop_min_gain": [0.0, 0.3], "hop_protect": [1, 2]}
FUSION_KEYS = ("fusion", "rrf_k", "weights", "normalization", "channel_depth", "cross_language_weight")


def row(r) -> dict:
    return {"settings": r.settings, "metrics": r.metrics, "p50_ms": r.p50, "p95_ms": r.p95,
            "mean_ms": float(np.mean(r.latencies_ms)), "multihop": r.multihop}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--test", type=int, default=300, help="test queries (the first N); the rest calibrate")
    ap.add_argument("--llm", type=int, default=0, help="multi-hop with the model on the first N test queries")
    ap.add_argument("--model", default="local:qwen2.5-coder-1.5b")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "links.json"))
    args = ap.parse_args()

    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), args.embedder, progress=False)
    q = Settings().query.model_dump(mode="json")
    base = {k: q[k] for k in FUSION_KEYS}  # the package's default single shot, whatever the KB was made with
    test, cal = judged_queries(ds, args.test), judged_queries(ds, None, skip=args.test)
    out: dict = {"dataset": str(ds.path), "embedder": args.embedder, "date": time.strftime("%Y-%m-%d"),
                 "command": "python " + " ".join(sys.argv), "single_shot": base, "calibration_queries": len(cal),
                 "test_queries": len(test), "grid": []}

    single_cal = run_config(kb, ds, "single shot", base, cal, metrics=METRICS)
    out["calibration_single_shot"] = single_cal.metrics
    rows = []
    for values in itertools.product(*GRID.values()):
        cfg = {**base, "multihop_mode": "keywords", **dict(zip(GRID, values))}
        r = run_config(kb, ds, "keywords " + ", ".join(f"{k}={v}" for k, v in zip(GRID, values)), cfg, cal,
                       metrics=METRICS)
        rows.append(r)
        out["grid"].append({**dict(zip(GRID, values)), **r.metrics, "rounds": r.multihop["hops_mean"],
                            "stops": r.multihop["stops"], "p50_ms": r.p50})
        print(r.name, {k: round(v, 4) for k, v in r.metrics.items()}, f"rounds {r.multihop['hops_mean']:.2f}",
              flush=True)
    best = max(rows, key=lambda r: (round(r.metrics["all_relevant@5"], 6), round(r.metrics["recall@10"], 6),
                                    -r.multihop["hops_mean"]))
    out["chosen"] = {k: best.settings[k] for k in GRID}

    m = Settings().multihop.model_dump(mode="json")
    configs = {"single shot": base,
               "keywords multi-hop, package defaults": {**base, "multihop_mode": "keywords", **{k: m[k] for k in GRID}},
               "keywords multi-hop, calibrated": {**base, "multihop_mode": "keywords", **out["chosen"]}}
    out["package_defaults"] = {k: m[k] for k in GRID}
    parts = [("test", test, configs), ("all", test + cal, configs)]
    if args.llm:
        llm = {**base, "multihop_mode": "llm", **out["chosen"], "llm_model": args.model, "channel_timeout_s": 600}
        parts.append((f"test_first_{args.llm}", test[: args.llm],
                       {**configs, f"llm multi-hop ({args.model}), calibrated": llm}))
    for part, qids, cfgs in parts:
        res = {name: run_config(kb, ds, name, cfg, qids, metrics=METRICS) for name, cfg in cfgs.items()}
        ref = res["single shot"].per_query
        out[part] = {}
        for name, r in res.items():
            out[part][name] = row(r)
            out[part][name]["p_vs_single_shot"] = {
                k: paired_randomization_test(np.array([ref[x][k] for x in qids]),
                                             np.array([r.per_query[x][k] for x in qids]))
                for k in ("all_relevant@5", "recall@10", "ndcg@10")}
            print(part, name, {k: round(v, 4) for k, v in r.metrics.items()}, f"p50 {r.p50:.0f} ms", flush=True)
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
