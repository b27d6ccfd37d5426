"""How ragsift's query time grows with the number of children (synthetic corpus).

Builds a knowledge base of N synthetic documents (one parent, one child each; 40-80 words
drawn from a real corpus's vocabulary; clustered random unit vectors, the same generator as
``benchmarks/anchors.py --scale``) through the real store and write path, then times real
queries (query embedding through the real model included) per channel and end to end.

    .venv/bin/python benchmarks/scale.py --sizes 10000,100000 --out /tmp/scale.json

With ``--before <checkout>``, nothing is built: the stores in --work-dir are measured by this code
and by the other checkout's, alternating, ``--repeat`` times each.

Each size is built in one process and measured in another, so that the peak memory (max RSS,
mapped pages included) is the serving process's own. The build ends as an ingest of a large
store does: it saves the generation's search indexes (from 200,000 children: the HNSW graph,
the BM25 postings, the parents table), and the serving process maps them. ``open_s`` is the
serving process's first query: opening the knowledge base, loading the model, reading or
building its in-memory indexes.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from harness import write_result

SEED = 13
CLUSTERS = 256
NOISE = 0.75
QUERIES = 100


def vocabulary(corpus: Path) -> tuple[list[str], np.ndarray]:
    counts: Counter[str] = Counter()
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            counts.update(re.findall(r"\w[\w\-]*", f"{row.get('title', '')} {row['text']}"))
    words = list(counts)
    freq = np.array([counts[w] for w in words], dtype=np.float64)
    return words, freq / freq.sum()


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(kb_path: Path, n: int, corpus: Path, metadata: Callable[[int], dict] | None = None) -> dict:
    """N synthetic one-child documents (``metadata(i)``: the i-th document's metadata)."""
    from ragsift.ingest.splitter import SplitSettings, split_document
    from ragsift.kb import KnowledgeBase
    from ragsift.store.base import IndexedChild
    from ragsift.types import Document

    words, probs = vocabulary(corpus)
    rng = np.random.default_rng(SEED)
    crng = np.random.default_rng(SEED + 1)
    centres = _unit(crng.standard_normal((CLUSTERS, 384)))
    kb = KnowledgeBase.open(kb_path, embedder="minilm")
    t0 = time.perf_counter()
    batch = 10_000
    txn = kb.store.begin()
    cdf = np.cumsum(probs)
    for start in range(0, n, batch):
        m = min(batch, n - start)
        clusters = crng.integers(0, CLUSTERS, size=m)
        vecs = _unit(centres[clusters] + crng.standard_normal((m, 384)) * NOISE / np.sqrt(384)).astype(np.float32)
        lengths = rng.integers(40, 81, size=m)
        # unigram draws for the whole batch at once (inverse CDF), not one weighted choice per word
        drawn = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), len(words) - 1)
        ends = np.cumsum(lengths)
        for i in range(m):
            text = " ".join(words[j] for j in drawn[ends[i] - lengths[i]:ends[i]])
            doc = Document(f"syn{start + i}", "synthetic.jsonl", "", text, str(start + i), "jsonl",
                           metadata(start + i) if metadata else {})
            parents, children = split_document(doc, SplitSettings(child_tokens=200))
            indexed = [IndexedChild(c, kb.analyzer.analyze(c.text), vecs[i]) for c in children]
            txn.put_document(doc, parents, indexed)
    gen = txn.commit()
    return {"build_s": time.perf_counter() - t0, "generation": gen, "children": kb.stats()["children"]}


def measure(kb_path: Path, queries: list[str]) -> dict:
    from ragsift.kb import KnowledgeBase

    t0 = time.perf_counter()
    kb = KnowledgeBase.open(kb_path, create=False)
    kb.query(queries[0], channels=["dense", "bm25"])  # loads the model and builds the indexes
    out: dict = {"open_s": time.perf_counter() - t0}
    for name, channels in (("bm25", ["bm25"]), ("dense", ["dense"]), ("hybrid", ["dense", "bm25"])):
        kb.query(queries[0], channels=channels)  # warm-up
        total, per_channel = [], []
        for q in queries:
            t = time.perf_counter()
            res = kb.query(q, channels=channels)
            total.append((time.perf_counter() - t) * 1000)
            per_channel.append({c.name: c.elapsed_ms for c in res.trace.channels})
        out[name] = {"p50_ms": float(np.percentile(total, 50)), "p95_ms": float(np.percentile(total, 95))}
        if name == "hybrid":
            for ch in ("dense", "bm25"):
                vals = [p[ch] for p in per_channel]
                out[f"hybrid.{ch}_channel"] = {"p50_ms": float(np.percentile(vals, 50)),
                                               "p95_ms": float(np.percentile(vals, 95))}
    # the store's BM25 search alone (the channel's depth, no filter): the index, without the query path
    depth = kb.settings.query.channel_depth
    terms = [kb.analyzer.analyze(q) for q in queries]
    kb.store.search_bm25(terms[0], depth, None)
    times = []
    for t_ in terms:
        t = time.perf_counter()
        kb.store.search_bm25(t_, depth, None)
        times.append((time.perf_counter() - t) * 1000)
    out["bm25_store_search"] = {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95)),
                                "depth": depth}
    t = time.perf_counter()
    for q in queries:
        kb.embedder().embed_queries([q])
    out["query_embedding_ms"] = (time.perf_counter() - t) * 1000 / len(queries)
    return out


def _commit(checkout: Path) -> str:
    """The commit a checkout is at (its short hash), or its path when it is not a git checkout."""
    import subprocess

    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or str(checkout)


def queries(dataset: Path, n: int) -> list[str]:
    """The first n questions of a BEIR dataset, in file order."""
    out = []
    with open(dataset / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line)["text"])
            if len(out) == n:
                break
    return out


def one_size(n: int, work: Path, dataset: Path, phase: str) -> dict:
    kb_path = work / f"scale-{n}"
    info: dict = {"children_requested": n}
    if phase == "build":
        if not (kb_path / "manifest.json").exists():
            info.update(build(kb_path, n, dataset / "corpus.jsonl"))
        from ragsift.kb import KnowledgeBase

        t = time.perf_counter()  # what an ingest does after its commit in a large store
        info["saved_search_indexes"] = KnowledgeBase.open(kb_path, create=False).store.save_search_indexes()
        info["save_search_indexes_s"] = time.perf_counter() - t
        info["build_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return info
    info["latency"] = measure(kb_path, queries(dataset, QUERIES))
    info["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return info


def run_phase(n: int, args, phase: str, src: str | None = None) -> dict:
    """One phase of one size in a process of its own (``src``: the ``src/`` of another checkout to run)."""
    env = dict(os.environ, PYTHONPATH=src) if src else None
    proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--phase", phase, "--work-dir", args.work_dir,
                           "--dataset", args.dataset, "--out", args.out], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"{phase} of {n} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--work-dir", default="/tmp/ragsift-scale")
    p.add_argument("--out", required=True)
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: run one size in this process
    p.add_argument("--phase", default="measure", help=argparse.SUPPRESS)
    p.add_argument("--before", help="measure only, on the stores already built: this code against another "
                                    "checkout's (its src/), alternating, --repeat times each")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    work, dataset = Path(args.work_dir), Path(args.dataset)
    if args.one:
        print(json.dumps(one_size(args.one, work, dataset, args.phase)))
        return 0
    if args.before:
        sides = {"before": str(Path(args.before) / "src"), "after": str(Path(__file__).resolve().parent.parent / "src")}
        ab: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/scale.py " + " ".join(sys.argv[1:]),
                    "queries": QUERIES, "results": {}, "before_code": _commit(Path(args.before))}
        for n in (int(s) for s in args.sizes.split(",")):
            runs: dict = {side: [] for side in sides}
            for _ in range(args.repeat):
                for side, src in sides.items():
                    runs[side].append(run_phase(n, args, "measure", src)["latency"])
            ab["results"][n] = runs
            write_result(args.out, ab)
        return 0
    results = {}
    for n in (int(s) for s in args.sizes.split(",")):
        results[n] = run_phase(n, args, "build")
        results[n].update(run_phase(n, args, "measure"))
        lat = results[n]["latency"]
        print(f"{n:>9} children: hybrid p50 {lat['hybrid']['p50_ms']:.1f} ms, p95 {lat['hybrid']['p95_ms']:.1f} ms; "
              f"bm25 p50 {lat['bm25']['p50_ms']:.1f}; dense p50 {lat['dense']['p50_ms']:.1f}; "
              f"max RSS {results[n]['max_rss_mb']:.0f} MB", flush=True)
        # written after every size, so a long last size never loses the earlier ones
        write_result(args.out, {"queries": QUERIES, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
