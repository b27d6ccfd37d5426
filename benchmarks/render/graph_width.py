"""``benchmarks/graph_width.py``'s results (``graph_width.json``) on docs/benchmarks.md: its lines in the
filtered search section; its line in *BM25 at a million children*."""
from __future__ import annotations

from .common import load


def filtered_lines() -> list[str]:
    g = load("graph_width.json")
    if not g:
        return ["  - the graph's recall by width: _not run yet: `benchmarks/graph_width.py`_;"]
    def at(share: float) -> str:
        xs = [x for x in g["graph"] if x["share"] == share]
        return (" / ".join(f"{x['recall_at_10']:.3f}" for x in xs) + " recall@10, "
                + " / ".join(f"{x['p50_ms']:.0f}" for x in xs) + " ms")
    widths = " / ".join(f"{x['width']:,}" for x in g["graph"] if x["share"] == 1.0)
    return [f"  - on these synthetic vectors (256 clusters, heavy noise: a hard case for a graph) the graph's own "
            f"recall is low at the default width, filter or not (`{g['command']}`): at {widths} candidates, "
            f"without a filter {at(1.0)}; keeping 10% {at(0.1)}; keeping 50% {at(0.5)}. The real-text vectors of "
            "`benchmarks/ann_recall.py` reach 0.98 at the default width."]


def blocks_line() -> str:
    g = load("graph_width.json")
    if not g:
        return "Block-max: _not run yet: `benchmarks/graph_width.py`_."
    sizes = list(g["blocks"])
    return ("Block-max, measured on this index with each block's exact best weight as its bound (`" + g["command"]
            + "`): on these documents (words drawn independently, no locality) blocks of " + " / ".join(sizes)
            + " rows leave " + " / ".join(f"{g['blocks'][b]['mean_share_to_score']:.0%}" for b in sizes)
            + " of blocks to score, so it would not halve the work (hence the compiled search instead).")
