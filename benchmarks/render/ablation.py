"""ablation: moved from report.py."""
from __future__ import annotations

from .common import RESULTS, load


def ablation_section(name: str, title: str, note: str) -> tuple[list[str], dict | None]:
    data = load(f"{name}.json")
    md = RESULTS / f"{name}.md"
    if data is None or not md.exists():
        return [f"## {title}", "", f"_Not run yet: `benchmarks/run_all.sh` writes `benchmarks/results/{name}.json`._", ""], None
    table = md.read_text(encoding="utf-8").split("\n\n", 2)[-1].strip()
    lines = [f"## {title}", "",
             f"- Date: {data['date']}; dataset `{data['dataset']}` ({data['queries']} queries); "
             f"embedder `{data['embedder']}`", note,
             f"- Command: `{data['command']}`",
             "- Δ and p: nDCG@10 difference against the first row and its two-sided paired "
             "randomization test p-value (10,000 resamples).", "", table, ""]
    if (RESULTS / f"{name}.png").exists():
        lines += [f"![{name}](../benchmarks/results/{name}.png)", ""]
    return lines, data
