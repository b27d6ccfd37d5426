"""``benchmarks/scale.py``'s results (``scale.json``, ``bm25_1m.json``, ``scale_segments.json``,
``segments_ab.json``) on docs/benchmarks.md: ``ab_medians`` for the targets; *BM25 at a million children*
(``bm25_at_a_million``); its part of *Speed and memory*; the million with segments in the commit section
(``segments_part``); segments before and after in the commit section (``segments_ab_part``)."""
from __future__ import annotations

from . import graph_width
from .common import host_of, load, opened, ran, source


def ab_medians(ab: dict) -> dict[str, dict[str, float]]:
    """Per side, the median over the runs of each p50 (and of the query embedding) at the largest size."""
    runs = ab["results"][sorted(ab["results"], key=int)[-1]]
    out: dict[str, dict[str, float]] = {}
    for side, xs in runs.items():
        keys = [k for k in xs[0] if k != "open_s"]
        out[side] = {k: sorted(x[k] if isinstance(x[k], float) else x[k]["p50_ms"] for x in xs)[len(xs) // 2]
                     for k in keys}
    return out


def bm25_at_a_million() -> list[str]:
    r, lines = opened("bm25_1m.json", "BM25 at a million children (`benchmarks/scale.py --before`)",
                      "benchmarks/scale.py")
    if r is None:
        return lines
    med = ab_medians(r)
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
              + graph_width.blocks_line(), ""]
    return lines


def speed_part() -> list[str]:
    """The query latency table of *Speed and memory* (scale.json)."""
    lines: list[str] = []
    sc = load("scale.json")
    if sc:
        lines += [f"**Query latency as the store grows** ({sc['date']}; synthetic children with clustered "
                  f"vectors, {sc.get('queries', 50)} real SciFact queries embedded by `minilm`; each size built in one "
                  "process and served from a fresh one; command "
                  f"`.venv/bin/python benchmarks/scale.py --sizes {','.join(sc['results'])} "
                  "--out benchmarks/results/scale.json`). BM25 runs on an in-memory inverted index; dense "
                  "search is exact in memory below 200,000 children and an int8 HNSW graph (usearch) re-ranked "
                  "with the full vectors above (`ragsift.store.memindex`). Every time includes the query "
                  "embedding where the channel needs one. From 200,000 children the build saves the generation's "
                  "indexes, as an ingest does (*saving*); *first query* is the serving process opening the "
                  "knowledge base, loading the model and reading (or, below 200,000, building) its indexes. "
                  "The figures need the saved indexes in the page cache: a run right after the cache was "
                  "emptied (an out-of-memory kill of another process) gave dense alone 33 ms at a million while "
                  "the graph was read from disk, and the same 1,611 MB.", "",
                  "| children | hybrid p50 | hybrid p95 | bm25 p50 | dense p50 | bm25 channel in hybrid p50 | "
                  "dense channel in hybrid p50 | query embedding | saving | first query | max RSS (serving) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for n, r in sc["results"].items():
            lat = r["latency"]
            lines.append(f"| {int(n):,} | {lat['hybrid']['p50_ms']:.1f} ms | {lat['hybrid']['p95_ms']:.1f} ms | "
                         f"{lat['bm25']['p50_ms']:.1f} ms | {lat['dense']['p50_ms']:.1f} ms | "
                         f"{lat['hybrid.bm25_channel']['p50_ms']:.1f} ms | {lat['hybrid.dense_channel']['p50_ms']:.1f} ms | "
                         f"{lat.get('query_embedding_ms', float('nan')):.1f} ms | "
                         f"{r.get('save_search_indexes_s', 0) / 60:.1f} min | {lat.get('open_s', float('nan')):.1f} s | "
                         f"{r['max_rss_mb']:.0f} MB |")
        lines.append("")
    return lines


def segments_part() -> list[str]:
    """The scale measure at a million with segments, in the commit section (scale_segments.json)."""
    lines: list[str] = []
    sc = load("scale_segments.json")
    if sc:
        x = sc["results"]["1000000"]["latency"]
        lines += [f"**The scale measure rerun at a million with segments** ({sc['date']}; {host_of(sc)}; {sc['store']}; "
                  f"command `{sc['command']}`; {source('scale_segments.json')}): hybrid p50 {x['hybrid']['p50_ms']:.1f} ms (p95 "
                  f"{x['hybrid']['p95_ms']:.1f}), its BM25 channel {x['hybrid.bm25_channel']['p50_ms']:.1f} ms, "
                  f"its dense channel {x['hybrid.dense_channel']['p50_ms']:.1f} ms, BM25 alone "
                  f"{x['bm25']['p50_ms']:.1f} ms, dense alone {x['dense']['p50_ms']:.1f} ms; the query embedding "
                  f"{x['query_embedding_ms']:.1f} ms; first query {x['open_s']:.1f} s; max RSS "
                  f"{sc['results']['1000000']['max_rss_mb']:.0f} MB. Not comparable to the scale table (another "
                  "host kind, more segments); the code before segments cannot serve this store without rebuilding "
                  "its indexes, so no before was run beside it here.", ""]
    return lines


def segments_ab_part() -> list[str]:
    """Before and after segments on one host, in the commit section (segments_ab.json)."""
    lines: list[str] = []
    ab = load("segments_ab.json")
    if ab:
        cells = "; ".join(f"{x['side']} {x['run']}: hybrid {x['hybrid_p50_ms']:.1f}, BM25 channel "
                          f"{x['bm25_channel_p50_ms']:.1f}, dense channel {x['dense_channel_p50_ms']:.1f}, embedding "
                          f"{x['query_embedding_ms']:.1f}" for x in ab["runs"])
        lines += [f"**Before and after, one host, one store** ({ab['date']}; {host_of(ab)}; {ab['store']}; "
                  f"{ab['command']}; {source('segments_ab.json')}), p50 ms: {cells}. Within the noise of this host: the query path did not get "
                  "slower with segments where a store has one.", ""]
    return lines
