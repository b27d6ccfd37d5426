"""``benchmarks/ingest_speed.py``'s results (``ingest.json``) on docs/benchmarks.md: its part of *Speed and
memory*."""
from __future__ import annotations

from .common import load


def speed_part() -> list[str]:
    """The ingest overhead table of *Speed and memory* (ingest.json)."""
    lines: list[str] = []
    ing = load("ingest.json")
    if ing:
        lines += [f"**Ingest overhead** ({ing['date']}; `{ing['dataset']}`, first {ing['docs']} documents, "
                  f"{ing['children']} children, embedder `{ing['embedder']}`; command "
                  f"`.venv/bin/python benchmarks/ingest_speed.py --docs {ing['docs']} --embedder {ing['embedder']} "
                  "--out benchmarks/results/ingest.json`):", "",
                  "| raw embedding (same texts, same batches) | full ingest | overhead | max RSS |",
                  "|---|---|---|---|",
                  f"| {ing['raw_embed_s']:.1f} s ({ing['children_per_s_raw']:.1f} children/s) | "
                  f"{ing['ingest_s']:.1f} s ({ing['children_per_s_ingest']:.1f} children/s) | "
                  f"{100 * ing['overhead']:+.1f}% | {ing['max_rss_mb']:.0f} MB |", "",
                  "Raw embedding is the mean of a run before and a run after the ingest. Almost all "
                  "of the memory is ONNX Runtime's arena for batches of up to 256 tokens.", ""]
    return lines
