"""scale: moved from report.py."""
from __future__ import annotations

from .common import _opened, ran
from .graph_width import _blocks_line


def _ab_medians(ab: dict) -> dict[str, dict[str, float]]:
    """Per side, the median over the runs of each p50 (and of the query embedding) at the largest size."""
    runs = ab["results"][sorted(ab["results"], key=int)[-1]]
    out: dict[str, dict[str, float]] = {}
    for side, xs in runs.items():
        keys = [k for k in xs[0] if k != "open_s"]
        out[side] = {k: sorted(x[k] if isinstance(x[k], float) else x[k]["p50_ms"] for x in xs)[len(xs) // 2]
                     for k in keys}
    return out


def bm25_ab_section() -> list[str]:
    r, lines = _opened("bm25_1m.json", "BM25 at a million children (`benchmarks/scale.py --before`)",
                       "benchmarks/scale.py")
    if r is None:
        return lines
    med = _ab_medians(r)
    cols = ["bm25_store_search", "hybrid.bm25_channel", "bm25", "hybrid", "hybrid.dense_channel", "query_embedding_ms"]
    lines += [f"- {ran(r)} (before: {r.get('before_code', 'the commit before')} in a "
              "worktree). The store of `benchmarks/filtered.py --n 1000000` after the steady-ingest run's commits "
              "(1,001,098 children in three segments: 1,000,000 + 911 + 187, dead rows none), measured by each side's code in its own process, alternating; the median of the runs' "
              "p50s. `bm25_store_search`: `LanceStore.search_bm25` alone at the channel's depth (100), no filter.",
              "", "| code | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for side, x in med.items():
        lines.append(f"| {side} | " + " | ".join(f"{x[c]:.1f}" for c in cols) + " |")
    ratio = med["after"]["bm25_store_search"] / med["before"]["bm25_store_search"]
    lines += ["", f"- The store's search after / before: {ratio:.2f}x. What changed: a segment's search is compiled C "
              "(`src/ragsift/store/_bm25.c`, built by `pip install`; NumPy when there is no compiler, to the same rows "
              "and float32 scores): MaxScore's steps as before, each term's postings read in one pass (NumPy made five "
              "to seven: gather the rows' lengths, weigh, gather the scores, find the new rows, scatter), the rows' "
              "scores and lengths prefetched 16 postings ahead, the new rows kept without a branch, the cut's and the "
              "completion's work over the candidate rows without a Python call per term, the candidates never sorted "
              "(the NumPy path sorted them for its binary searches: tens of thousands of rows a query here), and the "
              "GIL released.",
              "- Each run's p50 of the store's search, before / after: " + ", ".join(
                  f"{b['bm25_store_search']['p50_ms']:.1f} / {a['bm25_store_search']['p50_ms']:.1f}"
                  for b, a in zip(*(r["results"][max(r["results"], key=int)][side] for side in ("before", "after"))))
              + " ms (the host's load moves both sides alike). What is left is memory-bound: each posting read is a "
              "random read of its row's score and length (8 MB at a million rows), and the hits and the merge of "
              "segments run in Python.",
              "- Before this (2026-12-02): the NumPy path, itself 1.6x faster than the round's start (a per-thread "
              "accumulator zeroed where written, the cut's k-th best looked for only above the unread terms' bound, "
              "hits built only for the merged top k, later segments pruned by the earlier ones' k-th best). "
              + _blocks_line(), ""]
    return lines
