"""``benchmarks/throughput.py``'s results (``throughput.json``) on docs/benchmarks.md: its part of *Speed
and memory*."""
from __future__ import annotations

from .common import load


def speed_part() -> list[str]:
    """The ingest throughput table of *Speed and memory* (throughput.json)."""
    lines: list[str] = []
    tp = load("throughput.json")
    if tp:
        lines += [f"**Ingest throughput per packaged embedder** ({tp['date']}; SciFact abstracts, "
                  f"{tp['cores']} cores; each row a process of its own; command `.venv/bin/python benchmarks/throughput.py "
                  "--out benchmarks/results/throughput.json`). Raw is the model alone on exactly the texts ragsift "
                  "indexes (mean of a run before and one after the ingest); ingest is a full `KnowledgeBase.ingest`.", "",
                  "| embedder | settings | children | raw children/s | ingest children/s | overhead | max RSS |",
                  "|---|---|---|---|---|---|---|"]
        for r in tp["rows"]:
            env = ", ".join(f"{k}={v}" for k, v in r["env"].items())
            if "error" in r:
                lines.append(f"| {r['embedder']} | {env} | — | — | — | {r['error'][:80]} | — |")
                continue
            lines.append(f"| {r['embedder']} | {env} | {r['children']} | {r['children_per_s_raw']:.1f} | "
                         f"{r['children_per_s_ingest']:.1f} | {100 * r['overhead']:+.1f}% | {r['max_rss_mb']:.0f} MB |")
        ls = tp["length_sorting"]["children_per_s"]
        if any(r.get("env", {}).get("RAGSIFT_E5_ENGINE") == "onnx" for r in tp["rows"]) and tp["date"] == "2026-12-04":
            lines += ["", "e5-small's ONNX rows of this run embedded in batches of up to 8,192 padded tokens; the package "
                      "now batches 1,024 (`models/e5_onnx.TOKEN_BUDGET`), measured faster in the run of "
                      "`benchmarks/e5_engine.py` (its section). This run's host: AMD EPYC with AVX-512 VNNI, where minilm "
                      "embedded passages 3.5x slower than in the run before on the Intel host (39.3 children/s raw); "
                      "compare rows within a run."]
        lines += ["", f"minilm's raw embedding of the same {tp['length_sorting']['children']} children in batches of "
                  f"64: length-sorted {ls['sorted']:.1f} and {ls['sorted again']:.1f} children/s, in file order "
                  f"{ls['file order']:.1f}.", ""]
    return lines
