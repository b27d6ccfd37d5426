"""A mixed knowledge base: English (HotpotQA paragraphs) and Chinese (XQuAD paragraphs) documents
together, asked same-language questions (HotpotQA's in English, XQuAD's in Chinese), on the
odd-numbered queries of each set. Rows: each set in a knowledge base of its own (the reference a
mixed one must not lose to) and the mixed one, with the new defaults; the mixed one with today's
fusion (RRF k=60, no cross-language weight); and the mixed one read with BM25 statistics shared
by both languages (what the store did before it kept them per language). Embedder:
use-multilingual (fast enough to embed both corpora).

    .venv/bin/python benchmarks/mixed.py --out benchmarks/results/mixed.json
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

TODAY = {"fusion": "rrf", "rrf_k": 60, "channel_depth": 100, "cross_language_weight": 1.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(SHARED_DATASETS))
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/mixed")
    ap.add_argument("--embedder", default="use-multilingual")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mixed.json"))
    ap.add_argument("--reuse", action="store_true", help="keep the knowledge bases of an earlier run in --work-dir")
    args = ap.parse_args()
    d = Path(args.datasets)
    sets = {"hotpotqa (en)": load_dataset(d / "hotpotqa-ircot-dev500"), "xquad-zh (zh)": load_dataset(d / "xquad-zh")}
    work = Path(args.work_dir)
    reuse = args.reuse and (work / f"mixed-{args.embedder}").exists()
    if not reuse:
        shutil.rmtree(work, ignore_errors=True)
    t0 = time.time()
    kb = KnowledgeBase.open(work / f"mixed-{args.embedder}", embedder=args.embedder)
    for ds in sets.values():
        if not reuse:
            kb.ingest(ds.corpus)
    build_s = time.time() - t0
    alone = {}
    for i, (name, ds) in enumerate(sets.items()):
        alone[name] = KnowledgeBase.open(work / f"alone{i}-{args.embedder}", embedder=args.embedder)
        if not reuse:
            alone[name].ingest(ds.corpus)
    langs = kb.store.languages()
    # the same mixed knowledge base read by a second store whose BM25 keeps one set of statistics
    # for both languages (what every store did before statistics per language)
    shared = KnowledgeBase.open(work / f"mixed-{args.embedder}", embedder=args.embedder)
    shared.store.bm25_per_language = False
    defaults = {k: kb.settings.get(k) for k in ("fusion", "rrf_k", "weights", "normalization", "channel_depth",
                                                "cross_language_weight")}
    new = {k: v.value if hasattr(v, "value") else v for k, v in
           Settings().query.model_dump().items() if k in ("fusion", "rrf_k", "weights", "normalization",
                                                           "channel_depth", "cross_language_weight")}
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "embedder": args.embedder,
           "chunks_by_language": langs, "build_s": None if reuse else round(build_s, 1), "new_defaults": new,
           "knowledge_base_defaults": {k: str(v) for k, v in defaults.items()}, "sets": {}}
    for name, ds in sets.items():
        qids = [q for q in ds.queries if q in ds.qrels][1::2]
        per = {}
        for row, base, cfg in (("alone, new defaults", alone[name], new), ("mixed, new defaults", kb, new),
                               ("mixed, today", kb, TODAY)):
            per[row] = [ndcg_at_k([x for x, _ in base.rank_documents(ds.queries[q], **cfg)], ds.qrels[q], 10)
                        for q in qids]
        per["mixed, new defaults, BM25 statistics shared"] = [
            ndcg_at_k([x for x, _ in shared.rank_documents(ds.queries[q], **new)], ds.qrels[q], 10) for q in qids]
        for ch in ("dense", "bm25"):  # which channel a mixed knowledge base costs
            for row, base in (("alone", alone[name]), ("mixed", kb)) + ((("mixed, statistics shared", shared),)
                                                                         if ch == "bm25" else ()):
                per[f"{ch} only, {row}"] = [ndcg_at_k([x for x, _ in base.rank_documents(ds.queries[q], channels=[ch])],
                                                      ds.qrels[q], 10) for q in qids]
        ref = np.array(per["alone, new defaults"])
        out["sets"][name] = {"queries": len(qids), **{k: statistics.fmean(v) for k, v in per.items()},
                             "p_per_language_vs_shared": paired_randomization_test(
                                 np.array(per["mixed, new defaults, BM25 statistics shared"]),
                                 np.array(per["mixed, new defaults"])),
                             "p_bm25_per_language_vs_shared": paired_randomization_test(
                                 np.array(per["bm25 only, mixed, statistics shared"]), np.array(per["bm25 only, mixed"])),
                             "p_mixed_vs_alone": paired_randomization_test(ref, np.array(per["mixed, new defaults"])),
                             "p_new_vs_today_mixed": paired_randomization_test(np.array(per["mixed, today"]),
                                                                               np.array(per["mixed, new defaults"]))}
        print(name, out["sets"][name], flush=True)
    out["bm25_search_ms"] = bm25_speed(kb, shared, sets)
    print(out["bm25_search_ms"], flush=True)
    write_result(args.out, out)


def bm25_speed(kb: KnowledgeBase, shared: KnowledgeBase, sets: dict) -> dict:
    """The store's BM25 search alone (100 results, as a channel asks), every odd question of both
    sets, statistics per language against shared, interleaved question by question: p50 / p95 ms."""
    terms = [kb.analyzer.analyze(ds.queries[q]) for ds in sets.values()
             for q in [q for q in ds.queries if q in ds.qrels][1::2]]
    times: dict[str, list[float]] = {"per language": [], "shared": []}
    for rnd in range(3):
        for t in terms:
            for name, base in (("per language", kb), ("shared", shared))[::1 if rnd % 2 == 0 else -1]:
                t0 = time.perf_counter()
                base.store.search_bm25(t, 100, None)
                if rnd:  # the first round warms the indexes and the statistics' caches
                    times[name].append((time.perf_counter() - t0) * 1000)
    return {k: {"p50": round(float(np.percentile(v, 50)), 3), "p95": round(float(np.percentile(v, 95)), 3),
                "searches": len(v)} for k, v in times.items()}


if __name__ == "__main__":
    main()
