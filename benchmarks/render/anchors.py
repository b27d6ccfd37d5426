"""``benchmarks/anchors.py``'s results (``anchors-scifact.json``, ``anchors-scale.json``) on
docs/benchmarks.md: *Side by side: ragsift, LangChain and LlamaIndex* (``render``)."""
from __future__ import annotations

from .common import fmt, load, source


def render() -> list[str]:
    q = load("anchors-scifact.json")
    s = load("anchors-scale.json")
    lines = ["## Side by side: ragsift, LangChain and LlamaIndex", ""]
    if q is None:
        lines += ["_Not run yet (`benchmarks/run_all.sh`)._", ""]
        return lines
    lines += [f"- Date: {q['date'][:10]}; dataset `{q['dataset']}` ({q['n_docs']} documents, "
              f"{q['n_queries']} queries); the same embedding model (`{q['embedder']}`) for every system; "
              "k=10 documents per query; latency includes the query embedding.",
              "- Command: `.venv-anchors/bin/python benchmarks/anchors.py --dataset ../shared/datasets/scifact "
              f"--out benchmarks/results/anchors-scifact.json --systems {','.join(q['systems'])}` (anchors in "
              "their own virtual environment, `benchmarks/requirements-anchors.txt`).",
              "- LangChain's ParentDocumentRetriever is dense only (FAISS over 400-character children); the "
              "other three fuse BM25 and vectors.", "",
              "| system | nDCG@10 | Recall@10 | MRR@10 | p50 ms | p95 ms | p50 vs ragsift-hybrid |",
              "|---|---|---|---|---|---|---|"]
    base = q["systems"].get("ragsift-hybrid", {}).get("p50_ms")
    for name, r in q["systems"].items():
        ratio = f"{r['p50_ms'] / base:.2f}x" if base else "—"
        m = r["metrics"]
        lines.append(f"| {name} | {fmt(m['ndcg@10'])} | {fmt(m['recall@10'])} | {fmt(m['mrr@10'])} | "
                     f"{r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {ratio} |")
    lines.append("")
    if "langchain-parent" not in q["systems"]:
        lines += ["LangChain's ParentDocumentRetriever (`--systems langchain-parent`) was not part of this "
                  "run: it embeds about 36,000 chunks of 400 characters, some 25 minutes on these two "
                  "cores; the harness runs it when asked.", ""]
    if s is not None:
        n = s["n_docs"]
        lines += [f"At {n:,} synthetic documents (one child each; clustered random vectors, real query "
                  f"embedding; `benchmarks/anchors.py --scale {n}`, {s['date'][:10]}; {source('anchors-scale.json')}):", "",
                  "| system | p50 ms | p95 ms | p50 vs ragsift-hybrid |", "|---|---|---|---|"]
        sb = s["systems"].get("ragsift-hybrid", {}).get("p50_ms")
        for name, r in s["systems"].items():
            ratio = f"{r['p50_ms'] / sb:.2f}x" if sb else "—"
            lines.append(f"| {name} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {ratio} |")
        lines.append("")
    # the peers at a million: the run was killed for memory (a file anchors-scale-1m.json was once read here)
    lines += ["At a million synthetic documents the peers could not be run on this 24 GB machine: "
              "`benchmarks/anchors.py --scale 1000000 --max-queries 30 --systems langchain-ensemble` "
              "(2026-12-01) was killed by the kernel's out-of-memory killer while building, at 24.2 GB of "
              "anonymous memory (rank_bm25 keeps a Python dict of term counts per document; FAISS a "
              "copy of every vector). LlamaIndex's in-memory vector store keeps every vector as a Python "
              "list of floats and was not tried. ragsift serves the same million in the scale table below.", ""]
    return lines
