"""An exact dense pass over a filter's rows, two ways side by side: the rows gathered from the
memory-mapped vectors whole and then multiplied (the code before), or gathered and multiplied a
block at a time while each block is in the cache (``AnnIndex._scores``).

    .venv/bin/python benchmarks/exact_pass.py --kb /tmp/ragsift-filtered/filtered-1000000 \\
        --dataset ../shared/datasets/scifact --out benchmarks/results/exact_pass.json

The store's largest segment's HNSW index (its saved float32 vectors); rows drawn at random (sorted,
as a filter's are) for 1%, 10% and 50% of them; the first 30 SciFact queries embedded by the
store's embedder; the two ways alternated query by query, each query's ten best compared.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

SHARES = (0.01, 0.1, 0.5)
QUERIES = 30


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scale import queries

    from ragsift.kb import KnowledgeBase
    from ragsift.store.memindex import AnnIndex

    kb = KnowledgeBase.open(args.kb, create=False)
    vecs = [np.asarray(v, np.float32) for v in kb.embedder().embed_queries(queries(Path(args.dataset), QUERIES))]
    store = kb.store
    seg = max(store.segments(), key=lambda s: s.rows.n)
    ann = store._dense(seg, "vector", int(store.manifest["dim"]), store._tables)
    if not isinstance(ann, AnnIndex):
        raise SystemExit("the largest segment is searched exactly in memory: use a store of 200,000 children or more")
    rng = np.random.default_rng(7)
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/exact_pass.py " + " ".join(sys.argv[1:]),
                 "queries": len(vecs), "block": AnnIndex.SCORE_BLOCK, "segment_rows": ann.n, "results": []}
    for share in SHARES:
        rows = np.sort(rng.choice(ann.n, int(ann.n * share), replace=False))
        times: dict[str, list[float]] = {"whole": [], "blocks": []}
        for i, v in enumerate(vecs):
            u = v / np.linalg.norm(v)
            best = {}
            for way in (("whole", "blocks") if i % 2 == 0 else ("blocks", "whole")):
                t = time.perf_counter()
                scores = ann.vectors(rows) @ u if way == "whole" else ann._scores(rows, u)
                times[way].append((time.perf_counter() - t) * 1000)
                best[way] = np.argsort(-scores, kind="stable")[:10].tolist()
            if best["whole"] != best["blocks"]:
                raise SystemExit(f"the two ways disagree on query {i}")
        out["results"].append({"share": share, "rows": len(rows), "whole_ms": float(np.median(times["whole"])),
                               "blocks_ms": float(np.median(times["blocks"]))})
        print(json.dumps(out["results"][-1]), flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
