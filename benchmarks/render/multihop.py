"""``benchmarks/multihop.py``'s results (``multihop.json``) on docs/benchmarks.md: *Multi-hop retrieval
(HotpotQA, IRCoT dev 500)* (``render``)."""
from __future__ import annotations

from .common import load, source


def multihop_findings(r: dict) -> list[str]:
    def ar5(part: str, name: str) -> str:
        row = r[part].get(name)
        return "n/a" if row is None else f"{row['metrics']['all_relevant@5']:.3f}"

    out = ["What it shows: the share of questions with both gold paragraphs in the top 5 (all-relevant@5),", ""]
    for stack in ("bm25", "hybrid"):
        out.append(f"- {stack}: single-shot {ar5('test', f'{stack} single-shot')} → keywords multi-hop "
                   f"{ar5('test', f'{stack} multi-hop keywords')} ({r['test_queries']} queries); on the first "
                   f"{r['llm_queries']}: single-shot {ar5('llm', f'{stack} single-shot')}, keywords "
                   f"{ar5('llm', f'{stack} multi-hop keywords')}, with the model {ar5('llm', f'{stack} multi-hop LLM')}.")
    out += ["- The Δ columns in both tables are against BM25 single-shot; compare hybrid rows with hybrid "
            "single-shot directly.", ""]
    return out


def render() -> list[str]:
    r = load("multihop.json")
    lines = ["## Multi-hop retrieval (HotpotQA, IRCoT dev 500)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/multihop.py`._", ""]
    lines += ["_Measured before multi-hop followed names (key-term follow-ups, RRF hybrid); the next section "
              "measures keywords mode as it is now._", "",
              f"- Date: {r['date']}; embedder `{r['embedder']}`; command: `{r['command']}`; {source('multihop.json')}",
              f"- The gain threshold (`hop_min_gain`) was chosen on the last {r['calibration_queries']} "
              f"judged queries (best all-relevant@5, then Recall@10, then fewest rounds) and is tested on the "
              f"first {r['test_queries']}: chosen {', '.join(f'{k} {v}' for k, v in r['chosen'].items())}.",
              "- rounds: retrieval rounds run per question, the question's own included (a last round "
              "that was dropped for low gain counts); LLM calls: follow-up queries written by the model.", "",
              *multihop_findings(r),
              f"**Test, {r['test_queries']} queries, keywords mode (no model)**", "", r["test_table"], "",
              f"**The first {r['llm_queries']} test queries, with the model** (Qwen2.5-Coder-1.5B, local)", "",
              r["llm_table"], "", "**Calibration grid** (keywords mode)", "",
              "| stack | hop_min_gain | all-relevant@5 | Recall@10 | nDCG@10 | rounds | stops |", "|---|---|---|---|---|---|---|"]
    for stack, rows in r["grid"].items():
        for g in rows:
            stops = ", ".join(f"{k} {v}" for k, v in sorted(g["stops"].items()))
            lines.append(f"| {stack} | {g['hop_min_gain']} | {g['all_relevant@5']:.4f} | {g['recall@10']:.4f} | "
                         f"{g['ndcg@10']:.4f} | {g['rounds']:.2f} | {stops} |")
    return lines + [""]
