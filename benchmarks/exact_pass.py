"""An exact dense pass over a filter's rows, several ways side by side: ``whole``, the rows gathered
from the memory-mapped float32 vectors whole and then multiplied (the code before 2026-12-03);
``blocks``, gathered and multiplied a block at a time while each block is in the cache
(``AnnIndex.exact_scores``); ``int8``, the rows' int8 copy scored by the compiled scan and its best
``AnnIndex.RESCORE`` rows scored again from the float32 vectors (what ``AnnIndex.search`` does
over more than ``INT8_ROWS`` rows; the scan split among the cores from two parts of
``memindex.quantised.SPLIT_ROWS`` on); ``int8-one``, the same in one thread; ``int4``, the rows' 4-bit copy
scored first (``Int4Copy``: the filter's rows, or every row in file order when the filter keeps more
than a third), its best ``INT4_KEEP`` (or one in ``INT4_SHARE``) ranked by the int8 copy, those
best ``RESCORE`` scored from the float32 vectors (what ``AnnIndex.search`` does over more than
``INT4_ROWS`` rows since 2026-12-03); ``int4-one``, the same in one thread.

    .venv/bin/python benchmarks/exact_pass.py --kb /tmp/ragsift-filtered/filtered-1000000 \\
        --dataset ../shared/datasets/scifact --out benchmarks/results/exact_pass.json

The store's largest segment's HNSW index (its saved vectors); rows drawn at random (sorted, as a
filter's are) for 0.1%, 1%, 10% and 50% of them; the first 30 SciFact queries embedded by the store's
embedder; the ways taken in turn, their order rotated query by query. Each way's ten best are
compared with the first way's (``whole`` or ``blocks``, exact): ``recall_at_10`` per way.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from harness import write_result

SHARES = (0.001, 0.01, 0.1, 0.5)
QUERIES = 30


def largest_ann(kb_path: Path, dataset: Path, n: int) -> tuple[Any, np.ndarray]:
    """The knowledge base's largest segment's HNSW index (``AnnIndex``), and the dataset's first n
    questions embedded by its embedder (float32, one row each)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scale import queries

    from ragsift.kb import KnowledgeBase
    from ragsift.store.memindex import AnnIndex

    kb = KnowledgeBase.open(kb_path, create=False)
    store = kb.store
    seg = max(store.segments(), key=lambda s: s.rows.n)
    ann = store.dense_index(segment=seg)
    if not isinstance(ann, AnnIndex) or ann.mapped is None:
        raise SystemExit("the largest segment is searched exactly in memory: use a store of 200,000 children or more")
    return ann, np.asarray(kb.embedder().embed_queries(queries(dataset, n)), np.float32)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    p.add_argument("--ways", default="whole,blocks,int8-one,int8,int4-one,int4",
                   help="comma-separated, the exact reference first")
    args = p.parse_args()
    from ragsift.store.memindex import AnnIndex, quantised

    ann, vecs = largest_ann(Path(args.kb), Path(args.dataset), QUERIES)
    def ten_best(way: str, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        if way == "whole":
            scores = ann.vectors(rows) @ u
        elif way == "blocks":
            scores = ann.exact_scores(rows, u)
        elif way in ("int8", "int8-one", "int4", "int4-one"):
            if ann.int8 is None or (way.startswith("int4") and ann.int4 is None):
                raise SystemExit("no int8 or 4-bit copy (ragsift.store._scan not built?)")
            threads = quantised.SCAN_THREADS
            quantised.SCAN_THREADS = 1 if way.endswith("-one") else threads
            try:
                if way.startswith("int4"):
                    rows = ann.int4.best(rows, u, max(AnnIndex.INT4_KEEP, len(rows) // AnnIndex.INT4_SHARE))
                rows = ann.int8.best(rows, u, max(AnnIndex.RESCORE, 10))
            finally:
                quantised.SCAN_THREADS = threads
            scores = ann.exact_scores(rows, u)
        else:
            raise SystemExit(f"unknown way {way!r}")
        return rows[np.argsort(-scores, kind="stable")[:10]]

    ways = args.ways.split(",")
    rng = np.random.default_rng(7)
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/exact_pass.py " + " ".join(sys.argv[1:]),
                 "queries": len(vecs), "block": AnnIndex.SCORE_BLOCK, "rescore": AnnIndex.RESCORE,
                 "segment_rows": ann.n, "results": []}
    for share in SHARES:
        rows = np.sort(rng.choice(ann.n, int(ann.n * share), replace=False))
        times: dict[str, list[float]] = {w: [] for w in ways}
        found: dict[str, int] = {w: 0 for w in ways}
        for i, v in enumerate(vecs):
            u = v / np.linalg.norm(v)
            best = {}
            for way in ways[i % len(ways):] + ways[:i % len(ways)]:
                t = time.perf_counter()
                best[way] = ten_best(way, rows, u)
                times[way].append((time.perf_counter() - t) * 1000)
            for way in ways:
                found[way] += len(set(best[way].tolist()) & set(best[ways[0]].tolist()))
        result = {"share": share, "rows": len(rows)}
        for way in ways:
            result[f"{way}_ms"] = float(np.median(times[way]))
            result[f"{way}_recall_at_10"] = found[way] / (10 * len(vecs))
        out["results"].append(result)
        print(json.dumps(result), flush=True)
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
