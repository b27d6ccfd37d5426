"""The ablation tables of ``ragsift eval`` (run by benchmarks/run_all.sh): results/scifact.json and
hotpotqa-ircot-dev500.json with the tables and plots the command writes beside them."""
from __future__ import annotations

from .common import RESULTS, load, source


def section(name: str, title: str, note: str) -> tuple[list[str], dict | None]:
    data = load(f"{name}.json")
    md = RESULTS / f"{name}.md"
    if data is None or not md.exists():
        return [f"## {title}", "", f"_Not run yet: `benchmarks/run_all.sh` writes `benchmarks/results/{name}.json`._", ""], None
    table = md.read_text(encoding="utf-8").split("\n\n", 2)[-1].strip()
    lines = [f"## {title}", "",
             f"- Date: {data['date']}; dataset `{data['dataset']}` ({data['queries']} queries); "
             f"embedder `{data['embedder']}`", note,
             f"- Command: `{data['command']}`; {source(f'{name}.json', f'{name}.md')} (the table as the command "
             "wrote it)",
             "- Δ and p: nDCG@10 difference against the first row and its two-sided paired "
             "randomization test p-value (10,000 resamples).", "", table, ""]
    if (RESULTS / f"{name}.png").exists():
        lines += [f"![{name}](../benchmarks/results/{name}.png)", ""]
    return lines, data


SCIFACT = ("scifact", "Ablation: BEIR SciFact",
           "- Index: ragsift defaults: one parent per abstract, sentence-aligned children of ~200 tokens "
           "with 40 tokens of overlap, the title prepended to each child's indexed text; 100 children "
           "per channel, deduplicated by parent. Published nDCG@10 for comparison: BM25 0.665-0.679, "
           "all-MiniLM-L6-v2 about 0.645.")
HOTPOTQA = ("hotpotqa-ircot-dev500", "Ablation: HotpotQA (IRCoT dev 500, multi-hop)",
            "- Two gold paragraphs per question: all-relevant@k is the share of questions with both in the "
            "top k. Single-shot retrieval here; multi-hop comes with its own issue.")


def scifact() -> list[str]:
    return section(*SCIFACT)[0]


def hotpotqa() -> list[str]:
    return section(*HOTPOTQA)[0]
