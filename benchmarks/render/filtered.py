"""``benchmarks/filtered.py``'s results (``filtered.json``, ``filtered_1m.json``) on docs/benchmarks.md:
*Filtered search* (``render``)."""
from __future__ import annotations

from . import exact_pass, graph_width, sign_bits
from .common import load, opened, ran

FILTER_SHARES = ("0.001", "0.01", "0.1", "0.5")


def _filtered_table(r: dict) -> list[str]:
    sides = [s for s in ("before", "after") if s in r]
    lines = ["| filter keeps | children | " + " | ".join(f"{s}: hybrid first / p50 / p95 ms | {s}: dense p50 | "
                                                     f"{s}: BM25 p50 | {s}: recall@10" for s in sides) + " |",
             "|---|---|" + "---|---|---|---|" * len(sides)]
    for share in FILTER_SHARES:
        cells = []
        for side in sides:
            x = r[side][share]
            cells.append(f"{x['hybrid_first_ms']:.0f} / {x['hybrid_p50_ms']:.1f} / {x['hybrid_p95_ms']:.1f} | "
                         f"{x['dense_p50_ms']:.1f} | {x['bm25_p50_ms']:.1f} | {x['dense_recall_at_10']:.3f}")
        lines.append(f"| {float(share):.1%} | {r[sides[-1]][share]['selected']:,} | " + " | ".join(cells) + " |")
    a = r[sides[-1]]
    lines += ["", f"- Floors in the same run: the query embedding {a['query_embedding_ms']:.1f} ms, one exact scan of "
              f"every vector (NumPy) {a['exact_scan_ms']:.1f} ms"
              + (f"; dense recall@10 without a filter {a['unfiltered_recall_at_10']:.3f}"
                 if "unfiltered_recall_at_10" in a else "") + "."]
    return lines


def render() -> list[str]:
    r, lines = opened("filtered.json", "Filtered search (`benchmarks/filtered.py`)", "benchmarks/filtered.py")
    if r is None:
        return lines
    lines += [f"- {ran(r)} (before: the commit before the filter changes, "
              "`git worktree add /tmp/filter-before <commit>`).",
              f"- {r['n']:,} synthetic children (`benchmarks/scale.py`'s generator), each with an int field `bucket` "
              "drawn uniformly from 0..999; the filter `{\"bucket\": {\"lt\": t}}` keeps t/1000 of them. At this "
              "size dense search runs on the saved HNSW graph. 100 SciFact queries embedded by minilm through "
              "`KnowledgeBase.query` (trace off), the first query with each filter timed on its own (the filter "
              "evaluated by the table), then p50 / p95 over all 100. Recall@10: the dense channel's ten against "
              "exact filtered search computed in NumPy from every stored vector.", "", *_filtered_table(r),
              "- What changed: a filter is evaluated by the table once per generation and its rows kept (64 MB of "
              "recent filters; `LanceStore._select`), found by the table's row ids (an integer search) instead of "
              "mapping every selected child id; dense search takes the cheaper of an exact pass over the filter's "
              "rows (read from a map without read-ahead) and the graph searched `expansion / share` wide "
              "(`AnnIndex.search`: exact while m^2 < 8 x 1024 x n, the ratio measured here).", ""]
    big = load("filtered_1m.json")
    if big:
        a = big["after"]
        met = [f for f in FILTER_SHARES if a[f]["hybrid_p50_ms"] <= 30 and a[f]["dense_recall_at_10"] >= 0.98]
        missed = [f for f in FILTER_SHARES if f not in met]
        lines += [f"### At a million children ({big['date']}; `{big['command']}`)", "",
                  f"The same benchmark on a store of {a['children']:,} children (built and saved by the command's first "
                  f"phase in {big.get('build_s', float('nan')) / 60:.0f} minutes, HNSW graph included), on the AMD "
                  "host of this round"
                  + (f"; {big['store_note']}" if big.get("store_note") else "") + "."
                  + (f" Before: {big['before_code']}; after: this code." if big.get("before_code") else ""),
                  "", *_filtered_table(big)]
        for run in big.get("earlier_runs", []):
            lines.append(f"- {run['label']}: hybrid p50 "
                         + ", ".join(f"{float(f):.1%} {v['hybrid_p50_ms']:.1f} ms" for f, v in run["shares"].items())
                         + "; dense recall@10 " + " / ".join(f"{v['dense_recall_at_10']:.3f}" for v in run["shares"].values())
                         + (f" ({run['note']})" if run.get("note") else "") + ".")
        lines += [("- Met at " + ", ".join(f"{float(f):.1%}" for f in met) if met else "- Met at no share")
                  + (". Missed at " + ", ".join(f"{float(f):.1%}" for f in missed) + ", causes measured beside:"
                     if missed else ": every filter under 30 ms with recall@10 at least 0.98. How, measured beside:"),
                  f"  - the query path around the indexes costs about "
                  f"{a['0.001']['dense_p50_ms'] - a['query_embedding_ms']:.0f} ms here (the 0.1% dense query is "
                  f"{a['0.001']['dense_p50_ms']:.1f} ms with the {a['query_embedding_ms']:.1f} ms embedding and an exact "
                  f"pass over ~1,000 rows), and the filtered BM25 channel {min(a[f]['bm25_p50_ms'] for f in FILTER_SHARES):.0f}-"
                  f"{max(a[f]['bm25_p50_ms'] for f in FILTER_SHARES):.0f} ms beside it;",
                  *exact_pass.filtered_lines(),
                  *sign_bits.filtered_lines(),
                  *[f"  - {x}" for x in big.get("missed_notes", [])],
                  *graph_width.filtered_lines(), ""]
    return lines
