"""Index expansion on SciFact: what keyword and entity channels, learned sparse vectors and a
second embedding model add to hybrid (dense + BM25, RRF), and what each costs.

    .venv/bin/python benchmarks/expansion.py --dataset ../shared/datasets/scifact

One knowledge base (MiniLM) holds every representation: keyword and entity entries, e5-small
vectors as the extra embedder, splade-tiny learned sparse vectors. Each configuration is a set
of channels on it, evaluated on all judged queries with paired tests against hybrid. The cost
of each representation: its encoding speed on the same chunk texts, side by side, and the disk
size of the knowledge base against one with chunks only.
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.runner import judged_queries, markdown_table, run_config  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

HYBRID = ["dense", "bm25"]
CONFIGS = {
    "hybrid": {"channels": HYBRID},
    "+keywords": {"channels": HYBRID + ["keywords"]},
    "+entities": {"channels": HYBRID + ["entities"]},
    "+keywords+entities": {"channels": HYBRID + ["keywords", "entities"]},
    "+sparse (splade-tiny)": {"channels": HYBRID + ["sparse"]},
    "+dense:e5-small": {"channels": HYBRID + ["dense:e5-small"]},
    "all": {"channels": HYBRID + ["keywords", "entities", "sparse", "dense:e5-small"]},
    "sparse alone": {"channels": ["sparse"]},
    "e5-small alone": {"channels": ["dense:e5-small"]},
}


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--work-dir", default="/tmp/ragsift-bench/expansion")
    ap.add_argument("--sparse", default="splade-tiny")
    ap.add_argument("--extra", default="e5-small")
    ap.add_argument("--sample", type=int, default=200, help="chunk texts timed per representation")
    ap.add_argument("--base-kb", default="/tmp/ragsift-bench/eval/scifact-minilm",
                    help="an existing chunks-only MiniLM knowledge base of the dataset (built if missing)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "expansion.json"))
    args = ap.parse_args()
    ds = load_dataset(args.dataset)
    work = Path(args.work_dir)
    out: dict = {"dataset": str(ds.path), "date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
                 "embedder": "minilm", "extra_embedder": args.extra, "sparse_encoder": args.sparse}
    sizes = {}
    base = KnowledgeBase.open(args.base_kb, embedder="minilm")
    if base.stats()["documents"] == 0:
        t = time.perf_counter()
        base.ingest(ds.corpus)
        sizes["chunks only"] = {"seconds": round(time.perf_counter() - t, 1)}
    sizes.setdefault("chunks only", {"seconds": None}).update(entries=base.stats()["children"],
                                                               disk_bytes=disk(Path(args.base_kb) / "lance"))
    path = work / "expanded"
    if path.exists():
        shutil.rmtree(path)
    kb = KnowledgeBase.open(path, embedder="minilm", small_index=["chunks", "keywords", "entities"],
                            extra_embedders=[args.extra], sparse_encoder=args.sparse)
    t = time.perf_counter()
    kb.ingest(ds.corpus)
    st = kb.stats()
    sizes["expanded"] = {"seconds": round(time.perf_counter() - t, 1), "entries": st["children"],
                         "disk_bytes": disk(path / "lance")}
    print(sizes, flush=True)
    out["knowledge_bases"] = sizes

    # encoding cost per representation, on the same chunk texts, side by side
    from ragsift.models.embedders import load_embedder
    from ragsift.models.sparse import load_sparse_encoder
    from ragsift.text.keywords import entities, keywords

    texts = [ic.child.text for _, _, cs in kb.store.export() for ic in cs if ic.child.kind == "chunk"]
    texts = random.Random(0).sample(texts, min(args.sample, len(texts)))
    encoders = {"minilm (main)": lambda t: load_embedder("minilm").embed_passages(t),
                f"{args.extra} (extra embedder)": lambda t: load_embedder(args.extra).embed_passages(t),
                f"{args.sparse} (learned sparse)": lambda t: load_sparse_encoder(args.sparse).encode_passages(t),
                "keywords + entities": lambda t: [(keywords(x, 10), entities(x)) for x in t]}
    cost = {}
    for name, fn in encoders.items():
        fn(texts[:4])  # load
        t = time.perf_counter()
        fn(texts)
        cost[name] = round(len(texts) / (time.perf_counter() - t), 1)
        print(name, cost[name], "chunks/s", flush=True)
    out["chunks_per_second"] = cost

    qids = judged_queries(ds, None)
    results = []
    for name, cfg in CONFIGS.items():
        r = run_config(kb, ds, name, cfg, qids)
        results.append(r)
        print(name, {k: round(v, 4) for k, v in r.metrics.items()}, flush=True)
    out["queries"] = len(qids)
    out["table"] = markdown_table(results, "hybrid")
    out["metrics"] = {r.name: r.metrics for r in results}
    out["latency_ms"] = {r.name: {"p50": r.p50, "p95": r.p95} for r in results}
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
