"""How BM25 should weigh a query term the query repeats, and what the v2 analyzer costs, with an
Okapi BM25 written here (independent of ragsift's store) over whole documents.

    .venv/bin/python benchmarks/bm25_query.py            # every set found, results/bm25_query.json

Query-term saturation (Robertson's k3): a term the query says ``c`` times weighs
``(k3 + 1) c / (k3 + c)``: k3 = 0 counts it once (what ragsift does since this benchmark), k3 = inf
counts every repeat (what it did, as Lucene does). Each set's documents and questions go through
ragsift's default analyzer (``ragsift-unicode-v2``); k1 1.2, b 0.75, Lucene's idf. The choice is
made on the calibration questions (HotpotQA's last 200, every other set's even-numbered) and
reported on the held-out ones (HotpotQA's first 300, odd-numbered).

The analyzers are compared the same way at k3 = 0: ``ragsift-zh-en-v1`` (before), v2 (now), and v2
without the words outside ASCII (Greek letters, accented words) that v1 dropped, which isolates
what v2's wider word set changes on English sets.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.text.analyzer import UnicodeAnalyzer, analyzer_for  # noqa: E402

SHARED = SHARED_DATASETS
SETS = {"scifact": SHARED / "scifact", "hotpotqa": SHARED / "hotpotqa-ircot-dev500",
        "cmrc2018": SHARED / "cmrc2018-dev", "xquad-zh": SHARED / "xquad-zh", "leval": SHARED / "leval-longdoc-en",
        "insuranceqa-zh": ROOT / "benchmarks" / "data" / "insuranceqa-zh",
        "insuranceqa-en": ROOT / "benchmarks" / "data" / "insuranceqa-en",
        "lawbench-zh": ROOT / "benchmarks" / "data" / "lawbench-zh",
        "phantomwiki": ROOT / "benchmarks" / "data" / "phantomwiki"}
K3 = (0.0, 0.5, 1.2, 3.0, 10.0, math.inf)


class OkapiBM25:
    """BM25 over whole documents with query-term saturation k3. ``lengths``: the length each document
    has in the formula, where it is not its exact one (the average stays the exact lengths')."""

    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75,
                 lengths: list[int] | None = None) -> None:
        self.tf = [Counter(d) for d in docs]
        exact = np.array([len(d) for d in docs], float)
        avg = float(exact.mean()) if docs else 1.0
        lens = exact if lengths is None else np.asarray(lengths, float)
        self.norm = k1 * (1 - b + b * lens / avg)
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        self.idf = {t: math.log(1 + (len(docs) - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.post: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.post.setdefault(t, []).append(i)
        self.k1 = k1

    def scores(self, query: list[str], k3: float = 0.0) -> dict[int, float]:
        """Every matching document's score."""
        out: dict[int, float] = {}
        for t, c in Counter(query).items():
            qw = c if math.isinf(k3) else (k3 + 1) * c / (k3 + c)
            for i in self.post.get(t, ()):
                f = self.tf[i][t]
                out[i] = out.get(i, 0.0) + qw * self.idf[t] * f * (self.k1 + 1) / (f + self.norm[i])
        return out

    def search(self, query: list[str], k: int, k3: float) -> list[int]:
        return [i for i, _ in sorted(self.scores(query, k3).items(), key=lambda x: (-x[1], x[0]))[:k]]


class AsciiV2(UnicodeAnalyzer):
    """v2 less the words outside ASCII (as v1 dropped them); Han words kept."""

    def terms(self, text: str) -> list[str]:
        return [t for t in super().terms(text) if t.isascii() or all("\u3400" <= ch <= "\u9fff" for ch in t)]


def split(name: str, n: int) -> dict[str, list[int]]:
    if name == "hotpotqa":
        return {"calibration": list(range(300, n)), "held_out": list(range(300))}
    return {"calibration": list(range(0, n, 2)), "held_out": list(range(1, n, 2))}


def run_set(name: str, folder: Path) -> dict:
    ds = load_dataset(folder)
    docs = [json.loads(ln) for ln in open(ds.corpus, encoding="utf-8") if ln.strip()]
    ids = [str(d["_id"]) for d in docs]
    texts = [((d.get("title") or "") + "\n" + d["text"]).strip() for d in docs]
    qids = [q for q in ds.queries if q in ds.qrels]
    parts = split(name, len(qids))
    analyzers = {"ragsift-zh-en-v1": analyzer_for("ragsift-zh-en-v1"), "ragsift-unicode-v2": analyzer_for("ragsift-unicode-v2"),
                 "v2 without non-ASCII words": AsciiV2()}
    out: dict = {"documents": len(docs), "questions": len(qids), "k3": {}, "analyzers": {}}
    t0 = time.time()
    for an_name, an in analyzers.items():
        index = OkapiBM25([an.terms(t) for t in texts])
        queries = [an.terms(ds.queries[q]) for q in qids]
        if an_name == "ragsift-unicode-v2":
            out["repeating"] = sum(any(c > 1 for c in Counter(x).values()) for x in queries)
            for k3 in K3:
                s = [ndcg_at_k([ids[i] for i in index.search(x, 100, k3)], ds.qrels[q], 10) for q, x in zip(qids, queries)]
                out["k3"][str(k3)] = s
        s = [ndcg_at_k([ids[i] for i in index.search(x, 100, 0.0)], ds.qrels[q], 10) for q, x in zip(qids, queries)]
        out["analyzers"][an_name] = s
    out["seconds"] = round(time.time() - t0, 1)
    out["parts"] = parts
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bm25_query.json"))
    args = ap.parse_args()
    per = {}
    for name, folder in SETS.items():
        if not folder.exists():
            print(f"{name}: {folder} not found, left out")
            continue
        per[name] = run_set(name, folder)
        print(f"{name}: {per[name]['questions']} questions, {per[name]['repeating']} repeat a term "
              f"({per[name]['seconds']} s)", flush=True)

    def mean(v: list[float], idx: list[int]) -> float:
        return statistics.fmean(v[i] for i in idx)

    calib = {k: statistics.fmean(mean(p["k3"][str(k)], p["parts"]["calibration"]) for p in per.values()) for k in K3}
    chosen = max(K3, key=lambda k: calib[k])
    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/bm25_query.py",
                    "calibration_mean": {str(k): v for k, v in calib.items()}, "best_on_calibration": str(chosen),
                    "sets": {}}
    for name, p in per.items():
        held = p["parts"]["held_out"]
        once, every = np.array([p["k3"]["0.0"][i] for i in held]), np.array([p["k3"]["inf"][i] for i in held])
        an = p["analyzers"]
        v1, v2 = np.array([an["ragsift-zh-en-v1"][i] for i in held]), np.array([an["ragsift-unicode-v2"][i] for i in held])
        result["sets"][name] = {
            "documents": p["documents"], "questions": p["questions"], "held_out": len(held),
            "repeating": p["repeating"],
            "k3_held_out": {k: mean(v, held) for k, v in p["k3"].items()},
            "k3_calibration": {k: mean(v, p["parts"]["calibration"]) for k, v in p["k3"].items()},
            "p_once_vs_every": paired_randomization_test(every, once),
            "analyzers_held_out": {k: mean(v, held) for k, v in an.items()},
            "analyzers_all": {k: statistics.fmean(v) for k, v in an.items()},
            "p_v2_vs_v1": paired_randomization_test(v1, v2)}
        r = result["sets"][name]
        print(f"{name}: " + ", ".join(f"k3={k} {v:.4f}" for k, v in r["k3_held_out"].items())
              + f"; v1 {r['analyzers_held_out']['ragsift-zh-en-v1']:.4f} v2 {r['analyzers_held_out']['ragsift-unicode-v2']:.4f}")
    print(f"calibration means: {result['calibration_mean']}; best {chosen}")
    write_result(args.out, result)


if __name__ == "__main__":
    main()
