"""A mixed knowledge base: English (HotpotQA paragraphs) and Chinese (XQuAD paragraphs) documents
together, asked same-language questions (HotpotQA's in English, XQuAD's in Chinese), on the
odd-numbered queries of each set. Rows: each set in a knowledge base of its own (the reference a
mixed one must not lose to) and the mixed one, with the new defaults; and the mixed one with
today's fusion (RRF k=60, no cross-language weight). Embedder: use-multilingual (fast enough to
embed both corpora).

    .venv/bin/python benchmarks/mixed.py --out benchmarks/results/mixed.json
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.datasets import load_beir  # noqa: E402
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

TODAY = {"fusion": "rrf", "rrf_k": 60, "channel_depth": 100, "cross_language_weight": 1.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(ROOT.parent / "shared" / "datasets"))
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/mixed")
    ap.add_argument("--embedder", default="use-multilingual")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mixed.json"))
    args = ap.parse_args()
    d = Path(args.datasets)
    sets = {"hotpotqa (en)": load_beir(d / "hotpotqa-ircot-dev500"), "xquad-zh (zh)": load_beir(d / "xquad-zh")}
    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.time()
    kb = KnowledgeBase.open(work / f"mixed-{args.embedder}", embedder=args.embedder)
    for ds in sets.values():
        kb.ingest(ds.corpus)
    build_s = time.time() - t0
    alone = {}
    for i, (name, ds) in enumerate(sets.items()):
        alone[name] = KnowledgeBase.open(work / f"alone{i}-{args.embedder}", embedder=args.embedder)
        alone[name].ingest(ds.corpus)
    langs = kb.store.languages()
    defaults = {k: kb.settings.get(k) for k in ("fusion", "rrf_k", "weights", "normalization", "channel_depth",
                                                "cross_language_weight")}
    new = {k: v.value if hasattr(v, "value") else v for k, v in
           Settings().query.model_dump().items() if k in ("fusion", "rrf_k", "weights", "normalization",
                                                           "channel_depth", "cross_language_weight")}
    out = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv), "embedder": args.embedder,
           "chunks_by_language": langs, "build_s": round(build_s, 1), "new_defaults": new,
           "knowledge_base_defaults": {k: str(v) for k, v in defaults.items()}, "sets": {}}
    for name, ds in sets.items():
        qids = [q for q in ds.queries if q in ds.qrels][1::2]
        per = {}
        for row, base, cfg in (("alone, new defaults", alone[name], new), ("mixed, new defaults", kb, new),
                               ("mixed, today", kb, TODAY)):
            per[row] = [ndcg_at_k([x for x, _ in base.rank_documents(ds.queries[q], **cfg)], ds.qrels[q], 10)
                        for q in qids]
        for ch in ("dense", "bm25"):  # which channel a mixed knowledge base costs
            for row, base in (("alone", alone[name]), ("mixed", kb)):
                per[f"{ch} only, {row}"] = [ndcg_at_k([x for x, _ in base.rank_documents(ds.queries[q], channels=[ch])],
                                                      ds.qrels[q], 10) for q in qids]
        ref = np.array(per["alone, new defaults"])
        out["sets"][name] = {"queries": len(qids), **{k: statistics.fmean(v) for k, v in per.items()},
                             "p_mixed_vs_alone": paired_randomization_test(ref, np.array(per["mixed, new defaults"])),
                             "p_new_vs_today_mixed": paired_randomization_test(np.array(per["mixed, today"]),
                                                                               np.array(per["mixed, new defaults"]))}
        print(name, out["sets"][name], flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
