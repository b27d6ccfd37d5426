"""``benchmarks/small_to_big.py``'s results (``small_to_big.json``) on docs/benchmarks.md: *The small-to-big
family on long documents (L-Eval)* (``render``)."""
from __future__ import annotations

from .common import load


def render() -> list[str]:
    r = load("small_to_big.json")
    lines = ["## The small-to-big family on long documents (L-Eval)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/small_to_big.py`._", ""]
    budgets = sorted({int(k.rsplit("@", 1)[1]) for k in r["rates"]})
    strategies = list(dict.fromkeys(k.rsplit("@", 1)[0] for k in r["rates"]))
    counts = r["counts"]
    lines += [f"- Date: {r['date']}; embedder `{r['embedder']}`; command: `{r['command']}`",
              f"- {r['questions']} questions with a verbatim answer span ({', '.join(f'{k} {v}' for k, v in counts.items() if k != 'all')}). "
              "A strategy scores when the packed context holds the answer at its gold place (the span with "
              "15 characters of its context, as in the long-document section above). Qasper and CUAD questions are "
              "asked within their document; Natural Questions corpus-wide, where nDCG@10 of the document ranking "
              "is given too. Up to 100 passages, packed to the token budget.",
              f"- One knowledge base holds every small index ({r['all']['entries']} entries, "
              f"{r['all']['parents']} parents); each strategy is a query setting on it.", ""]
    head = "| strategy | " + " | ".join(f"all @{b} | NQ @{b} | Qasper @{b} | CUAD @{b}" for b in budgets) + \
        " | NQ nDCG@10 | p50 ms @" + str(budgets[-1]) + " |"
    lines += [head, "|" + "---|" * (2 + 4 * len(budgets) + 1)]
    for st in strategies:
        cells = []
        for b in budgets:
            rates = r["rates"][f"{st}@{b}"]
            cells += [f"{rates.get(t, 0):.3f}" for t in ("all", "nq", "qasper", "cuad")]
        nd = r["ndcg"].get(st)
        lines.append(f"| {st} | " + " | ".join(cells) + f" | {nd:.4f} | {r['latency_ms'][f'{st}@{budgets[-1]}']} |"
                     if nd is not None else f"| {st} | " + " | ".join(cells) + " | | |")
    lines += [""] + small_to_big_findings(r, strategies, budgets)
    base = r["indexes"]["chunks"]
    lines += ["", f"**What each small index costs** (a sample of {base['documents']} documents, one knowledge base "
              "per index, against chunks alone; extractive summaries, no model):", "",
              "| small index | entries | parents | ingest s | × chunks | disk MB | × chunks |", "|---|---|---|---|---|---|---|"]
    for v in r["indexes"].values():
        lines.append(f"| {', '.join(v['small_index'])} | {v['entries']} | {v['parents']} | {v['seconds']} | "
                     f"{v['seconds'] / base['seconds']:.2f} | {v['disk_bytes'] / 1e6:.1f} | "
                     f"{v['disk_bytes'] / base['disk_bytes']:.2f} |")
    return lines + ["", "The ingest times were taken while another job shared the two cores, so they are only "
                    "a rough guide (chunks alone came out slower than chunks with key sentences); the entry "
                    "counts and disk sizes are exact, and embedding time grows with the text embedded.", ""]


def small_to_big_findings(r: dict, strategies: list[str], budgets: list[int]) -> list[str]:
    """Which strategy leads where, computed from the stored rates."""
    out = ["Findings (computed from the table):", ""]
    tasks = {"all": "all questions", "nq": "Natural Questions", "qasper": "Qasper", "cuad": "CUAD"}
    for b in budgets:
        parts = []
        for t, label in tasks.items():
            ranked = sorted(strategies, key=lambda st: -r["rates"][f"{st}@{b}"].get(t, 0))
            best, second = ranked[0], ranked[1]
            parts.append(f"{label}: {best} ({r['rates'][f'{best}@{b}'][t]:.3f}; next {second} "
                         f"{r['rates'][f'{second}@{b}'][t]:.3f})")
        out.append(f"- At {b} tokens, best on " + "; ".join(parts) + ".")
    worst = min(strategies, key=lambda st: r["rates"][f"{st}@{budgets[0]}"]["all"])
    out.append(f"- Weakest at {budgets[0]} tokens: {worst} ({r['rates'][f'{worst}@{budgets[0]}']['all']:.3f} of all "
               "questions).")
    if "chunks + key sentences" in strategies and "parent-child" in strategies:
        cmp = ", ".join(f"{r['rates'][f'chunks + key sentences@{b}']['all']:.3f} against "
                        f"{r['rates'][f'parent-child@{b}']['all']:.3f} at {b} tokens" for b in budgets)
        out.append(f"- Key sentences searched beside the chunks (both return the section): {cmp}.")
    return out
