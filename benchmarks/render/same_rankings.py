"""``benchmarks/same_rankings.py``'s results (``same_rankings.json``, ``same_rankings_bm25.json``) on
docs/benchmarks.md: *Refactoring: the same rankings before and after* (``render``)."""
from __future__ import annotations

from .common import load


def _entries(r: dict) -> list[dict]:
    """The comparisons a result file holds (the harness's stamp sits beside them)."""
    return [d for d in r.values() if isinstance(d, dict) and "configs" in d]


def _same_rankings_rows(r: dict) -> list[str]:
    lines = ["| dataset | configuration | queries | identical top-100 lists | largest score difference | "
             "nDCG@10 before | after |", "|---|---|---|---|---|---|---|"]
    for d in _entries(r):
        for c in d["configs"]:
            nd = c.get("ndcg@10") or ["—", "—"]
            lines.append(f"| {d['dataset']} ({d.get('date', '')}) | {c['config']} | {c['queries']} | {c['identical']} | "
                         f"{c['max_score_difference']:.1e} | {nd[0]} | {nd[1]} |")
    return lines


def render() -> list[str]:
    r = load("same_rankings.json")
    lines = ["## Refactoring: the same rankings before and after (`benchmarks/same_rankings.py`)", ""]
    if r is None:
        return lines + ["_Not run yet: `benchmarks/same_rankings.py`._", ""]
    lines += ["- The second shape step (issue 27: registries, the ingest pipeline out of the API, one name per step, "
              "the units package, multi-hop in steps) was to change no ranking. Each side ran `same_rankings.py run` "
              "on the same stored knowledge base (embedder `minilm`) with its own code first on `PYTHONPATH`, the "
              "top 100 documents of every judged query kept with their scores; `compare` counts identical lists.",
              "", *_same_rankings_rows(r)]
    first, *later = _entries(r)
    lines += ["", f"- Before: {first['before']}; after: {first['after']}; {first['date']}. Commands: "
              "`PYTHONPATH=<before>/src python benchmarks/same_rankings.py run --dataset ../shared/datasets/scifact "
              "--out before-scifact.json`, the same with this code to `after-scifact.json` (HotpotQA with "
              "`--multihop`: weighted hybrid and keyword multi-hop), then `same_rankings.py compare before-scifact.json "
              "after-scifact.json --dataset ../shared/datasets/scifact --out benchmarks/results/same_rankings.json`.", ""]
    for d in later:
        lines += [f"- {d['dataset']} again ({d['date']}): before {d['before']}; after {d['after']} (`compare ... "
                  f"--label` into the same file)."]
    lines += [""] if later else []
    b = load("same_rankings_bm25.json")
    if b:
        first = next(iter(b.values()))
        lines += ["**BM25's compiled search** (issue 30) was to change no ranking either: the same commands with "
                  f"before = {first['before']}, after = {first['after']} ({first['date']}; `compare ... --out "
                  "benchmarks/results/same_rankings_bm25.json`).", "", *_same_rankings_rows(b), "",
                  "- Every list that differs differs among children of equal score at the channel's depth (100): "
                  "the NumPy path let `argpartition` pick which of them made the cut, both paths now keep the lowest "
                  "rows, so a tied document can enter or leave the end of a list (BM25: positions 72-91; a weighted "
                  "fusion's min-max scale moves with the channel's last score, hence one fused list and its score "
                  "difference, at most 4.7e-4). No BM25 or dense score of a document changed; nDCG@10 is the same.", ""]
    return lines
