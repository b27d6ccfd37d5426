"""The small-to-big family on long documents (L-Eval): does the packed context contain the
answer, at equal token budgets, for each strategy; and what each costs to index.

    .venv/bin/python benchmarks/small_to_big.py --out benchmarks/results/small_to_big.json

One knowledge base over the whole corpus holds every small index the strategies need: chunks
(flat chunks, parent-child, auto-merging, whole documents), sentences (sentence window),
extractive key sentences (the summary index without a model) and a RAPTOR tree with
extractive summaries; each strategy is a query setting on it. What each index costs is
measured on a sample of the documents (every ``--cost-every``-th), with one knowledge base per
small index, against chunks alone: ingest time, entries and disk size. Answer containment as in benchmarks/longdoc.py; nDCG@10 of the
document ranking on the corpus-wide Natural Questions.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from longdoc import contains, gold_windows, load_answers  # noqa: E402

from ragsift.eval.metrics import evaluate  # noqa: E402
from ragsift.kb import KnowledgeBase  # noqa: E402

INDEXES = {"chunks": ("chunks",), "+sentences": ("chunks", "sentences"), "+keysentences": ("chunks", "keysentences"),
           "+raptor": ("chunks", "raptor")}
ALL = ("chunks", "sentences", "keysentences", "raptor")
STRATEGIES = {  # name: query settings on the one knowledge base
    "flat chunks": {"unit": "child"},
    "parent-child": {"unit": "parent"},
    "sentence window (2)": {"index_kinds": ["sentence"], "unit": "window", "window_sentences": 2},
    "sentence window (5)": {"index_kinds": ["sentence"], "unit": "window", "window_sentences": 5},
    "auto-merging (0.5)": {"unit": "auto", "merge_threshold": 0.5},
    "key-sentence index": {"index_kinds": ["keys"], "unit": "parent"},
    "chunks + key sentences": {"index_kinds": ["chunk", "keys"], "unit": "parent"},
    "summary tree (collapsed)": {"index_kinds": ["chunk", "raptor"], "unit": "parent"},
    "whole documents": {"unit": "document"},
}


def disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="../shared/datasets/leval-longdoc-en")
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--budgets", default="500,1500")
    p.add_argument("--work-dir", default="/tmp/ragsift-bench/small2big")
    p.add_argument("--cost-every", type=int, default=8)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    ds = load_dataset(args.dataset)
    docs, answers = load_answers(ds)
    out: dict = {"date": time.strftime("%Y-%m-%d"), "dataset": args.dataset, "embedder": args.embedder,
                 "command": "python " + " ".join(sys.argv), "questions": len(answers), "indexes": {},
                 "rates": {}, "ndcg": {}, "latency_ms": {}}
    work = Path(args.work_dir)
    sample = work / "cost-sample.jsonl"
    work.mkdir(parents=True, exist_ok=True)
    with open(ds.corpus, encoding="utf-8") as f, open(sample, "w", encoding="utf-8") as g:
        for i, line in enumerate(f):
            if i % args.cost_every == 0:
                g.write(line)
    for name, small in INDEXES.items():  # the cost of each small index, on the sample
        path = work / f"cost-{name.strip('+')}"
        if path.exists():
            shutil.rmtree(path)
        kb = KnowledgeBase.open(path, embedder=args.embedder, small_index=small)
        t = time.perf_counter()
        report = kb.ingest(sample)
        st = kb.stats()
        out["indexes"][name] = {"small_index": list(small), "documents": st["documents"],
                                "seconds": round(time.perf_counter() - t, 1),
                                "embed_seconds": round(report.embed_seconds, 1), "parents": st["parents"],
                                "entries": st["children"], "disk_bytes": disk(path / "lance")}
        print(name, out["indexes"][name], flush=True)
    path = work / f"leval-{args.embedder}-all"
    if path.exists():
        shutil.rmtree(path)
    kb = KnowledgeBase.open(path, embedder=args.embedder, small_index=ALL)
    t = time.perf_counter()
    kb.ingest(ds.corpus)
    st = kb.stats()
    out["all"] = {"seconds": round(time.perf_counter() - t, 1), "parents": st["parents"], "entries": st["children"],
                  "disk_bytes": disk(path / "lance")}
    print("all", out["all"], flush=True)
    budgets = [int(b) for b in args.budgets.split(",")]
    for strategy, settings in STRATEGIES.items():
        for budget in budgets:
            hits: dict[str, list[int]] = {}
            run: dict[str, list[str]] = {}
            lat = []
            for a in answers:
                q = ds.queries[a["_id"]]
                flt = {"doc_id": a["doc_id"]} if a["query_scope"] == "doc" else None
                t = time.perf_counter()
                res = kb.query(q, filter=flt, token_budget=budget, max_passages=100, **settings)
                lat.append((time.perf_counter() - t) * 1000)
                ctx = "\n".join(x.text for x in res.passages)
                ok = contains(ctx, gold_windows(docs[a["doc_id"]], a["answer_char_spans"]))
                hits.setdefault(a["task"], []).append(int(ok))
                hits.setdefault("all", []).append(int(ok))
                if flt is None and budget == budgets[0]:
                    run[a["_id"]] = [d for d, _ in kb.rank_documents(q, k=10, **settings)]
            out["rates"][f"{strategy}@{budget}"] = {task: sum(v) / len(v) for task, v in hits.items()}
            out["latency_ms"][f"{strategy}@{budget}"] = round(sorted(lat)[len(lat) // 2], 1)
            if run:
                out["ndcg"][strategy] = evaluate(run, {q: ds.qrels[q] for q in run}, ["ndcg@10"])["ndcg@10"]
            print(f"{strategy:>28} @{budget:>5}: " + ", ".join(
                f"{k} {v:.3f}" for k, v in out["rates"][f"{strategy}@{budget}"].items()), flush=True)
    out["counts"] = {task: len(v) for task, v in hits.items()}
    write_result(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
