"""Which sections get a whole entry of their own by default (issue 55): a rule by size, chosen
leave-one-set-out, replayed from ``entries.py collect``'s lists.

    .venv/bin/python benchmarks/entries.py collect --work-dir /tmp/ent --set NAME=FOLDER:EMBEDDER ...
    .venv/bin/python benchmarks/whole_rule.py

``collect`` stores, per judged query, the dense and BM25 lists over the chunks and over the whole
sections (depth 100) of a knowledge base holding a whole entry for *every* section, and each
section's size (its chunks and their tokens). A rule ``N`` keeps the whole entries of the sections
of two to N chunks (``mix, tokens T``: of two chunks or more and at most T tokens) and drops the
others'. A section held in one chunk is its own whole: it is scored by that chunk alone under every
rule but ``mix, one chunk twice`` (its whole entry is the same text and vector; counting it twice,
as a whole entry and a chunk, only moves single-chunk sections against the others by how the two
lists are scaled, which that rule measures). How a
section then scores, per channel (dense whole weight 0.25, BM25 0.5: the package's ``whole_weights``):

- ``mix``: ``a * whole + (1 - a) * best chunk`` (each list min-max scaled) where the section has a
  whole entry, its best chunk alone where it has none (the section is its chunks);
- ``mix, none 0``: the same, but a section without a whole entry scores 0 as a whole (what the
  package did when a knowledge base held whole entries for some sections only);
- ``whole for short``: dense scores a section that has a whole entry by that entry alone (its
  chunks would share the whole vector: no chunk embedded), BM25 as ``mix``;
- ``mix, one chunk twice``: ``mix`` over every section, a single-chunk one's chunk counted again as
  its whole (what ``small_index = ["chunk", "parent"]`` builds and round 2 measured);
- ``one chunk``: both channels score such a section by its whole entry alone: a short section is
  not cut into chunks (BM25's raw scores of whole and chunk entries come from one index there; the
  replay takes each list's own, an approximation checked through the package).

The two channels are fused as the package's default (adaptive from dense 0.5 / BM25 0.5) and the
documents scored by nDCG@10. Each set's row uses the rule chosen on the even-numbered queries of the
other sets (best mean, no other set more than 0.5 points below today there), among the rules whose
embedding cost stays within ``--max-cost`` on every set: the tokens embedded (every chunk, and each
whole entry that does not share a vector) over today's (every chunk), an upper bound of the
ingest's ratio (an ingest also reads, splits, writes and indexes); the chosen rule's ingest is then
timed through the package (``whole_sections.py``). Reported on the odd-numbered queries, with p
against today (chunks alone; paired randomization).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from entries import CACHE, cross_language, default_fusion, fused_ndcg, minmax
from harness import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragsift.config import Settings  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402

VARIANTS = ("mix", "mix, none 0", "whole for short", "one chunk")
SIZES = (2, 3, 4, 6, 1000)  # sections of 2 to N chunks (1000: every section of two chunks or more)
TOKENS = (300, 400, 500)
TOKEN_MIX = "mix, tokens"  # ``mix`` by a token bound: sections of two chunks or more up to T tokens
#: ``small_index = ["chunk", "parent"]`` as the package builds it: every section has a whole entry, a
#: single-chunk one too (its chunk again), so such a section is counted twice (round 2's ``mix``)
TWICE = "mix, one chunk twice"
TODAY = ("chunks", 0)


def section_scores(chunks: list, whole: list, has: set[str], how: str, a: float) -> list[tuple[str, float]]:
    """(section, score), best first, of one channel under one rule (module docstring)."""
    best_c: dict[str, float] = {}
    for p, _, s in chunks:
        best_c.setdefault(p, s)
    best_w: dict[str, float] = {}
    for p, _, s in whole:
        if p in has:
            best_w.setdefault(p, s)
    if how == "chunks":
        out = best_c
    elif how == "whole for short":  # the raw scores of one embedder: a short section's whole, a long one's best chunk
        out = {p: s for p, s in best_c.items() if p not in has} | best_w
    else:
        nc, nw = minmax(list(best_c.items())), minmax(list(best_w.items()))
        alone = 0.0 if how == "mix, none 0" else None
        out = {p: a * nw.get(p, 0.0) + (1 - a) * nc.get(p, 0.0) if p in has
               else (1 - a) * nc[p] + a * (nc[p] if alone is None else alone)
               for p in set(nc) | set(nw)}
    return sorted(out.items(), key=lambda x: -x[1])


class Query:
    def __init__(self, row: dict, doc_lang: dict[str, str]) -> None:
        self.li, self.rels = row["lists"], row["rels"]
        self.doc_of = {p: d for hits in self.li.values() for p, d, _ in hits}
        self.discounts = cross_language(((p, d) for k in ("bm25_chunk", "bm25_parent") for p, d, _ in self.li[k]),
                                        doc_lang, row["qlang"])

    def ndcg(self, rule: tuple[str, int], has_of, ww: dict[str, float], fusion: str) -> float:
        variant, n = rule
        has = has_of(rule)
        variant = "mix" if variant in (TOKEN_MIX, TWICE) else variant
        dense_how = {"chunks": "chunks", "one chunk": "whole for short"}.get(variant, variant)
        bm25_how = {"chunks": "chunks", "whole for short": "mix", "one chunk": "whole for short"}.get(variant, variant)
        rankings = {"dense": section_scores(self.li["dense_chunk"], self.li["dense_parent"], has, dense_how, ww["dense"]),
                    "bm25": section_scores(self.li["bm25_chunk"], self.li["bm25_parent"], has, bm25_how, ww["bm25"])}
        return fused_ndcg(rankings, fusion, self.discounts, self.doc_of, self.rels)


def within(size: tuple[int, int] | list[int], rule: tuple[str, int]) -> bool:
    """Whether a section of ``size`` (its chunks' tokens, its chunks) has a whole entry under ``rule``."""
    tokens, chunks = size[0], size[1]
    if rule[0] == TWICE:
        return True
    return 1 < chunks and (tokens if rule[0] == TOKEN_MIX else chunks) <= rule[1]


def cost(sections: dict[str, list[int]], n: int, variant: str) -> float:
    """Tokens embedded under the rule over today's (every chunk)."""
    if variant in ("chunks", "whole for short", "one chunk"):  # a short section embedded once, whole
        return 1.0
    chunk_tokens = sum(sz[0] for sz in sections.values()) or 1
    # a section of one chunk shares that chunk's vector (``SmallIndex.extra``): only sections of two
    # chunks or more cost
    whole = sum(sz[0] for sz in sections.values() if sz[1] > 1 and within(sz, (variant, n)))
    return (chunk_tokens + whole) / chunk_tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-cost", type=float, default=1.25)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "whole_rule.json"))
    args = ap.parse_args()
    q = Settings().query
    fusion = default_fusion()  # the package's (adaptive from these weights)
    fw = {"dense": q.weight("dense"), "bm25": q.weight("bm25")}
    ww = {c: q.whole_weight(c) or 0.0 for c in ("dense", "bm25")}
    rules = [TODAY] + [(v, n) for v in VARIANTS for n in SIZES] + [(TOKEN_MIX, t) for t in TOKENS] + [(TWICE, 1000)]
    sets = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(CACHE.glob("*.json"))}
    sets = {k: v for k, v in sets.items() if "sections" in v}
    per: dict[str, dict] = {}
    costs: dict[str, dict] = {}
    for name, data in sets.items():
        sections = data["sections"]
        has_cache: dict[int, set[str]] = {}

        def has_of(rule: tuple[str, int], sections=sections, has_cache=has_cache) -> set[str]:
            if rule not in has_cache:
                has_cache[rule] = {p for p, sz in sections.items() if within(sz, rule)}
            return has_cache[rule]

        queries = [Query(r, data["doc_lang"]) for r in data["rows"]]
        per[name] = {part: {rule: [x.ndcg(rule, has_of, ww, fusion) for x in queries[start::2]] for rule in rules}
                     for part, start in (("even", 0), ("odd", 1))}
        costs[name] = {rule: cost(sections, rule[1], rule[0]) for rule in rules}
        chunks = [sz[1] for sz in sections.values()]
        print(f"{name}: {len(queries)} queries; sections by chunks: "
              + ", ".join(f"{k}: {sum(1 for c in chunks if c == k)}" for k in (1, 2, 3, 4)) + f", more: {sum(1 for c in chunks if c > 4)}",
              flush=True)

    def mean(name: str, part: str, rule: tuple) -> float:
        return statistics.fmean(per[name][part][rule])

    def choose(pool: list[str], max_cost: float = args.max_cost) -> tuple:
        cheap = [r for r in rules if all(costs[o][r] <= max_cost for o in sets)]
        if not pool:
            return TODAY
        fine = [r for r in cheap if all(mean(o, "even", r) >= mean(o, "even", TODAY) - 0.005 for o in pool)]
        return max(fine or cheap, key=lambda r: statistics.fmean(mean(o, "even", r) for o in pool))

    names = list(sets)
    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python " + " ".join(sys.argv),
                    "max_cost": args.max_cost, "whole_weights": ww, "fusion_weights": fw,
                    "chosen_on_all": list(choose(names)), "chosen_on_all_unbounded": list(choose(names, math.inf)),
                    "sets": {}}
    print(f"chosen on every set's even queries: {result['chosen_on_all']}")
    for name in names:
        chosen = choose([o for o in names if o != name])
        free = choose([o for o in names if o != name], math.inf)  # the same without the ingest bound
        a, b = np.array(per[name]["odd"][TODAY]), np.array(per[name]["odd"][chosen])
        c = np.array(per[name]["odd"][free])
        result["sets"][name] = {
            "queries_odd": len(a), "today": float(a.mean()), "chosen": list(chosen), "ndcg": float(b.mean()),
            "p": paired_randomization_test(a, b), "cost": costs[name][chosen],
            "unbounded": {"chosen": list(free), "ndcg": float(c.mean()), "p": paired_randomization_test(a, c),
                          "cost": costs[name][free]},
            "sections": {str(k): sum(1 for sz in sets[name]["sections"].values() if sz[1] == k) for k in (1, 2, 3, 4)},
            "rules_odd": {f"{v} {n}": mean(name, "odd", (v, n)) for v, n in rules},
            "costs": {f"{v} {n}": costs[name][(v, n)] for v, n in rules}}
        r = result["sets"][name]
        print(f"{name}: today {r['today']:.4f}; chosen without it {chosen} {r['ndcg']:.4f} (p {r['p']:.3f}); "
              f"cost {r['cost']:.2f}x", flush=True)
        print("   " + "; ".join(f"{k} {v:.4f} ({r['costs'][k]:.2f}x)" for k, v in r["rules_odd"].items()))
    write_result(args.out, result)


if __name__ == "__main__":
    main()
