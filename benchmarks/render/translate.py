"""``benchmarks/translate.py``'s results (``translate.json``) on docs/benchmarks.md: its part of
*Languages*."""
from __future__ import annotations

from .common import fmt_p, load, source


def languages_part() -> list[str]:
    """Translation's table of *Languages* (translate.json, beside fusion.json's sweep)."""
    lines: list[str] = []
    t = load("translate.json")
    if t is not None:
        lines += [f"**Translation** ({t['dataset']}, {t['queries']} odd-numbered queries, embedder {t['embedder']}, "
                  f"model `{t['llm']}`; {t['date']}; `{t['command']}`; {source('translate.json')}):", "",
                  "| configuration | nDCG@10 | Recall@10 | p vs defaults | seconds a query (cold cache) |",
                  "|---|---|---|---|---|"]
        for name, x in t["results"].items():
            lines.append(f"| {name} | {x['metrics']['ndcg@10']:.4f} | {x['metrics']['recall@10']:.4f} | "
                         f"{fmt_p(x['p_vs_defaults'])} | {x['seconds_per_query']:.2f} |")
        base, tr = t["results"]["hybrid, no model (defaults)"], t["results"]["hybrid + translation"]
        fz = load("fusion.json")
        lines += ["", f"Translation adds {100 * (tr['metrics']['ndcg@10'] - base['metrics']['ndcg@10']):+.1f} points "
                  f"(p={fmt_p(tr['p_vs_defaults'])}) for {tr['seconds_per_query']:.1f} s a question of model time. "
                  f"These {t['queries']} questions are easier than the set: the defaults score "
                  f"{base['metrics']['ndcg@10']:.3f} on them"
                  + (f" against {fz['report']['v2, chosen']['odd']['xquad-xling']['ndcg@10']:.3f} on all odd-numbered ones "
                     "(the fusion sweep)." if fz and "xquad-xling" in fz["report"]["v2, chosen"]["odd"] else ".")]
        ex = t.get("example") or {}
        if ex.get("translate"):
            lines += ["", f"Example: “{ex['question']}” → " + ", ".join(
                f"{k}: “{v}”" for k, v in ex["translate"]["translations"].items())]
        lines.append("")
    return lines
