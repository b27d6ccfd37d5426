"""BEIR-format datasets: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

Any folder in that layout works: the bundled-with-BEIR sets, ones you download, your own.
"""
from __future__ import annotations

import csv
import io
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
    """The dataset in ``path``; a file that is missing, unreadable, not UTF-8 or malformed is an
    InputError naming it (and the line)."""
    path = Path(path)
    if not split or "/" in split or "\0" in split or len(split.encode("utf-8", "surrogateescape")) > 200:
        raise InputError(f"split {split[:60]!r} is not the name of a qrels file (qrels/<split>.tsv: test, dev...)")
    for need in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        try:
            there = (path / need).is_file()
        except OSError as e:
            raise InputError(f"cannot read {path / need}: {e.strerror or e}") from None
        if not there:
            raise InputError(f"{path} is not a BEIR-format folder: {need} is missing")
    queries: dict[str, str] = {}
    for n, line in enumerate(io.StringIO(_text(path / "queries.jsonl"), newline=None), 1):  # lines as open() splits
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row["text"], str):
                raise TypeError(f"'text' is {type(row['text']).__name__}, not a string")
            queries[str(row["_id"])] = row["text"]
        except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as e:
            raise InputError(f"{path / 'queries.jsonl'}:{n}: bad query row ({e})") from None
    qrels: dict[str, dict[str, int]] = {}
    qrels_file = io.StringIO(_text(path / "qrels" / f"{split}.tsv"), newline="")  # as csv wants
    rows = csv.reader(qrels_file, delimiter="\t")
    n = 0
    try:
        for n, row in enumerate(rows, 1):
            if not row or (n == 1 and row[0] in ("query-id", "query_id", "qid")):
                continue
            try:
                qid, did, score = row[0], row[1], int(float(row[2]))
            except (IndexError, ValueError, OverflowError):
                raise InputError(f"{path}/qrels/{split}.tsv:{n}: expected query-id, corpus-id, score") from None
            qrels.setdefault(qid, {})[did] = score
    except csv.Error as e:  # a NUL, a field past the csv module's limit
        raise InputError(f"{path}/qrels/{split}.tsv:{n + 1}: {e}") from None
    return Dataset(path.name, path, queries, qrels)


def _text(file: Path) -> str:
    try:
        with open(file, encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{file} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})") from None
    except OSError as e:
        raise InputError(f"cannot read {file}: {e.strerror or e}") from None
