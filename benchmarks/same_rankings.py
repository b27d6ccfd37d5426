"""Behaviour unchanged by a refactoring: the top-100 document lists of each configuration, from
one code and from another, on the same knowledge base (issue 27).

    # the lists of the code before the change (another checkout's src/ first on the path)
    PYTHONPATH=/tmp/before/src .venv/bin/python benchmarks/same_rankings.py run \\
        --dataset ../shared/datasets/scifact --out /tmp/before-scifact.json
    .venv/bin/python benchmarks/same_rankings.py run --dataset ../shared/datasets/scifact --out /tmp/after-scifact.json
    .venv/bin/python benchmarks/same_rankings.py compare /tmp/before-scifact.json /tmp/after-scifact.json

``run`` builds (or reuses) the dataset's knowledge base in --work-dir with --embedder and writes,
per configuration and judged query, the ids and scores ``rank_documents`` returns. Built-in
configurations: the four of ``ragsift eval`` (bm25, dense, hybrid, hybrid-weighted); ``--multihop``
adds HotpotQA's multi-hop without a model (``multihop_mode = "keywords"``, the package's hop
settings). ``compare`` counts identical lists and the largest score difference, and prints the
nDCG@10 of each side.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

CONFIGS = {"bm25": {"channels": ["bm25"]}, "dense": {"channels": ["dense"]},
           "hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf"},
           "hybrid-weighted": {"channels": ["dense", "bm25"], "fusion": "weighted"}}


def run(args: argparse.Namespace) -> None:
    import ragsift
    from ragsift.eval.runner import build_kb, judged_queries

    ds = load_dataset(Path(args.dataset))
    kb, _ = build_kb(ds, Path(args.work_dir), args.embedder, progress=False)
    qids = judged_queries(ds, args.max_queries)
    configs = dict(CONFIGS)
    if args.multihop:
        # the multi-hop mode by the spelling the code in use reads (``multihop`` before issue 27)
        from ragsift.config import FLAT
        name = "multihop_mode" if "multihop_mode" in FLAT else "multihop"
        configs = {"hybrid-weighted": CONFIGS["hybrid-weighted"], "multihop-keywords": {name: "keywords"}}
    out = {"code": str(Path(ragsift.__file__).parent), "dataset": ds.name, "embedder": args.embedder,
           "queries": len(qids), "runs": {}}
    for name, overrides in configs.items():
        t = time.perf_counter()
        out["runs"][name] = {q: [[d, s] for d, s in kb.rank_documents(ds.queries[q], k=100, **overrides)]
                             for q in qids}
        print(f"{name}: {len(qids)} queries in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    Path(args.out).write_text(json.dumps(out), encoding="utf-8")


def compare(args: argparse.Namespace) -> None:
    from ragsift.eval.metrics import ndcg_at_k

    a, b = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (args.a, args.b))
    qrels = load_dataset(Path(args.dataset)).qrels if args.dataset else None
    print(f"{a['code']} vs {b['code']}: {a['dataset']}, {a['queries']} queries, embedder {a['embedder']}")
    rows = []
    for name in a["runs"]:
        ra, rb = a["runs"][name], b["runs"].get(name, {})
        same = sum(1 for q in ra if [d for d, _ in ra[q]] == [d for d, _ in rb.get(q, [])])
        diff = max((abs(x[1] - y[1]) for q in ra for x, y in zip(ra[q], rb.get(q, []))), default=0.0)
        line = f"{name}: {same}/{len(ra)} top-100 lists identical; largest score difference {diff:.2e}"
        if qrels is not None:
            na = sum(ndcg_at_k([d for d, _ in ra[q]], qrels[q], 10) for q in ra) / len(ra)
            nb = sum(ndcg_at_k([d for d, _ in rb.get(q, [])], qrels[q], 10) for q in ra) / len(ra)
            line += f"; nDCG@10 {na:.4f} vs {nb:.4f}"
        print(line)
        rows.append({"config": name, "queries": len(ra), "identical": same, "max_score_difference": diff,
                     **({"ndcg@10": [round(na, 4), round(nb, 4)]} if qrels is not None else {})})
    if args.out:  # results/same_rankings.json holds one entry per dataset (and label)
        out = Path(args.out)
        data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
        data[args.label or a["dataset"]] = {"before": args.before_label or a["code"], "after": args.after_label or b["code"],
                                            "dataset": a["dataset"], "embedder": a["embedder"],
                                            "date": time.strftime("%Y-%m-%d"), "configs": rows}
        write_result(out, data)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dataset", required=True)
    r.add_argument("--embedder", default="minilm")
    r.add_argument("--work-dir", default="/tmp/ragsift-same")
    r.add_argument("--max-queries", type=int)
    r.add_argument("--multihop", action="store_true")
    r.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--dataset", help="the BEIR folder, for nDCG@10 of each side")
    c.add_argument("--out", help="add the comparison to this JSON file (benchmarks/results/same_rankings.json)")
    c.add_argument("--label", help="its key there (default: the dataset's name)")
    c.add_argument("--before-label")
    c.add_argument("--after-label")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else compare(args)


if __name__ == "__main__":
    main()
