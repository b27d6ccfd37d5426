"""Where BM25 loses in a mixed-language knowledge base: its corpus statistics or not. An Okapi BM25
written here (``bm25_query.OkapiBM25``, each distinct query term once) over the documents of
HotpotQA (English) and XQuAD-zh (Chinese), as ``benchmarks/mixed.py`` mixes them, on ragsift's
default analyzer's terms; odd-numbered questions, nDCG@10:

- ``alone``: each set in an index of its own (what the mixed one must not lose to);
- ``mixed``: one index, one set of statistics (what ragsift's stores do);
- ``per language``: one index, each document scored with the statistics (document count, average
  length, document frequencies) of the documents of its own language (zh, en, other; from the
  start of its text), the scores merged;
- ``Chinese / the rest``: the same with two groups, Chinese documents and all others;
- ``per language, 100 at least``: per language, but a language of fewer than 100 documents
  scored with the statistics of all of them (the stores' rule, ``LANGUAGE_MIN_ROWS``).

The grouping is chosen on the even-numbered questions (``calibration``) and reported on the odd ones.

    .venv/bin/python benchmarks/bm25_languages.py     # results/bm25_languages.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from harness import DATASETS as SHARED_DATASETS
from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bm25_query import OkapiBM25  # noqa: E402

from ragsift.eval.metrics import ndcg_at_k  # noqa: E402
from ragsift.eval.stats import paired_randomization_test  # noqa: E402
from ragsift.store.segments import LANGUAGE_MIN_ROWS  # noqa: E402
from ragsift.text.analyzer import analyzer_for  # noqa: E402
from ragsift.text.lang import detect_language  # noqa: E402

SHARED = SHARED_DATASETS
SETS = {"hotpotqa": SHARED / "hotpotqa-ircot-dev500", "xquad-zh": SHARED / "xquad-zh"}


def grouped(terms: list[list[str]], groups: list[str], min_docs: int = 0):
    """A search that scores each document with its own group's statistics and merges the scores;
    a group of fewer than ``min_docs`` documents (when two groups or more have that many) is
    scored with the statistics of every document (the store's rule, ``LANGUAGE_MIN_ROWS``)."""
    members = {g: [i for i, x in enumerate(groups) if x == g] for g in sorted(set(groups))}
    own = {g for g, ix in members.items() if len(ix) >= min_docs}
    own = own if len(own) >= 2 else set()
    index = {g: OkapiBM25([terms[i] for i in ix]) for g, ix in members.items() if g in own}
    rest = [i for g, ix in members.items() if g not in own for i in ix]
    everyone = OkapiBM25(terms) if rest else None
    in_rest = set(rest)

    def search(query: list[str], k: int) -> list[int]:
        found = [(s, members[g][j]) for g, ix in index.items() for j, s in ix.scores(query).items()]
        if everyone is not None:
            found += [(s, j) for j, s in everyone.scores(query).items() if j in in_rest]
        return [i for _, i in sorted(found, key=lambda x: (-x[0], x[1]))[:k]]
    return search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bm25_languages.json"))
    args = ap.parse_args()
    an = analyzer_for("ragsift-unicode-v2")
    sets = {n: load_dataset(p) for n, p in SETS.items()}
    keys, texts = [], []
    for n, ds in sets.items():
        for ln in open(ds.corpus, encoding="utf-8"):
            if ln.strip():
                d = json.loads(ln)
                keys.append(f"{n}|{d['_id']}")
                texts.append(((d.get("title") or "") + "\n" + d["text"]).strip())
    terms = [an.terms(t) for t in texts]
    lang = [detect_language(t[:2000]) for t in texts]
    mixed = OkapiBM25(terms)
    searches = {"mixed": lambda q, k: mixed.search(q, k, 0.0), "per language": grouped(terms, lang),
                "Chinese / the rest": grouped(terms, ["zh" if x == "zh" else "rest" for x in lang]),
                "per language, 100 at least": grouped(terms, lang, LANGUAGE_MIN_ROWS)}
    result: dict = {"date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/bm25_languages.py",
                    "documents_by_language": dict(Counter(lang)), "sets": {}}
    for n, ds in sets.items():
        own = [i for i, key in enumerate(keys) if key.startswith(n + "|")]
        alone = OkapiBM25([terms[i] for i in own])
        judged = [q for q in ds.queries if q in ds.qrels]
        result["sets"][n] = {}
        for half, qids in (("calibration", judged[0::2]), ("report", judged[1::2])):
            scores: dict[str, list[float]] = {"alone": []} | {s: [] for s in searches}
            for q in qids:
                qt, rels = an.terms(ds.queries[q]), {f"{n}|{d}": v for d, v in ds.qrels[q].items()}
                scores["alone"].append(ndcg_at_k([keys[own[j]] for j in alone.search(qt, 100, 0.0)], rels, 10))
                for s, fn in searches.items():
                    scores[s].append(ndcg_at_k([keys[i] for i in fn(qt, 100)], rels, 10))
            row = {"questions": len(qids), "ndcg@10": {s: statistics.fmean(v) for s, v in scores.items()},
                   "p_vs_mixed": {s: paired_randomization_test(scores["mixed"], v)
                                  for s, v in scores.items() if s != "mixed"}}
            if half == "report":
                result["sets"][n].update(row)  # the odd questions, as before
            else:
                result["sets"][n]["calibration"] = row
            print(n, half, {s: round(v, 4) for s, v in row["ndcg@10"].items()}, flush=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
