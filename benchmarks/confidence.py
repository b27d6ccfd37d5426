"""Honest confidence: how well ``no_good_match`` separates questions the knowledge base answers
from questions it has no answer to, and the default thresholds chosen on data.

    .venv/bin/python benchmarks/confidence.py [--questions 100] [--distractor-chars 400000]

Per shared set (read from /work/shared/datasets, never copied into the project) a knowledge base
of a subset of its corpus is built in ``--work-dir`` with the default settings (e5-small, dense
and BM25, adaptive fusion): the documents judged relevant to its first ``--questions`` judged
questions (file order), and the corpus's first other documents up to ``--distractor-chars``
characters. Both XQuAD sets ask about the same 240 Chinese paragraphs: one knowledge base for
both. It is asked those questions (answerable) and as many questions of other sets (no answer
in it): half Chinese, half English, each source's first questions in file order.

Every question runs through ``KnowledgeBase.query`` as a user's would; what is kept per question
is the best passage similarity and term match and the dense list's standout (``Result.match``),
the verdict at the defaults, and whether a returned passage is from a relevant document.
Thresholds are then swept offline: the rule in ragsift (no good match unless a passage reaches
``min_similarity`` or ``min_term_match`` or the dense channel's best, in another language than
the question, stands out by ``min_standout``) over a grid, two signals, and each signal alone. The default is the triple of
highest F1 of ``no_good_match`` (positive: the question
has no answer in the knowledge base) on the even-numbered questions (position in their own
queries.jsonl, counting from 0); precision and recall are reported on the odd-numbered ones,
per set and over all. Results: benchmarks/results/confidence.json (command and commit in it).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
from harness import write_result  # noqa: E402

from ragsift.config import QuerySettings  # noqa: E402
from ragsift.eval.datasets import load_beir  # noqa: E402

DATASETS = ROOT.parent / "shared" / "datasets"
# knowledge base -> (the sets whose questions it answers, the sets whose questions it cannot: zh, en)
KBS = {
    "scifact": (["scifact"], ["cmrc2018-dev", "hotpotqa-ircot-dev500"]),
    "hotpotqa": (["hotpotqa-ircot-dev500"], ["cmrc2018-dev", "scifact"]),
    "xquad": (["xquad-zh", "xquad-xling"], ["cmrc2018-dev", "scifact"]),
    "cmrc2018": (["cmrc2018-dev"], ["xquad-zh", "hotpotqa-ircot-dev500"]),
    "leval": (["leval-longdoc-en"], ["cmrc2018-dev", "scifact"]),
}
SIMS = [round(0.70 + 0.005 * i, 3) for i in range(57)]  # 0.700 .. 0.980
TERMS = [round(0.05 * i, 2) for i in range(1, 21)]  # 0.05 .. 1
OUTS = [round(0.005 * i, 3) for i in range(1, 21)]  # 0.005 .. 0.1
NEVER = [np.inf]  # a signal left out of a rule
THRESHOLDS = ("min_similarity", "min_term_match", "min_standout")


def questions(folder: str, n: int, datasets: Path) -> list[tuple[int, str, str, dict[str, int]]]:
    """The first ``n`` judged questions of a set: (position in queries.jsonl, id, text, relevant docs)."""
    ds = load_beir(datasets / folder)
    out = []
    for pos, (qid, text) in enumerate(ds.queries.items()):
        if qid in ds.qrels and len(out) < n:
            out.append((pos, qid, text, ds.qrels[qid]))
    return out


def corpus_subset(folders: list[str], asked: list[dict[str, int]], budget: int, datasets: Path, out: Path) -> int:
    """Write the relevant documents of the questions asked and the first others up to ``budget``
    characters to ``out``; returns the documents written."""
    relevant = {d for r in asked for d, g in r.items() if g > 0}
    rows, chars = [], 0
    with open(datasets / folders[0] / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if str(row["_id"]) in relevant:
                rows.append(line)
            elif chars < budget:
                rows.append(line)
                chars += len(row.get("text", ""))
    out.write_text("".join(rows), encoding="utf-8")
    return len(rows)


def collect(args: argparse.Namespace) -> list[dict]:
    from ragsift.kb import KnowledgeBase

    datasets, work = Path(args.datasets), Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for name, (answered, others) in KBS.items():
        if args.only and name not in args.only:
            continue
        cache = work / f"{name}-rows.json"
        if cache.exists():
            rows += json.loads(cache.read_text(encoding="utf-8"))
            print(f"{name}: cached", flush=True)
            continue
        asked = [(s, q) for s in answered for q in questions(s, args.questions, datasets)]
        n_no = len(asked) // len(others)
        unanswerable = [(s, q) for s in others for q in questions(s, n_no, datasets)]
        path = work / name
        t0 = time.perf_counter()
        if not (path / "ragsift.toml").exists():
            docs = corpus_subset(answered, [q[3] for _, q in asked], args.distractor_chars, datasets,
                                 work / f"{name}.jsonl")
            kb = KnowledgeBase.open(path)
            kb.ingest([work / f"{name}.jsonl"])
            print(f"{name}: {docs} documents ingested in {time.perf_counter() - t0:.0f} s", flush=True)
        else:
            kb = KnowledgeBase.open(path)
        mine = []
        defaults = {k: getattr(QuerySettings(), k) for k in THRESHOLDS}
        t0 = time.perf_counter()
        for answerable, group in ((True, asked), (False, unanswerable)):
            for source, (pos, qid, text, rel) in group:
                r = kb.query(text, trace=False, **defaults)  # the code's defaults, not those saved with the base
                mine.append({"kb": name, "set": source, "pos": pos, "qid": qid, "answerable": answerable,
                             "lang": "zh" if source in ("cmrc2018-dev", "xquad-zh") else "en",
                             "similarity": r.match.similarity, "term_match": r.match.term_match,
                             "standout": r.match.standout, "cross_language": r.match.cross_language,
                             "passages": len(r.passages), "flagged": r.no_good_match,
                             "found": any(p.doc_id in rel for p in r.passages)
                             if answerable else None})
        print(f"{name}: {len(mine)} questions in {time.perf_counter() - t0:.0f} s", flush=True)
        kb.close()
        cache.write_text(json.dumps(mine), encoding="utf-8")
        rows += mine
    return rows


def signals(rows: list[dict]) -> tuple[np.ndarray, ...]:
    """Per question: best similarity, best term match, standout (-inf where unknown; the standout
    only where the best match is in another language), whether any passage came back, and
    whether it has no answer."""
    def col(key: str) -> np.ndarray:
        return np.array([-np.inf if r[key] is None else r[key] for r in rows])
    out = np.where([r["cross_language"] for r in rows], col("standout"), -np.inf)
    return (col("similarity"), col("term_match"), out, np.array([r["passages"] > 0 for r in rows]),
            np.array([not r["answerable"] for r in rows]))


def flags(sig: tuple, sim: float, term: float, out: float) -> np.ndarray:
    """ragsift's rule (``retrieve.confidence.judge``): no good match unless a passage reaches ``sim``
    or ``term`` (a term match of 0 never suffices) or the dense list's best, in another language
    than the question, stands out by ``out``."""
    s, t, o, some, _ = sig
    return ~(some & ((s >= sim) | ((t > 0) & (t >= term)) | (o >= out)))


def scores(sig: tuple, flagged: np.ndarray) -> dict:
    no = sig[4]
    tp, fp, fn = int((flagged & no).sum()), int((flagged & ~no).sum()), int((~flagged & no).sum())
    p = tp / (tp + fp) if tp + fp else 1.0
    rc = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
    return {"precision": round(p, 4), "recall": round(rc, 4), "f1": round(f1, 4), "flagged": tp + fp,
            "questions": len(no), "no_answer": int(no.sum())}


def best(sig: tuple, sims: list[float], terms: list[float], outs: list[float]) -> tuple[float, float, float, dict]:
    """The thresholds of highest F1 (ties: the higher precision, then the lower thresholds)."""
    scored = [(scores(sig, flags(sig, s, t, o)), s, t, o) for s in sims for t in terms for o in outs]
    sc, s, t, o = max(scored, key=lambda x: (x[0]["f1"], x[0]["precision"], -x[1], -x[2], -x[3]))
    return s, t, o, sc


def sweep(rows: list[dict]) -> dict:
    even = [r for r in rows if r["pos"] % 2 == 0]
    odd = [r for r in rows if r["pos"] % 2 == 1]
    se, so = signals(even), signals(odd)
    out: dict = {}
    for rule, sims, terms, outs in (("similarity, term match or standout (ragsift)", SIMS, TERMS, OUTS),
                                    ("similarity or term match", SIMS, TERMS, NEVER),
                                    ("similarity alone", SIMS, NEVER, NEVER),
                                    ("term match alone", NEVER, TERMS[:-1], NEVER),
                                    ("standout alone", NEVER, NEVER, OUTS)):
        s, t, o, on_even = best(se, sims, terms, outs)
        out[rule] = {"min_similarity": s, "min_term_match": t, "min_standout": o, "even (chosen on)": on_even,
                     "odd (reported)": scores(so, flags(so, s, t, o))}
        for by, values in (("knowledge base", list(KBS)), ("question set", sorted({r["set"] for r in odd})),
                           ("question language", ["zh", "en"])):
            key = {"knowledge base": "kb", "question set": "set", "question language": "lang"}[by]
            part = {v: [r for r in odd if r[key] == v] for v in values}
            out[rule][f"odd per {by}"] = {v: scores(signals(p), flags(signals(p), s, t, o)) for v, p in part.items() if p}
    return out


def product(rows: list[dict]) -> dict:
    """Precision and recall of ``Result.no_good_match`` itself (the settings' defaults)."""
    return scores(signals(rows), np.array([r["flagged"] for r in rows]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=str(DATASETS))
    ap.add_argument("--work-dir", default="/tmp/ragsift-confidence")
    ap.add_argument("--questions", type=int, default=100, help="answerable questions per set (file order)")
    ap.add_argument("--distractor-chars", type=int, default=400_000,
                    help="characters of other documents beside the relevant ones, per knowledge base")
    ap.add_argument("--only", nargs="*", default=[], help="knowledge bases to run (default: all)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "confidence.json"))
    args = ap.parse_args()
    rows = collect(args)
    found = [r["found"] for r in rows if r["answerable"]]
    odd_rows = [r for r in rows if r["pos"] % 2 == 1]
    result = {"settings": "defaults (e5-small, dense + bm25, adaptive fusion, 4 passages)",
              "questions_per_set": args.questions, "distractor_chars": args.distractor_chars,
              "questions": len(rows), "no_answer": sum(1 for r in rows if not r["answerable"]),
              "answerable_with_a_relevant_passage": round(sum(found) / len(found), 4) if found else None,
              "defaults": {k: getattr(QuerySettings(), k) for k in THRESHOLDS},
              "at the defaults, as ragsift flags (odd)": product(odd_rows), "rules": sweep(rows), "rows": rows}
    write_result(args.out, result)  # with the command, the commit, the date and the host
    for rule, v in result["rules"].items():
        print(f"{rule}: min_similarity {v['min_similarity']}, min_term_match {v['min_term_match']}, "
              f"min_standout {v['min_standout']}; odd: {v['odd (reported)']}")
    print("at the defaults", result["defaults"], result["at the defaults, as ragsift flags (odd)"])


if __name__ == "__main__":
    main()
