"""``benchmarks/multilingual.py``'s results (``multilingual.json``) on docs/benchmarks.md: its part of
*Languages*."""
from __future__ import annotations

from .common import load, source


def languages_part() -> list[str]:
    """The multilingual embedders' tables of *Languages* (multilingual.json)."""
    lines: list[str] = []
    m = load("multilingual.json")
    if m is None:
        lines += ["_`benchmarks/multilingual.py` not run yet._", ""]
    else:
        models = ["minilm", "e5-small", "use-multilingual"]
        lines += [f"- Date: {m['date']}; command: `{m['command']}`; {source('multilingual.json')} (quality from the `ragsift eval` files it "
                  "names; speed measured in that run).", "",
                  "nDCG@10, every judged query (dense alone / hybrid RRF k=60 / hybrid weighted 0.5-0.5 min-max):", "",
                  "| set | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
        for s, by in m["quality"].items():
            cells = []
            for mo in models:
                x = by.get(mo)
                cells.append("—" if x is None else
                             f"{x['dense']['ndcg@10']:.3f} / {x['hybrid']['ndcg@10']:.3f} / "
                             f"{x['hybrid-weighted']['ndcg@10']:.3f}")
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines += ["", "Embedding speed on the same chunks (chunks per second, 2 cores; "
                  + ", ".join(f"{k}: {v} chunks" for k, v in m["chunks"].items()) + "):", "",
                  "| model | " + " | ".join(m["chunks"]) + " |", "|---|" + "---|" * len(m["chunks"])]
        for mo, v in m["chunks_per_second"].items():
            lines.append(f"| {mo} | " + " | ".join(f"{v[k]:.1f}" for k in m["chunks"]) + " |")
        lines.append("")
    return lines
