"""The hit columns of one generation's children (``Rows``), shared by every index of the
generation, and a search's result before hits are built (``SegmentHits``).

The columns (ids, offsets, language, kind) are read once per generation and kept as Arrow and
NumPy arrays, never as one Python object per row: a million children cost tens of megabytes, not
hundreds. Every index reads the table in the same order, so a row number means the same child in
all of them. ``IdIndex`` finds rows by string id; ``top_k`` picks the best positions of a score array."""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsift.store.base import StoredHit
from ragsift.text.lang import LANGUAGES

# BM25's statistics groups: each language of ``LANGUAGES``, then rows of no recorded language
# (written before rows had one), which never have statistics of their own
LANGUAGE_GROUPS = len(LANGUAGES) + 1
UNKNOWN_LANGUAGE = len(LANGUAGES)


class SegmentHits(NamedTuple):
    """One segment's best rows (row numbers) and their scores, best first. Hits (ids, strings) are
    built only for the rows that win the merge of every segment's results (``hits``)."""

    rows: Rows
    idx: np.ndarray
    scores: np.ndarray

    def hits(self) -> list[StoredHit]:
        return self.rows.hits(self.idx, self.scores)


NOTHING = np.zeros(0, np.int64)


class Rows:
    """The hit columns of one generation's children."""

    def __init__(self, tbl: pa.Table) -> None:
        n = self.n = tbl.num_rows
        self.child_ids = _strings(tbl, "child_id")
        self.parent_ids = _strings(tbl, "parent_id")
        self.doc_ids = _strings(tbl, "doc_id")
        self.starts = _ints(tbl, "start").astype(np.int32)
        self.ends = _ints(tbl, "end").astype(np.int32)
        self.langs, self.lang_names = _codes(tbl, "lang", n, "")
        self.kinds, self.kind_names = _codes(tbl, "kind", n, "chunk")
        # the store's own row ids (Lance ``_rowid``) in row order, when the scan gave them: a filter
        # the store evaluates comes back as row ids, mapped to rows by binary search on integers
        self.row_ids: np.ndarray | None = None
        self.ordered_row_ids: np.ndarray | None = None  # the row ids in row order
        if "_rowid" in tbl.column_names:
            ids = self.ordered_row_ids = np.asarray(tbl.column("_rowid").to_numpy(), np.uint64)
            self._row_order = None if n < 2 or bool((ids[1:] > ids[:-1]).all()) else np.argsort(ids)
            self.row_ids = ids if self._row_order is None else ids[self._row_order]
        # the generation that wrote each row (segments: which rows are live)
        self.gens = _ints(tbl, "gen") if "gen" in tbl.column_names else None
        self._documents: tuple[pa.Array, np.ndarray, np.ndarray] | None = None
        self._ids: IdIndex | None = None
        self._rows: dict[tuple[str, ...], np.ndarray | None] = {}
        self._groups: np.ndarray | None = None

    def documents(self) -> tuple[pa.Array, np.ndarray, np.ndarray]:
        """The documents of these rows: their ids, each row's position among them, and the
        generation each was written by (all rows of a document are written by one commit)."""
        if self._documents is None:
            assert self.gens is not None
            enc = pc.dictionary_encode(self.doc_ids)
            codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)
            gens = np.zeros(len(enc.dictionary), np.int64)
            gens[codes] = self.gens
            self._documents = (enc.dictionary, codes, gens)
        return self._documents

    def positions_of_row_ids(self, row_ids: np.ndarray) -> np.ndarray:
        """The row of each of the store's row ids, -1 where it is not one of these rows."""
        assert self.row_ids is not None
        q = np.asarray(row_ids, np.uint64)
        if not len(self.row_ids):
            return np.full(len(q), -1, np.int64)
        pos = np.minimum(np.searchsorted(self.row_ids, q), len(self.row_ids) - 1)
        hit = self.row_ids[pos] == q
        rows = pos if self._row_order is None else self._row_order[pos]
        return np.where(hit, rows, -1).astype(np.int64)

    def positions(self, child_ids: Sequence[str]) -> np.ndarray:
        """Row numbers of child ids (the look-up is built on first use: only filtered searches need it)."""
        if self._ids is None:
            self._ids = IdIndex(self.child_ids)
        rows = self._ids.rows(child_ids)
        return rows[rows >= 0].astype(np.int64)

    def rows_of_row_ids(self, row_ids: np.ndarray) -> np.ndarray:
        """Row numbers (sorted) of the store's row ids (``_rowid``); ids not in this generation are dropped."""
        rows = self.positions_of_row_ids(row_ids)
        return np.sort(rows[rows >= 0])

    def lang_groups(self) -> np.ndarray:
        """Each row's language as its position in ``LANGUAGES`` (BM25 keeps its statistics per
        language); a row of no recorded language (written before rows had one) is ``UNKNOWN_LANGUAGE``."""
        if self._groups is None:
            table = np.array([LANGUAGES.index(n) if n in LANGUAGES else UNKNOWN_LANGUAGE for n in self.lang_names],
                             np.int8)
            self._groups = table[self.langs] if self.n else np.zeros(0, np.int8)
        return self._groups

    def rows_of(self, kinds: Sequence[str]) -> np.ndarray | None:
        """Row numbers of the given kinds (None: every row)."""
        key = tuple(sorted(set(kinds)))
        if key not in self._rows:
            codes = [i for i, name in enumerate(self.kind_names) if name in key]
            mask = np.isin(self.kinds, codes)
            self._rows[key] = None if mask.all() else np.flatnonzero(mask)
        return self._rows[key]

    def found(self, rows: np.ndarray, scores: np.ndarray) -> SegmentHits:
        """These row numbers and their scores, in rank order: a search's result before hits are built."""
        return SegmentHits(self, np.asarray(rows, np.int64), np.asarray(scores))

    def hits(self, rows: np.ndarray, scores: np.ndarray) -> list[StoredHit]:
        """Hits for row numbers in rank order, with their scores."""
        if not len(rows):
            return []
        idx = pa.array(np.asarray(rows, np.int64))
        child, parent, doc = (a.take(idx).to_pylist() for a in (self.child_ids, self.parent_ids, self.doc_ids))
        starts, ends = self.starts[rows].tolist(), self.ends[rows].tolist()
        langs = [self.lang_names[c] for c in self.langs[rows].tolist()]
        return [StoredHit(child[j], parent[j], doc[j], s, starts[j], ends[j], langs[j])
                for j, s in enumerate(np.asarray(scores, np.float64).tolist())]


def _strings(tbl: pa.Table, name: str) -> pa.Array:
    col = tbl.column(name)
    return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)


def _ints(tbl: pa.Table, name: str) -> np.ndarray:
    return np.asarray(tbl.column(name).to_numpy(zero_copy_only=False), np.int64) if tbl.num_rows else \
        np.zeros(0, np.int64)


def _codes(tbl: pa.Table, name: str, n: int, default: str) -> tuple[np.ndarray, list[str]]:
    """A low-cardinality string column as small integer codes and the names they stand for."""
    if name not in tbl.column_names or n == 0:
        return np.zeros(n, np.int8), [default]
    enc = pc.dictionary_encode(pc.fill_null(tbl.column(name), default)).combine_chunks()
    names = [v or default for v in enc.dictionary.to_pylist()] or [default]
    return np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int16), names


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest scores, best first (ties in position order)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, np.int64)
    top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return top[np.lexsort((top, -scores[top]))]


class IdIndex:
    """Row numbers of string ids, by binary search over the sorted UTF-8 bytes of the ids (a
    NumPy array of fixed width: tens of bytes per row, no Python object per row)."""

    def __init__(self, ids: pa.Array) -> None:
        raw = [s.encode("utf-8") for s in ids.to_pylist()]
        self.width = max((len(b) for b in raw), default=1) or 1
        keys = np.array(raw, dtype=f"S{self.width}")
        del raw
        self.order = np.argsort(keys, kind="stable")
        self.keys = keys[self.order]

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """The row of each id, -1 where there is none."""
        raw = [s.encode("utf-8") for s in ids]
        fits = np.array([0 < len(b) <= self.width and not b.endswith(b"\0") for b in raw], bool)
        q = np.array([b if f else b"" for b, f in zip(raw, fits)], dtype=f"S{self.width}")
        pos = np.minimum(np.searchsorted(self.keys, q), max(len(self.keys) - 1, 0))
        hit = fits & (self.keys[pos] == q) if len(self.keys) else np.zeros(len(q), bool)
        return np.where(hit, self.order[pos] if len(self.keys) else -1, -1)
