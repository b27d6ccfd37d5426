"""``benchmarks/longdoc.py``'s results (``longdoc.json``) on docs/benchmarks.md: *Long documents: flat
chunks, parent-child, whole documents (L-Eval)* (``render``)."""
from __future__ import annotations

from .common import load


def render() -> list[str]:
    r = load("longdoc.json")
    lines = ["## Long documents: flat chunks, parent-child, whole documents (L-Eval)", ""]
    if r is None:
        return lines + ["_Not run yet (`benchmarks/run_all.sh`)._", ""]
    tasks = [t for t in ("nq", "qasper", "cuad", "all") if t in r["counts"]]
    budgets = sorted({int(k.split("@")[1]) for k in r["rates"]})
    counts = ", ".join(f"{t} {r['counts'][t]}" for t in tasks if t != "all")
    lines += [f"- Date: {r['date']}; dataset `{r['dataset']}`: {r['questions']} questions with a gold answer "
              f"span ({counts}); embedder "
              f"`{r['embedder']}`; {r['parents']} parents, {r['children']} children.",
              "- Answer contained: the packed context holds the gold answer at its place in the document "
              "(the answer with up to 15 characters of what precedes or follows it). Qasper and CUAD run "
              "inside their own document (`doc_id` filter); Natural Questions corpus-wide.",
              "- Command: `.venv/bin/python benchmarks/longdoc.py --out benchmarks/results/longdoc.json`", "",
              "| unit | budget (tokens) | " + " | ".join(tasks) + " |", "|---|---|" + "---|" * len(tasks)]
    for b in budgets:
        for unit in ("child", "parent", "document"):
            rates = r["rates"].get(f"{unit}@{b}")
            if rates:
                lines.append(f"| {unit} | {b} | " + " | ".join(f"{rates[t]:.3f}" for t in tasks) + " |")
    lines.append("")
    for b in budgets:
        c, p_, d = (r["rates"].get(f"{u}@{b}", {}).get("all") for u in ("child", "parent", "document"))
        if None not in (c, p_, d):
            lines.append(f"- At {b} tokens: parent {p_:.3f} against flat chunks {c:.3f} ({p_ - c:+.3f}) and "
                         f"whole documents {d:.3f}.")
    lines += ["- The corpus is JSONL, which ragsift reads without heading structure (Qasper's section "
              "titles are plain lines there; Natural Questions pages have no line breaks at all), so "
              "parents are paragraphs, or 1,500-token pieces of a long one. With a small budget a parent "
              "brings the context around the hit; with a larger one, one or two such parents fill the "
              "budget that separate chunks spread over more places of the document. Section-aware "
              "parents and the rest of the small-to-big family are the subject of their own issue."]
    if r.get("ndcg"):
        lines += ["", "Corpus-wide document ranking (Natural Questions), nDCG@10: "
                  + ", ".join(f"{u} {v:.4f}" for u, v in r["ndcg"].items())]
    return lines + [""]
