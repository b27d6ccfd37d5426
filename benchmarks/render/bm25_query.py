"""``benchmarks/bm25_query.py``'s results (``bm25_query.json``) on docs/benchmarks.md: *BM25: a repeated
query term, and the analyzers* (``render``)."""
from __future__ import annotations

from .common import fmt_p, opened, ran, source


def render() -> list[str]:
    r, lines = opened("bm25_query.json", "BM25: a repeated query term, and the analyzers (`benchmarks/bm25_query.py`)",
                      "python benchmarks/bm25_query.py")
    if r is None:
        return lines
    sets = r["sets"]
    k3s = list(next(iter(sets.values()))["k3_held_out"])
    label = {"0.0": "once (k3 0)", "inf": "every repeat"}
    lines += [f"- {ran(r)}; {source('bm25_query.json')}. An Okapi BM25 written in the benchmark (k1 1.2, b 0.75, "
              "Lucene's idf) over whole documents, on ragsift's default analyzer's terms; a term the query says c times "
              "weighs (k3 + 1) c / (k3 + c) (Robertson's query-term saturation). Chosen on the calibration questions "
              "(HotpotQA's last 200, other sets' even-numbered), reported on the held-out ones (HotpotQA's first 300, "
              "odd-numbered).",
              "- Mean over the sets' calibration questions: " + ", ".join(
                  f"{label.get(k, 'k3 ' + k)} {v:.4f}" for k, v in r["calibration_mean"].items())
              + f". Best there: k3 {r['best_on_calibration']}. ragsift counts each distinct term once (k3 0): within "
              f"{abs(r['calibration_mean'][r['best_on_calibration']] - r['calibration_mean']['0.0']) * 100:.2f} points of "
              "the best on calibration, and the one rule every store can carry (Milvus scores the query text it is "
              "given, so a weight between once and twice cannot be sent).", "",
              "| set | questions (held out) | repeating a term | " + " | ".join(label.get(k, f"k3 {k}") for k in k3s)
              + " | p once vs every repeat |", "|---|---|---|" + "---|" * len(k3s) + "---|"]
    for n, v in sets.items():
        lines.append(f"| {n} | {v['questions']} ({v['held_out']}) | {v['repeating']} | "
                     + " | ".join(f"{v['k3_held_out'][k]:.4f}" for k in k3s) + f" | {fmt_p(v['p_once_vs_every'])} |")
    names = list(next(iter(sets.values()))["analyzers_held_out"])
    lines += ["", "The analyzers (each distinct term once; held-out questions, nDCG@10; p v2 against v1):", "",
              "| set | " + " | ".join(names) + " | p | all questions: " + " / ".join(names) + " |",
              "|---|" + "---|" * len(names) + "---|---|"]
    for n, v in sets.items():
        lines.append(f"| {n} | " + " | ".join(f"{v['analyzers_held_out'][a]:.4f}" for a in names)
                     + f" | {fmt_p(v['p_v2_vs_v1'])} | " + " / ".join(f"{v['analyzers_all'][a]:.4f}" for a in names) + " |")
    sf = sets.get("scifact")
    if sf:
        a = sf["analyzers_all"]
        lines += ["", f"On SciFact BM25 alone, v2 against v1 is {(a['ragsift-unicode-v2'] - a['ragsift-zh-en-v1']) * 100:+.2f} "
                  f"points over every question, and v2 without the words v1 dropped {a['v2 without non-ASCII words']:.4f}: "
                  "the difference is the words outside ASCII v2 keeps (Greek letters, accented words); "
                  "not a bug: they are words in every other language. The "
                  "larger drop of the fusion section (v2 against v1 in the hybrid over chunks) is not reproduced by BM25 "
                  "over whole documents and stays unexplained."]
    return lines + [""]
