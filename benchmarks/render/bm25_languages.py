"""``benchmarks/bm25_languages.py``'s results (``bm25_languages.json``) on docs/benchmarks.md: *BM25's
statistics in a mixed-language base* (``render``)."""
from __future__ import annotations

from .common import fmt_p, opened, ran, source


def render() -> list[str]:
    r, lines = opened("bm25_languages.json", "BM25's statistics in a mixed-language base (`benchmarks/bm25_languages.py`)",
                      "python benchmarks/bm25_languages.py")
    if r is None:
        return lines
    sets = r["sets"]
    cols = list(next(iter(sets.values()))["ndcg@10"])
    lines += [f"- {ran(r)}; {source('bm25_languages.json')}. An Okapi BM25 written in the benchmark over the documents "
              "of HotpotQA and XQuAD-zh in one index (as `benchmarks/mixed.py` mixes them; documents by language "
              f"{r['documents_by_language']}), odd-numbered questions, nDCG@10; p against `mixed` (one set of "
              "statistics, what ragsift's stores did before they kept one per language). `per language`: each document scored with the statistics of "
              "the documents of its own language; `Chinese / the rest`: two groups.", "",
              "| questions | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for n, v in sets.items():
        lines.append(f"| {n} ({v['questions']}) | " + " | ".join(
            f"{v['ndcg@10'][c]:.4f}" + (f" (p {fmt_p(v['p_vs_mixed'][c])})" if c in v["p_vs_mixed"] else "") for c in cols) + " |")
    cal = {n: v["calibration"]["ndcg@10"] for n, v in sets.items() if "calibration" in v}
    if cal:
        means = {c: sum(v[c] for v in cal.values()) / len(cal) for c in cols}
        lines += ["", "Chosen on the even-numbered questions (mean of both sets): " + ", ".join(
            f"{c} {m:.4f}" for c, m in means.items() if c != "alone") + ". The stores keep statistics per language "
            "(zh, en, other) for every language of at least 100 rows (`LANGUAGE_MIN_ROWS`; a smaller one is scored "
            "with the statistics of the whole base, since with a handful of rows every idf is near 0 and its rows "
            "would rank last): the last column, a rule set for those tiny languages rather than chosen here (on "
            "these questions it is within 0.1 points of plain per language)."]
    lines += ["", "The shared statistics are the cause of the Chinese questions' BM25 loss in a mixed base; statistics per "
              "language recover most of it. Built: the embedded store keeps BM25's statistics per language "
              "(`ragsift.store.segments.BM25Stats`; the mixed knowledge base above, measured through the package). "
              "Milvus computes its own over the whole collection, so a mixed base on Milvus keeps the shared "
              "statistics' loss."]
    return lines + [""]
