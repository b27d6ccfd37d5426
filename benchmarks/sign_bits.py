"""How deep the true ten best fall under cheaper scores of a filter's rows: the int8 copy's
(``AnnIndex``'s ``vectors.i8``: what the exact pass ranks by before it scores again), the 4-bit
copy's (``vectors.u4``: the first pass over large filters since 2026-12-03, scored by the compiled
scan as the search scores it), one sign bit per dimension scored against the float query, and plain
Hamming distance between sign bits. A first pass (192 bytes a row at 384 dimensions for 4 bits, 48
for sign bits, against 384 for int8) has to keep at least this deep a share of the rows for the
int8 pass to find the ten best.

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
from harness import write_result

SHARES = (0.1, 0.5)
QUERIES = 30


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", required=True)
    p.add_argument("--dataset", default="../shared/datasets/scifact")
    p.add_argument("--out", required=True)
    p.add_argument("--text-kb", help="also: a knowledge base of real text (every child, all the dataset's "
                                      "queries) under the 4-bit copy, written by memindex into a scratch folder")
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from exact_pass import largest_ann

    from ragsift.store.memindex.quantised import compiled_scan

    ann, vecs = largest_ann(Path(args.kb), Path(args.dataset), QUERIES)
    if ann.int4 is None or compiled_scan is None:
        raise SystemExit("no 4-bit copy (ragsift.store._scan not built?)")
    full = np.asarray(ann.mapped)
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
        depth: dict[str, list[int]] = {"int8": [], "four_bit": [], "signs_against_the_query": [], "hamming": []}
        for u in vecs:
            best = np.argsort(-(part @ u), kind="stable")[:10]
            hamming = -ones[np.bitwise_xor(bits, np.packbits(u > 0))].sum(axis=1)
            four = np.empty(len(rows), np.int32)
            compiled_scan.scores4(ann.int4.matrix, rows.astype(np.int64), ann.int4.quantised(u), four)
            for name, score in (("int8", copy @ (u / scales)), ("four_bit", four),
                                ("signs_against_the_query", signs @ u), ("hamming", hamming)):
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
    if args.text_kb:
        out["text"] = text_depth(Path(args.text_kb), Path(args.dataset))
        print(json.dumps(out["text"]), flush=True)
    write_result(args.out, out)
    return 0


def text_depth(kb_path: Path, dataset: Path) -> dict:
    """The 4-bit copy's depth on real-text vectors: every child of the knowledge base as one filter's
    rows, the copy written by ``memindex.quantised._write_int4`` from them, each of the dataset's queries."""
    import tempfile

    from scale import queries

    from ragsift.kb import KnowledgeBase
    from ragsift.store.memindex import quantised

    kb = KnowledgeBase.open(kb_path, create=False)
    tbl = kb.store.table("children").to_arrow().select(["vector"])
    full = np.asarray(tbl.column("vector").combine_chunks().flatten(), np.float32).reshape(tbl.num_rows, -1)
    full = full / np.linalg.norm(full, axis=1, keepdims=True)
    asked = queries(dataset, 10**6)
    vecs = np.asarray(kb.embedder().embed_queries(asked), np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        full.tofile(folder / "vectors.f32")
        copy = quantised.Int4Copy.open(folder, folder / "vectors.f32", full.shape[1])
        assert copy is not None and quantised.compiled_scan is not None
        rows = np.arange(len(full), dtype=np.int64)
        depth = []
        for v in vecs:
            u = v / np.linalg.norm(v)
            best = np.argsort(-(full @ u), kind="stable")[:10]
            four = np.empty(len(rows), np.int32)
            quantised.compiled_scan.scores4(copy.matrix, rows, copy.quantised(u), four)
            order = np.argsort(-four, kind="stable")
            position = np.empty(len(order), np.int64)
            position[order] = np.arange(len(order))
            depth.append(int(position[best].max()) + 1)
        del copy
    return {"kb": str(kb_path), "rows": len(full), "queries": len(vecs), "median": float(np.median(depth)),
            "p90": float(np.percentile(depth, 90)), "p99": float(np.percentile(depth, 99)), "worst": max(depth)}


if __name__ == "__main__":
    sys.exit(main())
