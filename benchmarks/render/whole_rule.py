"""``benchmarks/whole_rule.py``'s results (``whole_rule.json``) on docs/benchmarks.md: *Whole sections by
default?* (``render``)."""
from __future__ import annotations

import statistics

from .common import fmt_p, opened, ran, source

TITLE = "Whole sections by default? (`benchmarks/whole_rule.py`)"


def _rule(r: list) -> str:
    v, n = r
    if v == "chunks":
        return "chunks (today)"
    return f"{v} {n}" if v.startswith("mix, tokens") else f"{v}, 2-{n} chunks" if n < 1000 else f"{v}, every section"


def render() -> list[str]:
    r, lines = opened("whole_rule.json", TITLE, "python benchmarks/whole_rule.py")
    if r is None:
        return lines
    sets = r["sets"]
    lines += [f"- {ran(r)}; {source('whole_rule.json')}, replayed from `entries.py collect`'s lists (a knowledge base per "
              "set with a whole entry for every section, `small_index = [\"chunk\", \"parent\"]`; the collect commands "
              "as in \"Whole entries beside chunks\" above, plus `debian-faq-en`, `-zh` and `-xling` from "
              "`benchmarks/datasets/fetch_faqs.py`).",
              "- A rule gives the sections of two to N chunks (or of two chunks or more up to T tokens) a whole entry "
              "of their own; a section held in one chunk is its own whole under every rule. `mix`: a section with a "
              f"whole entry scores whole weight x whole + the rest x its best chunk (dense {r['whole_weights']['dense']}, "
              f"BM25 {r['whole_weights']['bm25']}, each list min-max scaled), one without scores by its chunks alone; "
              "`mix, none 0`: one without scores 0 as a whole; `whole for short`: dense reads a short section by its "
              "whole entry alone (its chunks would share that vector), BM25 as `mix`; `one chunk`: a short section is "
              "not cut (both channels read it whole). Fused as the package's default (adaptive, dense "
              f"{r['fusion_weights']['dense']} / BM25 {r['fusion_weights']['bm25']}); nDCG@10 of the documents on the "
              "odd-numbered judged queries; each set's rule chosen on the even-numbered queries of the *other* sets (best "
              "mean, no other set more than 0.5 points below today there), among the rules whose embedding cost stays "
              f"within {r['max_cost']}x today's on every set. Cost: tokens embedded (every chunk and each whole entry "
              "of its own) over today's (every chunk), an upper bound of an ingest's ratio (an ingest also reads, splits, "
              "writes and indexes; `whole_sections.py` above times ingests (first 300 documents): 1.39-1.96x where this bound said 1.43-2.0x "
              "for every section).", "",
              "| set | queries | sections of 1 / 2 / 3 / 4 chunks | today | chosen without the set (p; cost) | "
              "chosen without the set and without the bound (p; cost) |", "|---|---|---|---|---|---|"]
    for n, v in sets.items():
        s = v["sections"]
        u = v["unbounded"]
        lines.append(f"| {n} | {v['queries_odd']} | {s['1']:,} / {s['2']:,} / {s['3']:,} / {s['4']:,} | {v['today']:.4f} | "
                     f"{_rule(v['chosen'])}: {v['ndcg']:.4f} (p={fmt_p(v['p'])}; {v['cost']:.2f}x) | "
                     f"{_rule(u['chosen'])}: {u['ndcg']:.4f} (p={fmt_p(u['p'])}; {u['cost']:.2f}x) |")
    rules = list(next(iter(sets.values()))["rules_odd"])
    lines += ["", "Every rule on every set (odd queries): the change against today in nDCG@10 points, mean over the sets, "
              "the lowest and highest set, and the highest embedding cost over the sets:", "",
              "| rule | mean | lowest | highest | cost at most |", "|---|---|---|---|---|"]
    for k in rules[1:]:
        d = {n: 100 * (v["rules_odd"][k] - v["today"]) for n, v in sets.items()}
        lo, hi = min(d, key=d.get), max(d, key=d.get)
        lines.append(f"| {k} | {statistics.fmean(d.values()):+.2f} | {d[lo]:+.2f} ({lo}) | {d[hi]:+.2f} ({hi}) | "
                     f"{max(v['costs'][k] for v in sets.values()):.2f}x |")
    chosen = {tuple(v["chosen"]) for v in sets.values()}
    mean = {k: statistics.fmean(100 * (v["rules_odd"][k] - v["today"]) for v in sets.values()) for k in rules[1:]}
    cheap = [k for k in rules[1:] if max(v["costs"][k] for v in sets.values()) <= r["max_cost"]]
    best_cheap = max(cheap, key=mean.get)
    faq = [n for n in sets if "faq" in n or "insuranceqa" in n]
    best_faq = {n: max(rules[1:], key=lambda k, n=n: sets[n]["rules_odd"][k]) for n in faq}
    twice = next(k for k in rules if k.startswith("mix, one chunk twice"))
    every = next(k for k in rules if k == "mix 1000")
    lines += ["", "Chosen without each set, within the bound: " + "; ".join(_rule(list(c)) for c in sorted(chosen))
              + (" on every set" if len(chosen) == 1 else "") + ". "
              f"The best mean within the bound is {best_cheap}'s ({mean[best_cheap]:+.2f} points). "
              f"Whole entries for every section of two chunks or more (`mix 1000`) change the mean by {mean[every]:+.2f} "
              f"points at up to {max(v['costs'][every] for v in sets.values()):.2f}x the embedding; counting single-chunk "
              f"sections twice as well (`{twice}`, what `small_index = [\"chunk\", \"parent\"]` builds) by "
              f"{mean[twice]:+.2f}: the mixes' gain measured in round 2 came mostly from that double count, a lift of "
              "single-chunk sections against the others, not from whole sections read at once. "
              "FAQ-like sets, the best of every rule (an oracle on the held-out queries): "
              + "; ".join(f"{n} {100 * (sets[n]['rules_odd'][best_faq[n]] - sets[n]['today']):+.2f} ({best_faq[n]})"
                          for n in faq) + "."]
    return lines + [""]
