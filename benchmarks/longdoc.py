"""Long documents: does the returned context contain the answer? Flat chunks against
parent-child against whole documents, at equal token budgets (L-Eval long-document QA).

For each question with a gold answer span (``answers.jsonl``: ``answer_char_spans`` are
[start, end) offsets into the document), the answer counts as contained when the packed
context holds the answer *at its gold place*: the span together with up to 15 characters
before it, or after it (whitespace-normalised), so a short answer such as "10" does not count
wherever the digits happen to appear. Qasper and CUAD questions only make sense inside
their document, so they run with the filter ``{"doc_id": <their document>}``; Natural
Questions run corpus-wide, where nDCG@10 of the document ranking is reported too.

    .venv/bin/python benchmarks/longdoc.py --out benchmarks/results/longdoc.json
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from harness import load_dataset, write_result

from ragsift.eval.metrics import evaluate
from ragsift.kb import KnowledgeBase

UNITS = ("child", "parent", "document")
CONTEXT = 15


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def gold_windows(doc: str, spans: list[list[int]]) -> list[tuple[str, str]]:
    """For each gold span: (up to CONTEXT characters before + answer, answer + up to CONTEXT
    characters after), squashed. One of the two must appear: a passage edge may cut the other."""
    return [(squash(doc[max(0, s - CONTEXT):e]), squash(doc[s:e + CONTEXT])) for s, e in spans]


def contains(context: str, windows: list[tuple[str, str]]) -> bool:
    ctx = squash(context)
    return any(left in ctx or right in ctx for left, right in windows)


def load_answers(ds) -> tuple[dict[str, str], list[dict]]:
    """The documents' texts, and the questions whose answer occurs verbatim (answers.jsonl)."""
    docs = {}
    with open(ds.corpus, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            docs[row["_id"]] = row["text"]
    with open(Path(ds.path) / "answers.jsonl", encoding="utf-8") as f:
        answers = [json.loads(line) for line in f]
    return docs, [a for a in answers if a["answer_char_spans"] and a["_id"] in ds.queries]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="../shared/datasets/leval-longdoc-en")
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--budgets", default="500,1500")
    p.add_argument("--work-dir", default="/tmp/ragsift-bench/longdoc")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    ds = load_dataset(args.dataset)
    docs, answers = load_answers(ds)
    kb = KnowledgeBase.open(Path(args.work_dir) / f"leval-{args.embedder}", embedder=args.embedder)
    t = time.perf_counter()
    kb.ingest(ds.corpus)
    st = kb.stats()
    print(f"{st['documents']} documents, {st['parents']} parents, {st['children']} children "
          f"(ingest {time.perf_counter() - t:.0f}s now)", flush=True)

    results: dict = {"date": time.strftime("%Y-%m-%d"), "dataset": args.dataset, "embedder": args.embedder,
                     "questions": len(answers), "parents": st["parents"], "children": st["children"],
                     "rates": {}, "ndcg": {}}
    budgets = [int(b) for b in args.budgets.split(",")]
    for budget in budgets:
        for unit in UNITS:
            hits: dict[str, list[int]] = {}
            run: dict[str, list[str]] = {}
            for a in answers:
                q = ds.queries[a["_id"]]
                flt = {"doc_id": a["doc_id"]} if a["query_scope"] == "doc" else None
                res = kb.query(q, filter=flt, unit=unit, token_budget=budget, max_passages=100)
                ctx = "\n".join(x.text for x in res.passages)
                ok = contains(ctx, gold_windows(docs[a["doc_id"]], a["answer_char_spans"]))
                hits.setdefault(a["task"], []).append(int(ok))
                hits.setdefault("all", []).append(int(ok))
                if flt is None and budget == budgets[0]:
                    run[a["_id"]] = [d for d, _ in kb.rank_documents(q, k=10, unit=unit)]
            results["rates"][f"{unit}@{budget}"] = {task: sum(v) / len(v) for task, v in hits.items()}
            if run:
                qrels = {q: ds.qrels[q] for q in run}
                results["ndcg"][unit] = evaluate(run, qrels, ["ndcg@10"])["ndcg@10"]
            print(f"budget {budget:>5} {unit:>8}: " + ", ".join(
                f"{k} {v:.3f}" for k, v in results["rates"][f"{unit}@{budget}"].items()), flush=True)
    results["counts"] = {task: len(v) for task, v in hits.items()}
    write_result(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
