"""MiniLM's questions on the int8 copy of its graph against the float graph, on SciFact: the CPU
a question's embedding costs (both graphs in one process, question by question in turn), how
close the vectors are, and nDCG@10 of the dense channel and of the default hybrid search, paired
question by question (each side ranks in a process of its own: ``$RAGSIFT_MINILM_QUERY_INT8``).

    .venv/bin/python benchmarks/query_int8.py --dataset ../shared/datasets/scifact \\
        --work-dir /tmp/ragsift-bench/eval --out benchmarks/results/query_int8.json

The knowledge base: the dataset's corpus, embedder minilm, default settings (built once in
--work-dir, shared with ``ragsift eval``'s); its stored vectors come from the float graph either
way. Nothing is chosen here, so every judged question is reported (and the odd half beside).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.runner import build_kb, judged_queries, run_config  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402

SEARCHES = {"dense": {"channels": ["dense"]}, "default": {}}


def _rank(args: argparse.Namespace) -> int:
    """One side's per-question nDCG@10 (a child process: the embedder is loaded once per process)."""
    ds = load_dataset(args.dataset)
    kb, _ = build_kb(ds, Path(args.work_dir), "minilm", progress=False)
    qids = judged_queries(ds, None)
    out = {name: run_config(kb, ds, name, overrides, qids).per_query for name, overrides in SEARCHES.items()}
    print(json.dumps({"qids": qids, "ndcg": {n: [pq[q]["ndcg@10"] for q in qids] for n, pq in out.items()}}))
    return 0


def speed_child(questions: list[str], threads: int) -> dict:
    os.environ["RAGSIFT_THREADS"] = str(threads)
    import numpy as np

    from ragsift.models.embedders import MiniLMOnnx

    graphs = {"float": MiniLMOnnx(query_int8=False), "int8": MiniLMOnnx(query_int8=True)}
    cpu: dict[str, list[float]] = {k: [] for k in graphs}
    wall: dict[str, list[float]] = {k: [] for k in graphs}
    for q in questions[:20]:  # warm-up
        for m in graphs.values():
            m.embed_queries([q])
    vectors: dict[str, list] = {k: [] for k in graphs}
    for q in questions:  # in turn, question by question
        for name, m in graphs.items():
            c, w = time.process_time(), time.perf_counter()
            vectors[name].append(m.embed_queries([q])[0])
            cpu[name].append((time.process_time() - c) * 1000)
            wall[name].append((time.perf_counter() - w) * 1000)
    cos = (np.array(vectors["float"]) * np.array(vectors["int8"])).sum(1)
    return {"threads": threads,
            "cpu_ms_mean": {k: round(statistics.fmean(v), 2) for k, v in cpu.items()},
            "wall_ms_p50": {k: round(statistics.median(v), 2) for k, v in wall.items()},
            "cpu_ratio": round(statistics.fmean(cpu["float"]) / statistics.fmean(cpu["int8"]), 2),
            "cosine": {"min": round(float(cos.min()), 4), "mean": round(float(cos.mean()), 4)}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/eval")
    ap.add_argument("--threads", default="1,2", help="the speed runs' $RAGSIFT_THREADS, in turn")
    ap.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)  # a child: one side's rankings
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "query_int8.json"))
    args = ap.parse_args()
    if args.rank:
        return _rank(args)
    ds = load_dataset(args.dataset)
    build_kb(ds, Path(args.work_dir), "minilm", progress=False)  # built here once, not in both children
    questions = [ds.queries[q] for q in judged_queries(ds, None)]
    speed = []
    for t in args.threads.split(","):  # each in a child: the thread count is read when a graph loads
        code = (f"import sys, json; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import query_int8 as b; "
                f"print(json.dumps(b.speed_child(json.loads(sys.stdin.read()), {int(t)})))")
        r = subprocess.run([sys.executable, "-c", code], input=json.dumps(questions), capture_output=True,
                           text=True, check=True)
        speed.append(json.loads(r.stdout.strip().splitlines()[-1]))
        print(speed[-1], flush=True)
    sides = {}
    for side, flag in (("float", "0"), ("int8", "1")):
        r = subprocess.run([sys.executable, __file__, "--rank", "--dataset", args.dataset, "--work-dir", args.work_dir],
                           env={**os.environ, "RAGSIFT_MINILM_QUERY_INT8": flag}, capture_output=True, text=True,
                           check=True)
        sides[side] = json.loads(r.stdout.strip().splitlines()[-1])
    qids = sides["float"]["qids"]
    odd = [i for i in range(len(qids)) if i % 2 == 1]
    quality = {}
    for name in SEARCHES:
        a, b = sides["float"]["ndcg"][name], sides["int8"]["ndcg"][name]
        quality[name] = {
            "all": {"float": round(statistics.fmean(a), 4), "int8": round(statistics.fmean(b), 4),
                    "p": round(paired_randomization_test(a, b), 3)},
            "odd": {"float": round(statistics.fmean([a[i] for i in odd]), 4),
                    "int8": round(statistics.fmean([b[i] for i in odd]), 4),
                    "p": round(paired_randomization_test([a[i] for i in odd], [b[i] for i in odd]), 3)},
            "questions_changed": sum(x != y for x, y in zip(a, b))}
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/query_int8.py " + " ".join(sys.argv[1:]),
              "dataset": str(ds.path), "questions": len(qids), "embedder": "minilm", "speed": speed,
              "ndcg@10": quality}
    write_result(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
