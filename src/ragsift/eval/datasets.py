"""BEIR-format datasets: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

Any folder in that layout works: the bundled-with-BEIR sets, ones you download, your own.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from ragsift.errors import InputError


@dataclass(frozen=True)
class Dataset:
    name: str
    path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> graded relevance

    @property
    def corpus(self) -> Path:
        return self.path / "corpus.jsonl"


def load_beir(path: str | Path, split: str = "test") -> Dataset:
    path = Path(path)
    for need in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (path / need).exists():
            raise InputError(f"{path} is not a BEIR-format folder: {need} is missing")
    queries: dict[str, str] = {}
    with open(path / "queries.jsonl", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                queries[str(row["_id"])] = row["text"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise InputError(f"{path / 'queries.jsonl'}:{n}: bad query row ({e})") from None
    qrels: dict[str, dict[str, int]] = {}
    with open(path / "qrels" / f"{split}.tsv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t")
        for n, row in enumerate(reader, 1):
            if not row or (n == 1 and row[0] in ("query-id", "query_id", "qid")):
                continue
            try:
                qid, did, score = row[0], row[1], int(float(row[2]))
            except (IndexError, ValueError):
                raise InputError(f"{path}/qrels/{split}.tsv:{n}: expected query-id, corpus-id, score") from None
            qrels.setdefault(qid, {})[did] = score
    return Dataset(path.name, path, queries, qrels)
