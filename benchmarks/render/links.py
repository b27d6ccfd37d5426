"""``benchmarks/links.py``'s results (``links.json``) on docs/benchmarks.md: *Multi-hop that follows names
(HotpotQA, IRCoT dev 500; without and with the model)* (``render``)."""
from __future__ import annotations

from .common import fmt_p, load, source


def render() -> list[str]:
    r = load("links.json")
    lines = ["## Multi-hop that follows names (HotpotQA, IRCoT dev 500; without and with the model)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/links.py`._", ""]
    ch = ", ".join(f"{k}={v}" for k, v in r["chosen"].items())
    pk = ", ".join(f"{k}={v}" for k, v in r["package_defaults"].items())
    lines += [f"- Date: {r['date']}; embedder `{r['embedder']}`; command: `{r['command']}`; {source('links.json')}",
              "- Single shot: the package's default fusion (" + ", ".join(f"{k} {v}" for k, v in
                                                                         r["single_shot"].items()) + ").",
              "- `multihop_mode=\"keywords\"` follows documents by their titles (`text/links.py`): those the question "
              "names come first, those a found passage names come right after it, key terms only when no title "
              "is named.",
              f"- Calibrated on the last {r['calibration_queries']} judged queries (best all-relevant@5, then "
              f"Recall@10, then fewest rounds): {ch}. Package defaults for multi-hop: {pk}.", "",
              "| queries | configuration | all-relevant@5 | p | Recall@10 | p | nDCG@10 | p | p50 ms | mean ms | "
              "model calls |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    parts = [("test", f"first {r['test_queries']} (test)"), ("all", "all")]
    parts += [(k, f"first {k.rsplit('_', 1)[1]} (test)") for k in r if k.startswith("test_first_")]
    for part, label in parts:
        for name, x in r[part].items():
            m, pv = x["metrics"], x["p_vs_single_shot"]
            calls = (x.get("multihop") or {}).get("llm_calls_mean", 0.0)
            mean = f"{x['mean_ms']:.0f}" if "mean_ms" in x else ""
            lines.append(f"| {label} | {name} | {m['all_relevant@5']:.3f} | {fmt_p(pv['all_relevant@5'])} | "
                         f"{m['recall@10']:.3f} | {fmt_p(pv['recall@10'])} | {m['ndcg@10']:.3f} | "
                         f"{fmt_p(pv['ndcg@10'])} | {x['p50_ms']:.0f} | {mean} | {calls:.2f} |")
    if any(k.startswith("test_first_") for k in r):
        lines += ["", "The model row ran with a warm model cache (its follow-up prompts were all answered by the run "
                  "before, 2026-12-01 04:07 UTC, the same configuration with the same prompts, whose model call took "
                  "its questions 9.97 s at the median and 10.8 s on average with a cold cache): one model call a "
                  "question, so a cold question costs about 10 s on these two cores, against about 0.13 s in "
                  "keywords mode."]
    lines += ["", f"Calibration grid (single shot on these queries: all-relevant@5 "
              f"{r['calibration_single_shot']['all_relevant@5']:.3f}, Recall@10 "
              f"{r['calibration_single_shot']['recall@10']:.3f}):", "",
              "| hops_max | hop_min_gain | hop_protect | all-relevant@5 | Recall@10 | nDCG@10 | rounds | p50 ms |",
              "|---|---|---|---|---|---|---|---|"]
    for g in r["grid"]:
        lines.append(f"| {g['hops_max']} | {g['hop_min_gain']} | {g['hop_protect']} | {g['all_relevant@5']:.3f} | "
                     f"{g['recall@10']:.3f} | {g['ndcg@10']:.3f} | {g['rounds']:.2f} | {g['p50_ms']:.0f} |")
    return lines + [""]
