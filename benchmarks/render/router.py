"""``benchmarks/router.py``'s results (``router.json``) on docs/benchmarks.md: *The router as the default,
on every set's held-out questions* (``render``)."""
from __future__ import annotations

import json

from .common import fmt_p, opened, source

PACKAGE_RULE = "named, or asks and linked"  # the rule ragsift.retrieve.strategy runs (its name in router.py)


def _package_rule(r: dict) -> str:
    """Whether the rule chosen is the one the package runs, and where they differ when not."""
    chosen, sets = r["chosen"], r["sets"]
    if chosen == PACKAGE_RULE:
        return "`auto` is that rule as the package runs it (its rankings agree with the replay on the number of questions shown)."
    differ = [f"{n} ({(v['calibration'][chosen] - v['calibration'][PACKAGE_RULE]) * 100:+.2f} points on calibration, "
              f"{(v['ndcg@10'][chosen] - v['ndcg@10'][PACKAGE_RULE]) * 100:+.2f} held out)"
              for n, v in sets.items() if v["calibration"][chosen] != v["calibration"][PACKAGE_RULE]]
    return (f"The package runs **{PACKAGE_RULE}** (chosen here before BM25 counted a repeated query term once); the two "
            "rules differ only on texts that are not questions, and in score only on " + ", ".join(differ)
            + ". `auto (as run)` is the package's rule (the agreement column counts where it ranks as the chosen rule's "
            "replay does); the package was not changed for this difference.")


def render() -> list[str]:
    r, lines = opened("router.json", "The router as the default, on every set's held-out questions (`benchmarks/router.py`)",
                      "python benchmarks/router.py collect --set NAME=FOLDER:EMBEDDER; python benchmarks/router.py report")
    if r is None:
        return lines
    sets = r["sets"]
    ov = {k: v for k, v in next(iter(sets.values()))["overrides"].items()
          if k != "max_query_chars"}  # collect adds the set's own length limit
    lines += [f"- Date: {r['date']}; commands: `python benchmarks/router.py collect --set NAME=FOLDER:EMBEDDER "
              f"--overrides '{json.dumps(ov)}'` per set (on the knowledge bases `benchmarks/entries.py` built), "
              "`python benchmarks/router.py auto --set NAME=FOLDER` (`strategy=\"auto\"` itself, beside one hybrid "
              f"round, alternating), then `{r['command']}`; {source('router.json')}.",
              "- Held-out questions: HotpotQA's first 300 (calibration: its last 200), every other set's odd-numbered "
              "(calibration: even-numbered). Rules replayed from each question's two rankings (one round, multi-hop "
              "in keywords mode) and the signals the router reads; the rule chosen on the calibration questions: "
              f"**{r['chosen']}**. " + _package_rule(r),
              "- complete@5: every relevant document among the first five (what an answer from several passages needs). "
              + ("" if r.get("chosen_within_half_a_point_everywhere") else
                 "No rule came within 0.5 points of the better fixed strategy on every set's calibration questions "
                 "(LawBench: multi-hop 0.5 points above every rule), so the rule is the best mean. ")
              + "Times were taken with other benchmark jobs on the same two cores: compare them within a row. "
              "LawBench's two longest statements (9,780 and 22,104 characters, above the default `max_query_chars` "
              "of 4,000, raised for this set) had their dense channel time out (30 s: the embedder reads a long "
              "text window by window) and rank by BM25 alone."
              + (lambda old: f" The rankings of {', '.join(old)} were searched while BM25 still counted a term the "
                 "query repeats again (before dabeee3); the entries section below gives the defaults' one-round figures "
                 "before and after that change." if old else "")(
                  [n for n, v in sets.items() if v.get("bm25_query", "every repeat") == "every repeat"]), "",
              "| set | questions | hybrid | multihop | auto | p auto vs hybrid / multihop | complete@5 hybrid / multihop / auto "
              "| auto took multi-hop | agrees with the replay | ms hybrid / auto (p90) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    short: list[str] = []
    for n, v in sets.items():
        nd, c5 = v["ndcg@10"], v["complete@5"]
        auto = "auto (as run)" if "auto (as run)" in nd else r["chosen"]
        p = v["p ndcg@10"]
        ms = (f"{v['auto_ms']['hybrid']:.0f} / {v['auto_ms']['auto']:.0f} ({v['auto_ms_p90']['hybrid']:.0f} / "
              f"{v['auto_ms_p90']['auto']:.0f})") if "auto_ms" in v else "—"
        lines.append(f"| {n} | {v['questions']} | {nd['hybrid']:.4f} | {nd['multihop']:.4f} | **{nd[auto]:.4f}** | "
                     f"{fmt_p(p['hybrid'])} / {fmt_p(p['multihop'])} | {c5['hybrid']:.3f} / {c5['multihop']:.3f} / "
                     f"{c5[auto]:.3f} | {v.get('auto_took_multihop', v['takes_multihop'])} | "
                     f"{v.get('as_run_agrees', '—')} | {ms} |")
        worse = [s for s in ("hybrid", "multihop") if nd[auto] < nd[s] - 1e-9]
        if worse:
            short.append(f"{n} (below {', '.join(f'{s} by {nd[s] - nd[auto]:.4f}, p {fmt_p(p[s])}' for s in worse)})")
    others = [k for k in next(iter(sets.values()))["calibration"] if k not in ("hybrid", "multihop")]
    lines += ["", "Every rule on the calibration questions (nDCG@10):", "",
              "| set | hybrid | multihop | " + " | ".join(others) + " |", "|---|---|---|" + "---|" * len(others)]
    for n, v in sets.items():
        c = v["calibration"]
        lines.append(f"| {n} | {c['hybrid']:.4f} | {c['multihop']:.4f} | " + " | ".join(f"{c[k]:.4f}" for k in others) + " |")
    lines += ["", "Issue 31's router target (auto at least every fixed strategy on each set's held-out questions, "
              "not only on their mean): " + ("met, as ties where auto takes the better strategy's every question "
                                              "(it cannot beat a strategy it equals)." if not short else
                                              "missed on " + "; ".join(short) + ".")]
    return lines + [""]
