"""Run named retrieval configurations over a BEIR dataset and score them."""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ragsift.errors import RagsiftError
from ragsift.eval.datasets import Dataset, load_beir
from ragsift.eval.metrics import evaluate, per_query

CONFIGS: dict[str, dict[str, Any]] = {
    "bm25": {"channels": ["bm25"]},
    "dense": {"channels": ["dense"]},
    "hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf", "rrf_k": 60},
    "hybrid-weighted": {"channels": ["dense", "bm25"], "fusion": "weighted",
                        "weights": {"dense": 0.5, "bm25": 0.5}, "normalization": "minmax"},
}
METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "map@100", "all_relevant@10"]


def build_kb(ds: Dataset, work_dir: Path, embedder: str, progress: bool):
    from ragsift.cli import _progress_factory
    from ragsift.kb import KnowledgeBase

    kb = KnowledgeBase.open(work_dir / f"{ds.name}-{embedder}", embedder=embedder)
    report = kb.ingest(ds.corpus, progress=_progress_factory(progress))
    return kb, report


def run_config(kb, ds: Dataset, overrides: dict[str, Any], k: int = 100, progress: bool = False,
               max_queries: int | None = None) -> tuple[dict[str, list[str]], list[float]]:
    qids = [q for q in ds.qrels if q in ds.queries][:max_queries]
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(qids), desc="queries", file=sys.stderr, dynamic_ncols=True)
    for qid in qids:
        t = time.perf_counter()
        ranked = kb.rank_documents(ds.queries[qid], k=k, **overrides)
        latencies.append((time.perf_counter() - t) * 1000)
        run[qid] = [d for d, _ in ranked]
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    return run, latencies


def run_eval_cli(args) -> int:
    ds = load_beir(args.dataset, args.split)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    for n in names:
        if n not in CONFIGS:
            raise RagsiftError(f"unknown config {n!r}; valid: {', '.join(CONFIGS)}")
    progress = sys.stderr.isatty()
    kb, report = build_kb(ds, Path(args.work_dir), args.embedder, progress)
    print(f"{ds.name}: {len(ds.queries)} queries, {len(ds.qrels)} judged; knowledge base "
          f"{kb.path} ({report.children} children embedded now, {len(report.unchanged)} docs unchanged)")
    qrels = {q: r for q, r in ds.qrels.items() if q in ds.queries}
    if args.max_queries:
        qrels = dict(list(qrels.items())[: args.max_queries])
    results: dict[str, Any] = {}
    header = f"| config | {' | '.join(METRICS)} | p50 ms |"
    lines = [header, "|" + "---|" * (len(METRICS) + 2)]
    for n in names:
        run, lat = run_config(kb, ds, CONFIGS[n], progress=progress, max_queries=args.max_queries)
        scores = evaluate(run, qrels, METRICS)
        results[n] = {"settings": CONFIGS[n], "metrics": scores, "p50_ms": statistics.median(lat),
                      "per_query": per_query(run, qrels, METRICS), "run": run}
        lines.append(f"| {n} | " + " | ".join(f"{scores[m]:.4f}" for m in METRICS)
                     + f" | {statistics.median(lat):.1f} |")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text(json.dumps({"dataset": str(ds.path), "embedder": args.embedder,
                                              "results": results}, ensure_ascii=False), encoding="utf-8")
    return 0
