"""LanceDB's caches in a long-running process: RSS over many small commits with a reader in the
same process, for several cache sizes (``RAGSIFT_LANCE_CACHE_MB``, each of LanceDB's two caches)
and for LanceDB's own defaults (the connection made without ragsift's session, as the store did
before). No embedding model: vectors are hashed bags of words, so the process holds only the
store, its readers' indexes and LanceDB.

    .venv/bin/python benchmarks/lance_cache.py --out benchmarks/results/lance_cache.json

- Each size runs in a process of its own (``--child``), with at most 2 malloc arenas and a trim
  before each sample (as ``ragsift serve`` runs).
- The store starts with --docs documents (Chinese and English); each commit rewrites 12 of them
  and adds 2 (the soak's change, without deletes); after each, a second store in the same process
  (a reader) refreshes and runs a BM25 and a dense search.
- RSS (VmRSS) and the session's cached bytes are sampled every 25 commits; the slope is the
  least-squares growth per commit from commit 50 on.
- ``--query-kb KB`` (repeatable): ``KnowledgeBase.query`` p50 / p90 on that knowledge base with each
  cache size, each in a process of its own, every size twice in turn (``--dataset``'s questions).
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result
from soak import rss_mb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

TEXTS = ["绿茶应在零至五摄氏度冷藏保存，红茶常温密封即可，可保存两年。" * 4,
         "Clean the solar panels twice a year with soft water; the inverter converts direct current. " * 6]


def use_caches(size: str) -> None:
    """This process's LanceDB caches: ``size`` MB each, or LanceDB's own defaults ("lancedb": the
    store's connections made without ragsift's session, as before it had one)."""
    if size == "lancedb":
        import lancedb

        from ragsift.store import lance as lance_mod

        lance_mod.connect = lambda folder, **kw: lancedb.connect(str(folder), **kw)  # type: ignore[assignment]
    else:
        os.environ["RAGSIFT_LANCE_CACHE_MB"] = size


def run_child(*args: str) -> dict:
    """This script run as a child process (without the caller's $RAGSIFT_LANCE_CACHE_MB); its last line."""
    env = {k: v for k, v in os.environ.items() if k != "RAGSIFT_LANCE_CACHE_MB"}
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def child(size: str, commits: int, docs: int) -> dict:
    import numpy as np

    from ragsift.ingest.splitter import SplitSettings, index_text, split_document
    from ragsift.process import limit_arenas, release
    from ragsift.store import lance_files
    from ragsift.store.base import IndexedChild
    from ragsift.store.lance import LanceStore
    from ragsift.text.analyzer import UnicodeAnalyzer
    from ragsift.text.lang import detect_language
    from ragsift.types import Document

    limit_arenas(2)
    use_caches(size)
    analyzer = UnicodeAnalyzer()

    def vector(text: str) -> np.ndarray:
        v = np.zeros(64, np.float32)
        for t in analyzer.analyze(text).split():
            v[int(hashlib.md5(t.encode()).hexdigest(), 16) % 64] += 1.0
        return v

    def doc(i: int, version: str = "") -> tuple:
        text = f"# Note {i}\n\n{TEXTS[i % 2]} ({i}) {version}"
        d = Document(f"d{i}", f"d{i}.md", f"Note {i}", text, hashlib.sha256(text.encode()).hexdigest(), "md", {})
        parents, children = split_document(d, SplitSettings(400, 60, 10))
        pmap = {p.parent_id: p for p in parents}
        return d, parents, [IndexedChild(c, analyzer.analyze(t), vector(t), lang=detect_language(c.text))
                            for c in children for t in [index_text(d, pmap[c.parent_id], c, True)]]

    path = Path(tempfile.mkdtemp(prefix="lance-cache-"))
    writer = LanceStore(path / "kb", dim=64)
    with writer.begin() as txn:
        for i in range(docs):
            txn.put_document(*doc(i))
    reader = LanceStore(path / "kb")
    rng = random.Random(0)
    top = docs
    samples = []
    t0 = time.time()
    for c in range(commits + 1):
        if c:
            with writer.begin() as txn:
                for i in rng.sample(range(top), 12):
                    txn.put_document(*doc(i, f"v{c}"))
                for i in (top, top + 1):
                    txn.put_document(*doc(i))
                top += 2
            reader.refresh()
            assert reader.search_bm25(analyzer.analyze("green tea solar 绿茶"), 10, None)
            assert reader.search_dense(vector("solar panels"), 10, None)
        if c % 25 == 0:
            gc.collect()
            release()
            session = lance_files.cache_session()
            samples.append({"commit": c, "rss_mb": round(rss_mb(), 1),
                            "cached_mb": None if session is None else round(session.size_bytes / 2**20, 2)})
    return {"size": size, "samples": samples, "seconds": round(time.time() - t0, 1)}


def query_child(size: str, kb_path: str, dataset: str, n: int) -> dict:
    """``KnowledgeBase.query`` (trace off) p50 / p90 over ``n`` questions after 20 to warm, with
    this cache size."""
    import statistics

    from ragsift.kb import KnowledgeBase
    from ragsift.store import lance_files

    use_caches(size)
    ds = load_dataset(dataset)
    questions = [ds.queries[q] for q in ds.queries if q in ds.qrels][:n]
    kb = KnowledgeBase.open(kb_path)
    for q in questions[:20]:
        kb.query(q, trace=False)
    times = []
    for q in questions:
        t0 = time.perf_counter()
        kb.query(q, trace=False)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    session = lance_files.cache_session()
    return {"size": size, "kb": kb_path, "p50_ms": round(statistics.median(times), 2),
            "p90_ms": round(times[int(len(times) * 0.9)], 2), "rss_mb": round(rss_mb(), 1),
            "cached_mb": None if session is None else round(session.size_bytes / 2**20, 2)}


def slope(samples: list[dict], start: int = 50) -> float:
    pts = [(s["commit"], s["rss_mb"]) for s in samples if s["commit"] >= start]
    if len(pts) < 2:
        return float("nan")
    mx, my = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,16,lancedb", help="MB per cache, or 'lancedb' for LanceDB's defaults")
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lance_cache.json"))
    ap.add_argument("--query-kb", action="append", default=[],
                    help="also time KnowledgeBase.query on this knowledge base with each cache size (repeatable)")
    ap.add_argument("--dataset", default=str(SHARED_DATASETS / "scifact"),
                    help="the questions --query-kb asks (BEIR)")
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-kb", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child and args.child_kb:
        print(json.dumps(query_child(args.child, args.child_kb, args.dataset, args.questions)))
        return
    if args.child:
        print(json.dumps(child(args.child, args.commits, args.docs)))
        return
    runs = []
    for size in args.sizes.split(",") if args.commits else []:
        run = run_child("--child", size, "--commits", str(args.commits), "--docs", str(args.docs))
        run["mb_per_commit_after_50"] = round(slope(run["samples"]), 3)
        runs.append(run)
        print(size, run["mb_per_commit_after_50"], run["samples"][0]["rss_mb"], run["samples"][-1]["rss_mb"], flush=True)
    queries = []
    for kb_path in args.query_kb:
        for rnd in range(2):  # each size twice, in turn: the page cache warms on the first
            for size in args.sizes.split(","):
                q = run_child("--child", size, "--child-kb", kb_path, "--dataset", args.dataset,
                              "--questions", str(args.questions)) | {"round": rnd}
                queries.append(q)
                print(q, flush=True)
    result = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(["benchmarks/lance_cache.py", *sys.argv[1:]]),
              "commits": args.commits, "docs": args.docs, "runs": runs, "queries": queries}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
