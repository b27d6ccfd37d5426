"""Writing a retrieval set in BEIR form (what ``ragsift.eval.datasets.load_beir`` reads), shared by
the fetch scripts beside this file."""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def write_jsonl(path: Path, rows: Iterable[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_beir(out: Path, corpus: Iterable[dict], queries: Iterable[dict], qrels: Iterable[tuple[str, str]]) -> int:
    """``out``/corpus.jsonl, queries.jsonl and qrels/test.tsv (each (query id, document id) pair judged
    relevant, score 1); returns the number of judgements written."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "corpus.jsonl", corpus)
    write_jsonl(out / "queries.jsonl", queries)
    n = 0
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, did in qrels:
            f.write(f"{qid}\t{did}\t1\n")
            n += 1
    return n
