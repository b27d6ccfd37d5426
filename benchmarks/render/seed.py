"""``benchmarks/seed.py``'s results (``seed.json``) on docs/benchmarks.md: *The seed's combination and the
router* (``render``)."""
from __future__ import annotations

from .common import fmt_p, load, source


def render() -> list[str]:
    r = load("seed.json")
    lines = ["## The seed's combination and the router (`benchmarks/seed.py`)", ""]
    if r is None or "seed_table" not in r:
        return lines + ["_Not run yet: `benchmarks/seed.py`._", ""]
    n = r["seed_queries"]
    lines += [f"- Date: {r['date']}; embedder `{r['embedder']}`, model `{r['model']}`; command: `{r['command']}`; {source('seed.json')}",
              "- Columns as in the seed's table (its section 5.2), each a `strategy` on the package's default fusion: "
              "base = one hybrid round over flat chunks (`strategy=\"hybrid\"`, `unit=\"child\"`); +HyDE = the HyDE "
              "channels beside it (one hypothesis); +parent-child = `unit=\"parent\"`; +recursion = "
              "`strategy=\"multihop\"` (keywords mode); all three = `strategy=\"combined\"` (HyDE on the question, "
              "multi-hop from what it found, parents). p: paired randomization against base.",
              f"- HotpotQA: the first {n['hotpotqa']} test questions; SciFact: the first {n['scifact']} odd-numbered "
              "ones; both score the document ranking. L-Eval: the first "
              f"{n['leval-nq']} Natural Questions with a verbatim answer, scored on passages (Recall@10: the answer, "
              "at its place, in one of the first 10 passages; nDCG@10: 1/log2(1 + rank) of the first that holds it), "
              "where a parent is a larger passage than a chunk (mean tokens of the 10 given).", ""]
    cols = list(next(iter(r["seed_table"].values())))
    lines += ["| set | metric | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, t in r["seed_table"].items():
        for metric, label in (("recall@10", "Recall@10"), ("ndcg@10", "nDCG@10")):
            cells = [f"{t[c][metric]:.3f}" + (f" (p {fmt_p(t[c]['p'][metric])})" if "p" in t[c] else "") for c in cols]
            lines.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
        if "tokens" in t[cols[0]]:
            lines.append(f"| {name} | tokens in 10 passages | " + " | ".join(f"{t[c]['tokens']:.0f}" for c in cols) + " |")
        lines.append(f"| {name} | ms per question | " + " | ".join(f"{t[c]['ms']:.0f}" for c in cols) + " |")
        lines.append(f"| {name} | model calls per question | " + " | ".join(f"{t[c]['llm_calls']:.2f}" for c in cols) + " |")
    lines += ["", "What the table shows (nDCG@10 against base):", ""]
    for name, t in r["seed_table"].items():
        best = max(cols, key=lambda c: t[c]["ndcg@10"])
        lines.append(f"- {name}: " + "; ".join(
            f"{c} {t[c]['ndcg@10'] - t[cols[0]]['ndcg@10']:+.3f} (p {fmt_p(t[c]['p']['ndcg@10'])})" for c in cols[1:])
            + f"; best: {best}.")
    for label, x in r.get("router", {}).items():
        q = ", ".join(f"{k} {v}" for k, v in x["questions"].items())
        lines += ["", f"**The router (`strategy=\"auto\"`) as it was then (it read the question only; replaced: next "
                  f"section), {label}** (held-out questions: {q}; mean nDCG@10; "
                  "p: paired randomization, auto against that strategy over the mix):", "",
                  "| strategy | mix | hotpotqa | scifact | p (auto vs it) | ms per question | model calls |",
                  "|---|---|---|---|---|---|---|"]
        for st, row in x["rows"].items():
            pv = fmt_p(row["p_auto_vs_this"]) if "p_auto_vs_this" in row else ""
            lines.append(f"| {st} | {row['mix']:.4f} | {row['hotpotqa']:.4f} | {row['scifact']:.4f} | {pv} | "
                         f"{row['ms']:.0f} | {row['llm_calls']:.2f} |")
        fixed = {k: v for k, v in x["rows"].items() if k != "auto"}
        best = max(fixed, key=lambda k: fixed[k]["mix"])
        auto = x["rows"]["auto"]["mix"]
        lines += ["", "Chosen: " + ", ".join(f"{k} {v}" for k, v in sorted(x["chosen"].items())) + ". "
                  + f"auto {auto:.4f} against the best fixed strategy, {best}, {fixed[best]['mix']:.4f} "
                  f"({auto - fixed[best]['mix']:+.4f}, p {fmt_p(fixed[best]['p_auto_vs_this'])}): "
                  + ("auto beats every fixed strategy." if all(auto > v["mix"] for v in fixed.values())
                     else "auto does not beat every fixed strategy.")]
    return lines + [""]
