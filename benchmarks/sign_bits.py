"""How deep the true ten best fall under cheaper scores of a filter's rows: the int8 copy's
(``AnnIndex``'s ``vectors.i8``: what the exact pass ranks by before it scores again), one sign bit
per dimension scored against the float query, and plain Hamming distance between sign bits. A
first pass of sign bits (48 bytes a row at 384 dimensions, against 384 for int8) would have to keep
at least this deep a share of the rows for the int8 pass to find the ten best.

    .venv/bin/python benchmarks/sign_bits.py --kb /tmp/ragsift-filtered/filtered-1000000 \\
        --dataset ../shared/datasets/scifact --out benchmarks/results/sign_bits.json

The store's largest segment's saved float32 vectors; the first 30 SciFact queries embedded by the
store's embedder; rows drawn at random for 10% and 50% (as ``benchmarks/exact_pass.py`` draws them).
All scores computed here in NumPy (the int8 copy rebuilt the way ``memindex`` writes it). Per query:
the deepest position, under each score, of the exact float32 ten best; reported as median, 90th
percentile and worst over the queries.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

SHARES = (0.1, 0.5)
QUERIES = 30


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from exact_pass import largest_ann

    ann, vecs = largest_ann(Path(args.kb), Path(args.dataset), QUERIES)
    full = np.asarray(ann._map)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    scales = 127.0 / np.abs(full).max(axis=0)
    mean = full.mean(axis=0)
    ones = np.array([bin(i).count("1") for i in range(256)], np.int32)
    rng = np.random.default_rng(7)
    out: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/sign_bits.py " + " ".join(sys.argv[1:]),
                 "queries": len(vecs), "segment_rows": ann.n, "results": []}
    for share in SHARES:
        rows = np.sort(rng.choice(ann.n, int(ann.n * share), replace=False))
        part = full[rows]
        copy = np.clip(np.rint(part * scales), -127, 127)
        above = part > mean  # each dimension's sign about the rows' mean
        signs = np.where(above, 1.0, -1.0).astype(np.float32)
        bits = np.packbits(above, axis=1)
        depth: dict[str, list[int]] = {"int8": [], "signs_against_the_query": [], "hamming": []}
        for u in vecs:
            best = np.argsort(-(part @ u), kind="stable")[:10]
            hamming = -ones[np.bitwise_xor(bits, np.packbits(u > 0))].sum(axis=1)
            for name, score in (("int8", copy @ (u / scales)), ("signs_against_the_query", signs @ u),
                                ("hamming", hamming)):
                order = np.argsort(-score, kind="stable")
                position = np.empty(len(order), np.int64)
                position[order] = np.arange(len(order))
                depth[name].append(int(position[best].max()) + 1)
        result = {"share": share, "rows": len(rows)}
        for name, d in depth.items():
            result[name] = {"median": float(np.median(d)), "p90": float(np.percentile(d, 90)), "worst": max(d),
                            "worst_share_of_rows": max(d) / len(rows)}
        out["results"].append(result)
        print(json.dumps(result), flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
