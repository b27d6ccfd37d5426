"""An entry's language: its own text's, or its document's? The defaults before and after
``text.lang.entry_languages`` (an entry that reads as English in a document in another language is
that language unless it is English prose), side by side in one run.

    git archive <before> src | tar -x -C /tmp/el-before
    cp src/ragsift/store/*.so /tmp/el-before/src/ragsift/store/
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/entry_language.py --before-src /tmp/el-before/src

The language is stored with each entry at ingest, so each tree builds its own knowledge base (the
package's defaults, e5-small) in its own process (``worker``, that tree first on ``sys.path``) and
asks every judged question once through ``KnowledgeBase.rank_documents`` with the query defaults.
Reported: nDCG@10 of the documents on the odd-numbered judged questions (file order; nothing is
chosen here, the rule has no setting), with a paired randomization test, the mean over all
questions beside it, and how many entries changed language (read from the two knowledge bases).
Sets: the Debian FAQ in English, Chinese and its Chinese answers asked in English
(``benchmarks/datasets/fetch_faqs.py``), CMRC 2018 and XQuAD-zh / -xling (``../shared/datasets``).
Writes benchmarks/results/entry_language.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--src=")), ROOT / "src")).resolve()
sys.path.insert(0, str(SRC))
sys.path.insert(1, str(ROOT / "benchmarks"))
from harness import DATASETS, load_dataset, write_result  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
SETS = {"debian-faq-en": DATA / "debian-faq-en", "debian-faq-zh": DATA / "debian-faq-zh",
        "debian-faq-xling": DATA / "debian-faq-xling", "cmrc2018": DATASETS / "cmrc2018-dev",
        "xquad-zh": DATASETS / "xquad-zh", "xquad-xling": DATASETS / "xquad-xling"}


def worker(args: argparse.Namespace) -> int:
    """Builds each set's knowledge base with this tree's code and asks every judged question."""
    from ragsift.eval.metrics import ndcg_at_k
    from ragsift.kb import KnowledgeBase

    out: dict = {"src": str(SRC), "sets": {}}
    for name in args.sets:
        ds = load_dataset(SETS[name])
        t0 = time.perf_counter()
        kb = KnowledgeBase.open(Path(args.work_dir) / f"{name}-{args.tag}", embedder="e5-small")
        kb.ingest(ds.corpus)
        ingest_s = time.perf_counter() - t0
        qids = [q for q in ds.queries if q in ds.qrels]
        scores = {q: ndcg_at_k([d for d, _ in kb.rank_documents(ds.queries[q], k=10)], ds.qrels[q], 10) for q in qids}
        kb.close()
        out["sets"][name] = {"ndcg@10": scores, "ingest_s": round(ingest_s, 1)}
        print(f"[{args.tag}] {name}: {len(qids)} questions, {statistics.fmean(scores.values()):.4f}", flush=True)
    Path(args.out).write_text(json.dumps(out), encoding="utf-8")
    return 0


def languages(kb_dir: Path) -> dict[str, str]:
    """Each chunk's stored language, read from the knowledge base's LanceDB tables."""
    import lancedb

    t = lancedb.connect(str(kb_dir / "lance")).open_table("children").to_arrow()
    return dict(zip(t.column("child_id").to_pylist(), t.column("lang").to_pylist()))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", nargs="?", default="run", choices=["run", "worker"])
    ap.add_argument("--src", default=str(ROOT / "src"), help="=DIR: the ragsift source tree (worker)")
    ap.add_argument("--before-src", default="/tmp/el-before/src", help="the code before, exported")
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--work-dir", default="/tmp/entry-language")
    ap.add_argument("--tag", default="after")
    ap.add_argument("--reuse", action="store_true", help="keep rankings already collected in --work-dir")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "entry_language.json"))
    args = ap.parse_args()
    if args.mode == "worker":
        return worker(args)
    import numpy as np

    from ragsift.eval.stats import paired_randomization_test

    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    runs = {}
    for tag, src in (("before", args.before_src), ("after", str(ROOT / "src"))):
        path = work / f"scores-{tag}.json"
        if not (args.reuse and path.exists()):
            subprocess.run([sys.executable, __file__, "worker", f"--src={src}", "--tag", tag, "--work-dir", str(work),
                            "--out", str(path), "--sets", *args.sets], check=True)
        runs[tag] = json.loads(path.read_text(encoding="utf-8"))
    result: dict = {"sets": {}}
    lines = ["| set | questions (odd) | entries | changed language | before | after (p) | all questions: before | after |",
             "|---|---|---|---|---|---|---|---|"]
    for name in args.sets:
        b, a = runs["before"]["sets"][name]["ndcg@10"], runs["after"]["sets"][name]["ndcg@10"]
        qids = list(b)
        odd = qids[1::2]
        xb, xa = np.array([b[q] for q in odd]), np.array([a[q] for q in odd])
        lb, la = languages(work / f"{name}-before"), languages(work / f"{name}-after")
        changed = Counter(f"{lb[c]} -> {la[c]}" for c in lb if c in la and lb[c] != la[c])
        r = {"questions_odd": len(odd), "entries": len(la), "changed": dict(changed),
             "before": float(xb.mean()), "after": float(xa.mean()), "p": paired_randomization_test(xb, xa),
             "all_before": statistics.fmean(b.values()), "all_after": statistics.fmean(a.values()),
             "ingest_s": {t: runs[t]["sets"][name]["ingest_s"] for t in runs}}
        result["sets"][name] = r
        ch = ", ".join(f"{k}: {v}" for k, v in changed.items()) or "none"
        lines.append(f"| {name} | {len(odd)} | {len(la):,} | {ch} | {r['before']:.4f} | {r['after']:.4f} (p={r['p']:.3f}) "
                     f"| {r['all_before']:.4f} | {r['all_after']:.4f} |")
    result["table"] = "\n".join(lines)
    print(result["table"])
    write_result(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
