"""``benchmarks/ann_recall.py``'s results (``ann_recall.json``) on docs/benchmarks.md: its part of *Speed
and memory*."""
from __future__ import annotations

from .common import load


def speed_part() -> list[str]:
    """The HNSW recall table of *Speed and memory* (ann_recall.json)."""
    lines: list[str] = []
    ann = load("ann_recall.json")
    if ann:
        ch = ann.get("chosen") or {}
        lines += [f"**HNSW recall on real text** ({ann['date']}; {ann['n']:,} passages recombined from 2-5 random "
                  "sentences of the shared SciFact, HotpotQA, CMRC 2018, XQuAD-zh and L-Eval corpora, embedded by "
                  f"{ann['embedder']}; {ann['queries']} questions of five sets; the store's own index; settings "
                  "chosen on the even-numbered questions, reported on the odd ones; command "
                  "`.venv/bin/python benchmarks/ann_recall.py --datasets ../shared/datasets --n 1000000 --out "
                  "benchmarks/results/ann_recall.json`). Recall@10 is against exact search over the same vectors; "
                  "candidates = 10 x re-rank depth, re-ranked with the full vectors.", "",
                  "| search breadth (ef) | re-rank depth | recall@10 (choose) | recall@10 (report) | p50 ms | p95 ms |",
                  "|---|---|---|---|---|---|"]
        for r in ann["grid"]:
            mark = " **(chosen)**" if ch and (r["expansion"], r["refine"]) == (ch["expansion"], ch["refine"]) else ""
            lines.append(f"| {r['expansion']}{mark} | {r['refine']} | {r['recall_choose']:.4f} | {r['recall_report']:.4f} | "
                         f"{r['p50_ms_report']:.2f} | {r['p95_ms_report']:.2f} |")
        build = f"; the graph took {ann['build_s'] / 60:.1f} minutes to build on two cores" if ann.get("build_s") else ""
        lines += ["", f"The store's default is the fastest setting whose recall@10 on the choosing half clears "
                  f"{ann['target']} by two standard errors{build}. A first run chose the fastest setting merely reaching "
                  f"{ann['target']} there (ef 512, re-rank x4: 0.983), and it fell to 0.976 on the held-out half; the "
                  "margin was added after that, so the held-out figure of the new choice is not fully blind.", ""]
    return lines
