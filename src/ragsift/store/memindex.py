"""In-memory search indexes of one committed generation, for the embedded store.

Each is built from the generation's children table the first time a search needs it and
answers without touching the table again:

- ``FlatIndex``: exact cosine search, the L2-normalised vectors as one float32 matrix.
- ``AnnIndex``: an HNSW graph (usearch) over int8-quantised vectors, its candidates re-ranked
  exactly with the full float32 vectors read from a memory-mapped file: the large-store path.
- ``BM25Index``: an inverted index (postings per term as CSR arrays with each posting's term
  frequency; weights are computed at query time from the statistics of every segment), so a query
  touches only its own terms' postings; searched by compiled code (``_bm25.c``) when the module is
  built, else by NumPy, to the same rows and float32 scores.
- ``SparseIndex``: learned sparse vectors as a CSR matrix, exact dot products.

The hit columns (ids, offsets, language, kind: ``Rows``) are read once per generation, shared by
every index, and kept as Arrow and NumPy arrays, never as one Python object per row: a million
children cost tens of megabytes, not hundreds. Every index reads the table in the same order,
so a row number means the same child in all of them.
"""
from __future__ import annotations

import mmap
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, NamedTuple, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsift.store.base import StoredHit
from ragsift.text.lang import LANGUAGES

try:  # BM25's search compiled (``_bm25.c``, built at install when a C compiler is there)
    import ragsift.store._bm25 as compiled_bm25
except ImportError:  # pragma: no cover - a build without a compiler: the NumPy path, same scores
    compiled_bm25 = None  # type: ignore[assignment]
try:  # the int8 exact pass's inner loop (``_scan.c``, built alike)
    import ragsift.store._scan as compiled_scan
except ImportError:  # pragma: no cover - without it an exact pass reads every row's float32 vector
    compiled_scan = None  # type: ignore[assignment]

# BM25's statistics groups: each language of ``LANGUAGES``, then rows of no recorded language
# (written before rows had one), which never have statistics of their own
LANGUAGE_GROUPS = len(LANGUAGES) + 1
UNKNOWN_LANGUAGE = len(LANGUAGES)

BM25_K1 = 1.2
BM25_B = 0.75


class Found(NamedTuple):
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

    def found(self, rows: np.ndarray, scores: np.ndarray) -> Found:
        """These row numbers and their scores, in rank order: a search's result before hits are built."""
        return Found(self, np.asarray(rows, np.int64), np.asarray(scores))

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


def _unit_rows(raw: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (raw / norms).astype(np.float32, copy=False)


def vectors_of(tbl: pa.Table, column: str, dim: int) -> np.ndarray:
    """A vector column as a matrix; null rows (of children deleted since: never searched) are zeros."""
    n = tbl.num_rows
    if not n:
        return np.zeros((0, dim), np.float32)
    col = tbl.column(column).combine_chunks()
    if col.null_count:
        out = np.zeros((n, dim), np.float32)
        valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), bool)
        out[valid] = np.asarray(col.filter(pa.array(valid)).flatten(), np.float32).reshape(-1, dim)
        return out
    return np.asarray(col.flatten(), dtype=np.float32).reshape(n, dim)


class FlatIndex:
    """Exact cosine search over one generation's L2-normalised vectors held in memory."""

    def __init__(self, rows: Rows, table: Callable[[], pa.Table], column: str, dim: int,
                 directory: Path | None = None) -> None:
        self.rows = rows
        path = directory / "vectors.f32" if directory is not None else None
        if path is not None and path.exists():  # saved: mapped (the page cache holds it, shared)
            self.matrix = np.memmap(path, np.float32, mode="r", shape=(rows.n, dim)) if rows.n else \
                np.zeros((0, dim), np.float32)
            return
        self.matrix = _unit_rows(vectors_of(table(), column, dim))  # a new array: arrow's buffer stays untouched
        if directory is not None:
            with saved_folder(directory) as tmp:
                self.matrix.tofile(tmp / "vectors.f32")

    def search(self, vector: np.ndarray, k: int, rows: np.ndarray | None) -> Found:
        v = (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
        matrix = self.matrix if rows is None else self.matrix[rows]
        if matrix.shape[0] == 0:
            return self.rows.found(NOTHING, NOTHING)
        scores = matrix @ v
        top = top_k(scores, k)
        return self.rows.found(top if rows is None else rows[top], scores[top])


class AnnIndex:
    """HNSW over int8-quantised unit vectors (usearch), candidates re-ranked exactly.

    Built once per generation and saved under ``directory`` (the graph, the full vectors as a
    float32 file, and an int8 copy of them for exact passes): later processes map them from disk
    instead of building again. The graph lives in memory (about 1 byte per dimension per child
    plus the links); the full vectors stay on disk and only the candidates' pages are read; the
    int8 copy is read by exact passes over a filter's rows (a quarter of the float32 bytes), whose
    best approximate rows are then scored exactly from the full vectors; over a large filter a
    4-bit copy (an eighth of the bytes) ranks the rows first for the int8 pass.
    """

    # Links per node and build breadth: 16 / 128 reached only 0.95 recall@10 at 100k real-text
    # vectors however wide the search; 32 / 256 reach 0.98 (benchmarks/ann_recall.py)
    CONNECTIVITY = 32
    EXPANSION_ADD = 256
    MAPPED_ROWS = 2048  # from this many rows on, vectors are read from the map, not row by row
    EXACT_PER_CANDIDATE = 13  # exact float32 rows a graph candidate costs as much as at 200,000 (see search)
    INT8_SPEEDUP = 5  # an int8 row costs a fifth of a float32 row (benchmarks/exact_pass.py: 5.1x to 6.1x)
    EXACT_PREFERRED = 2.0  # an exact pass is taken while it costs up to this many times the graph's search
    SCORE_BLOCK = 4096  # rows gathered and scored at a time in an exact pass (6 MB at 384 dimensions)
    # an exact pass over more rows than this reads their int8 copy and re-scores its best rows
    # (RESCORE at least, or the graph's k * refine) from the full vectors: from a few hundred rows on,
    # one read of a full vector per row costs more (benchmarks/exact_pass.py, 1,000 rows)
    INT8_ROWS = 512
    RESCORE = 200
    # an exact pass over more rows than this first ranks them by their 4-bit copy and keeps the best
    # INT4_KEEP (or one in INT4_SHARE) for the int8 pass: the true ten best of a 50% filter at a
    # million rank within the first hundred under the 4-bit scores (Int4Copy)
    INT4_ROWS = 32_768
    INT4_KEEP = 4096
    INT4_SHARE = 128

    def __init__(self, rows: Rows, table: Callable[[], pa.Table], column: str, dim: int, directory: Path,
                 expansion: int, refine: int) -> None:
        from usearch.index import Index

        self.rows, self.n = rows, rows.n
        self.expansion, self.refine = expansion, refine
        graph, full = directory / "graph.usearch", directory / "vectors.f32"
        if not (graph.exists() and full.exists()):  # read the vectors only to build
            _build_ann(table(), column, dim, directory, self.CONNECTIVITY, self.EXPANSION_ADD)
        # mapped, not copied: the graph's pages are shared with the page cache and read as searches touch them
        self.index = cast("Index", Index.restore(str(graph), view=True))  # None only for a file without metadata
        self.index.expansion_search = expansion  # type: ignore[misc]  # usearch declares its setter apart
        # the full vectors are read row by row for the re-rank (pread, not a memory map: a map's
        # read-ahead made a gigabyte of them resident after a hundred queries at a million children)
        self.dim = dim
        self._fd = os.open(full, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self._finalizer = weakref.finalize(self, os.close, self._fd)
        # many rows at once (an exact search over a filter's rows), or any rows where there is no
        # pread (Windows), are taken from a map without read-ahead: one system call per row costs
        # more than the page faults
        # (public, with ``int8``, ``int4`` and ``exact_scores``, for benchmarks/exact_pass.py and sign_bits.py)
        self.mapped = np.frombuffer(_random_access_map(full), np.float32).reshape(-1, dim) if self.n else None
        self.int8 = Int8Copy.open(directory, full, dim) if self.n and compiled_scan is not None else None
        self.int4 = Int4Copy.open(directory, full, dim) if self.int8 is not None else None

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The full vectors of these rows (sorted), read from the saved file."""
        if self.mapped is not None and (len(rows) > self.MAPPED_ROWS or not hasattr(os, "pread")):
            return self.mapped[rows]
        size = self.dim * 4
        buf = b"".join(os.pread(self._fd, size, int(r) * size) for r in rows)
        return np.frombuffer(buf, np.float32).reshape(len(rows), self.dim)

    def exact_scores(self, rows: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The cosine of each of these rows (sorted) with the unit vector ``v``. Many rows are
        gathered from the map a block at a time, each block multiplied while it is in the cache:
        the rows cross memory once, not three times (gathered whole, written, read again)."""
        if self.mapped is None or len(rows) <= self.SCORE_BLOCK:
            return self.vectors(rows) @ v
        out = np.empty(len(rows), np.float32)
        for start in range(0, len(rows), self.SCORE_BLOCK):
            part = rows[start:start + self.SCORE_BLOCK]
            out[start:start + len(part)] = self.mapped[part] @ v
        return out

    def search(self, vector: np.ndarray, k: int, rows: np.ndarray | None) -> Found:
        """The k nearest rows (of ``rows``, when given: a filter's rows, sorted).

        A filter keeping m of the n rows is searched one of two ways: exactly over its m rows (cost
        ~ m), or in the graph as broadly as the filter narrows it (a search ``expansion / share``
        wide, so as many allowed candidates are seen as an unfiltered search sees; cost ~
        expansion * n / m). The exact pass's hits are the true best, the graph's approximate, so
        the exact pass is taken while it costs up to ``EXACT_PREFERRED`` times the graph's search:
        while m^2 < 2 * c(n) * expansion * n, where c(n), the rows a graph candidate costs as much
        as, is 13 float32 rows at 200,000 children and grows as sqrt(n) (a larger graph, more cache
        misses), and five times as many int8 rows. Measured at a million children
        (benchmarks/exact_pass.py, benchmarks/filtered.py): a float32 row 0.43 us, an int8 row
        0.06-0.09 us, a graph candidate about 16 us (a 50% filter's dense query: 45 ms for 2,058
        candidates, the embedding and the query path's ~12 ms aside): 37 float32 rows a candidate
        where the constant gives 29, so the rule leans a little to the graph. With the int8 copy a filter
        is exact up to 545,000 rows at a million children (a 50% filter: 47 ms dense p50 exact,
        45 ms in the graph, whose recall@10 on benchmarks/filtered.py's vectors is 0.888), up to
        163,000 at 200,000."""
        v = (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
        want = max(k * self.refine, k)
        per_candidate = self.EXACT_PER_CANDIDATE * max(1.0, self.n / 200_000) ** 0.5
        if self.int8 is not None:
            per_candidate *= self.INT8_SPEEDUP
        if rows is not None and len(rows) ** 2 < self.EXACT_PREFERRED * per_candidate * self.expansion * self.n:
            order = rows  # exact over the filter's rows (sorted, as the store keeps them)
        else:
            count = want
            if rows is not None:  # search as broadly as the filter narrows the graph
                count = int(max(want, self.expansion) * self.n / max(len(rows), 1)) + k
            found = self.index.search(v, min(count, self.n), exact=False)
            cand = np.asarray(found.keys, np.int64)
            if rows is not None:
                cand = cand[np.isin(cand, rows)][:want]  # the best allowed candidates, in graph order
                if len(cand) < min(k, len(rows)):
                    cand = rows
            order = np.sort(cand)  # read the vectors in file order
        if not len(order):
            return self.rows.found(NOTHING, NOTHING)
        if self.int4 is not None and len(order) > self.INT4_ROWS:
            order = self.int4.best(order, v, max(self.INT4_KEEP, len(order) // self.INT4_SHARE, want))
        if self.int8 is not None and len(order) > max(self.INT8_ROWS, self.RESCORE, want):
            order = self.int8.best(order, v, max(self.RESCORE, want))
        scores = self.exact_scores(order, v)
        top = top_k(scores, k)
        return self.rows.found(order[top], scores[top])


class Int8Copy:
    """Every row of an ``AnnIndex`` as int8 (``vectors.i8``, memory-mapped), each dimension scaled
    by 127 over its largest magnitude (``vectors.i8.scales``, float32): an approximate score per
    row at a quarter of the bytes an exact pass reads. Written with the graph, or from the full
    vectors the first time an index saved without it is opened (where the folder can be written)."""

    def __init__(self, matrix: mmap.mmap, scales: np.ndarray) -> None:
        self.matrix, self.scales = matrix, scales
        # the query's largest int16 value: no sum over the dimensions can leave int32 (128 * dim * it)
        self.query_max = min(32767, (2**31 - 1) // (128 * len(scales)))

    @classmethod
    def open(cls, directory: Path, full: Path, dim: int) -> Int8Copy | None:
        # where it cannot be written or read, exact passes read the full vectors
        opened = _saved_copy(directory / "vectors.i8", directory / "vectors.i8.scales",
                             lambda: _write_int8(full, dim, directory))
        if opened is None:
            return None
        matrix, factors = opened
        if len(factors) != dim or len(matrix) != full.stat().st_size // 4:  # not this index's copy
            return None
        return cls(matrix, factors)

    def quantised(self, v: np.ndarray) -> np.ndarray:
        """The unit query in int16, such that the int8 rows times it rank as the rows' cosines."""
        u = v.astype(np.float64) / self.scales
        top = float(np.abs(u).max()) or 1.0
        return np.rint(u * (self.query_max / top)).astype(np.int16)

    def best(self, rows: np.ndarray, v: np.ndarray, count: int) -> np.ndarray:
        """The ``count`` rows (of these, sorted) of highest approximate score, sorted."""
        assert compiled_scan is not None
        approx = np.empty(len(rows), np.int32)
        _split_scan(compiled_scan.scores, self.matrix, rows, self.quantised(v), approx)
        return np.sort(rows[_top_positions(approx, count)])


class Int4Copy:
    """Every row of an ``AnnIndex`` as 4-bit codes (``vectors.u4``, memory-mapped; half the int8
    copy's bytes): a first pass over a large filter's rows whose best few the int8 pass ranks again.
    Each dimension is centred on its mean and cut into 16 steps over 2.5 standard deviations either
    side (``vectors.u4.params``: each dimension's lowest value, then its step, float32); codes are
    packed two to a byte in blocks of 64 dimensions (``_scan.c``'s ``scores4`` reads them so).

    On a million vectors of ``benchmarks/filtered.py`` a 50% filter's true ten best rank at most
    42nd of 500,000 under these scores, on SciFact's 9,416 real-text children at most 19th
    (benchmarks/sign_bits.py), where this pass keeps thousands of rows; a 50% filter's dense pass at
    a million 23.5 -> 10.8 ms (benchmarks/exact_pass.py)."""

    def __init__(self, matrix: mmap.mmap, low: np.ndarray, step: np.ndarray) -> None:
        self.matrix, self.low, self.step = matrix, low, step
        self.dim = len(low)
        self.row_bytes = _int4_row_bytes(self.dim)
        self.n = len(matrix) // self.row_bytes
        self._all: np.ndarray | None = None

    @classmethod
    def open(cls, directory: Path, full: Path, dim: int) -> Int4Copy | None:
        # where it cannot be written or read, the int8 pass reads every row
        opened = _saved_copy(directory / "vectors.u4", directory / "vectors.u4.params",
                             lambda: _write_int4(full, dim, directory))
        if opened is None:
            return None
        matrix, values = opened
        if len(values) != 2 * dim or len(matrix) != (full.stat().st_size // (4 * dim)) * _int4_row_bytes(dim):
            return None  # not this index's copy
        return cls(matrix, values[:dim], values[dim:])

    def quantised(self, v: np.ndarray) -> np.ndarray:
        """The unit query as int8 weights of the codes (padded to the copy's dimensions): the codes
        times them rank the rows as the rows' cosines, up to the codes' rounding (the lowest values'
        share is the same for every row)."""
        w = np.zeros(2 * self.row_bytes, np.float64)
        w[:self.dim] = v.astype(np.float64) * self.step
        top = float(np.abs(w).max()) or 1.0
        return np.rint(w * (127.0 / top)).astype(np.int8)

    # a filter keeping more than this share of the rows is scanned whole, in file order, and its
    # rows' scores taken after: a scan in file order reads three times as many rows a millisecond
    # as one that skips (a million rows 10 ms, half of them at random 15 ms, one thread)
    WHOLE_SHARE = 1 / 3

    def best(self, rows: np.ndarray, v: np.ndarray, count: int) -> np.ndarray:
        """The ``count`` rows (of these, sorted) of highest approximate score, sorted."""
        assert compiled_scan is not None
        q = self.quantised(v)
        if len(rows) > self.WHOLE_SHARE * self.n:
            if self._all is None:
                self._all = np.arange(self.n, dtype=np.int64)
            every = np.empty(self.n, np.int32)
            _split_scan(compiled_scan.scores4, self.matrix, self._all, q, every)
            approx = every[rows]
        else:
            approx = np.empty(len(rows), np.int32)
            _split_scan(compiled_scan.scores4, self.matrix, rows, q, approx)
        return np.sort(rows[_top_positions(approx, count)])


def _saved_copy(path: Path, side: Path, write: Callable[[], None]) -> tuple[mmap.mmap, np.ndarray] | None:
    """A copy of an index's vectors saved at ``path`` (``write`` writes it and its float32 side
    file first where it is not there), mapped, and the side file's values; None where the folder
    may not be written or the files not read."""
    try:
        if not path.exists():
            write()
        return _random_access_map(path), np.fromfile(side, np.float32)
    except OSError:
        return None


def _int4_row_bytes(dim: int) -> int:
    return -(-dim // 64) * 32


# a pass is split among the cores (SCAN_THREADS at most) into parts of at least this many rows
# (from 131,072 rows on): one core reads about 6 GB/s here, two 1.8-2x that (500,000 rows: 45-55
# ms in one thread, 25 ms in two; a 50% filter's dense query at a million, benchmarks/filtered.py:
# 1.76x faster)
SPLIT_ROWS = 65_536
SCAN_THREADS = 4


def _split_scan(scan: Callable[[object, np.ndarray, np.ndarray, np.ndarray], None], matrix: mmap.mmap,
                rows: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``scan(matrix, rows, q, out)`` (a compiled scan, which releases the GIL) split among the
    cores: the parts run at once, this thread scans the last."""
    parts = min(SCAN_THREADS, _cores(), max(1, len(rows) // SPLIT_ROWS))
    if parts < 2:
        scan(matrix, rows, q, out)
        return
    bounds = np.linspace(0, len(rows), parts + 1).astype(np.int64)
    pool = _scan_pool(SCAN_THREADS - 1)
    futures = [pool.submit(scan, matrix, rows[a:b], q, out[a:b]) for a, b in zip(bounds[:-2], bounds[1:-1])]
    scan(matrix, rows[bounds[-2]:], q, out[bounds[-2]:])
    for f in futures:
        f.result()


def _top_positions(scores: np.ndarray, count: int) -> np.ndarray:
    """The positions of the ``count`` highest scores (in no order; ties at the cut broken as
    ``np.argpartition`` breaks them). Many scores: a threshold from a strided sample first keeps
    about twice ``count`` of them, the partition runs on those (a partition of 500,000 int32 takes 6
    ms; this, about 1); where the threshold keeps too few, the whole partition."""
    n = len(scores)
    if count >= n:
        return np.arange(n)
    if n >= 16 * count and n >= 65_536:
        sample = scores[::max(1, n // 65_536)]
        rank = min(len(sample) - 1, 2 * count * len(sample) // n + 16)
        threshold = np.partition(sample, len(sample) - 1 - rank)[len(sample) - 1 - rank]
        kept = np.flatnonzero(scores >= threshold)
        if count <= len(kept) <= 16 * count:
            return kept[np.argpartition(scores[kept], len(kept) - count)[len(kept) - count:]]
    return np.argpartition(scores, n - count)[n - count:]


def _cores() -> int:
    return os.cpu_count() or 1


_scan_pools: dict[int, ThreadPoolExecutor] = {}
_scan_pools_lock = threading.Lock()


def _scan_pool(threads: int) -> ThreadPoolExecutor:
    """The threads that scan the other parts of a split pass: one pool per process, of at most
    ``threads`` (started as parts need them), made at first use in the process that uses it (a
    worker forked after it makes its own)."""
    pid = os.getpid()
    with _scan_pools_lock:
        pool = _scan_pools.get(pid)
        if pool is None:
            pool = _scan_pools[pid] = ThreadPoolExecutor(max(1, threads), thread_name_prefix="ragsift-scan")
        return pool


def _write_int8(full: Path, dim: int, directory: Path) -> None:
    """The int8 copy of the float32 vectors in ``full``, written into ``directory`` (the scales
    first, the matrix last by one rename: a reader finds both or neither)."""
    vectors = np.memmap(full, np.float32, mode="r").reshape(-1, dim)
    step = 65_536
    top = np.zeros(dim, np.float32)
    for start in range(0, len(vectors), step):
        np.maximum(top, np.abs(vectors[start:start + step]).max(axis=0), out=top)
    scales = (127.0 / np.where(top > 0, top, 127.0)).astype(np.float32)  # 1 where a dimension is all zeros
    with _replacing(directory / "vectors.i8.scales") as out:
        out.write(scales.tobytes())
    with _replacing(directory / "vectors.i8") as out:
        for start in range(0, len(vectors), step):
            part = np.rint(vectors[start:start + step] * scales)
            out.write(np.clip(part, -127, 127).astype(np.int8).tobytes())


def _write_int4(full: Path, dim: int, directory: Path) -> None:
    """The 4-bit copy of the float32 vectors in ``full`` (``Int4Copy``), written into ``directory``
    (the parameters first, the codes last by one rename)."""
    vectors = np.memmap(full, np.float32, mode="r").reshape(-1, dim)
    step_rows = 65_536
    total, squares = np.zeros(dim, np.float64), np.zeros(dim, np.float64)
    for start in range(0, len(vectors), step_rows):
        part = vectors[start:start + step_rows].astype(np.float64)
        total += part.sum(axis=0)
        squares += (part * part).sum(axis=0)
    n = max(len(vectors), 1)
    mean = total / n
    sd = np.sqrt(np.maximum(squares / n - mean * mean, 0.0))
    low = (mean - 2.5 * sd).astype(np.float32)
    step = np.where(sd > 0, 5.0 * sd / 15.0, 1.0).astype(np.float32)  # 1 where a dimension never varies
    padded = 2 * _int4_row_bytes(dim)
    with _replacing(directory / "vectors.u4.params") as out:
        out.write(np.concatenate([low, step]).tobytes())
    with _replacing(directory / "vectors.u4") as out:
        for start in range(0, len(vectors), step_rows):
            codes = np.clip(np.rint((vectors[start:start + step_rows] - low) / step), 0, 15).astype(np.uint8)
            codes = np.pad(codes, ((0, 0), (0, padded - dim))).reshape(len(codes), -1, 2, 32)
            out.write((codes[:, :, 0, :] | (codes[:, :, 1, :] << 4)).tobytes())


@contextmanager
def _replacing(path: Path) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` whole when done (one rename), or leaves it as it was."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _build_ann(tbl: pa.Table, column: str, dim: int, directory: Path, connectivity: int,
               expansion_add: int) -> None:
    from usearch.index import Index

    with saved_folder(directory) as tmp:
        n = tbl.num_rows
        full = np.memmap(tmp / "vectors.f32", dtype=np.float32, mode="w+", shape=(max(n, 1), dim))
        index = Index(ndim=dim, metric="cos", dtype="i8", connectivity=connectivity, expansion_add=expansion_add)
        step = 65_536
        # one thread below a few slices: the same graph on every build (threads insert in any order)
        threads = (os.cpu_count() or 1) if n > 4 * step else 1
        for start in range(0, n, step):  # a slice at a time: no second full copy of the vectors
            part = _unit_rows(vectors_of(tbl.slice(start, step), column, dim))
            full[start:start + len(part)] = part
            keys = np.arange(start, start + len(part), dtype=np.uint64)
            held = part.any(axis=1)  # rows deleted since the segment was read come as zeros: not in the graph
            if not held.all():
                keys, part = keys[held], part[held]
            index.add(keys, part, threads=threads)
        full.flush()
        del full
        index.save(str(tmp / "graph.usearch"))
        _write_int8(tmp / "vectors.f32", dim, tmp)
        _write_int4(tmp / "vectors.f32", dim, tmp)


@contextmanager
def saved_folder(directory: Path) -> Iterator[Path]:
    """A folder to fill that becomes ``directory`` whole (one rename) or not at all: readers never
    see half a saved index. Where another process saved it first, theirs stays."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=directory.parent))
    try:
        yield tmp
        try:
            tmp.rename(directory)
        except OSError:  # saved by another process meanwhile
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class BM25Index:
    """BM25 postings of one segment (k1 1.2, b 0.75; idf ln(1 + (N - df + 0.5) / (df + 0.5))).

    Postings are CSR arrays per term: the row of each posting and its term frequency; each row's
    length is kept beside them. The statistics a score needs (N, the average length, a term's
    document frequency) are the caller's (``ragsift.store.segments.BM25Stats``: global over every
    segment's live rows), so each weight ``tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen))`` is
    computed at query time from the row's normalisation ``norm`` and the term's frequency. A
    query adds its terms in the order it is given (the same for every segment): a row's score is
    the same float32 sum whichever segments it is split into.

    In a base of several languages the statistics are kept per language (``Rows.lang_groups``): a
    term's weight is then one idf per language (an array), a row takes its own language's, and
    ``norm`` holds each row's normalisation under its own language's average length.
    """

    BLOCK = 131_072  # rows tokenised at a time: the transient memory of a build stays bounded
    ARRAYS = ("post_rows", "post_tf", "indptr", "df", "max_tf", "min_dl", "dl")

    def __init__(self, rows: Rows, table: Callable[[], pa.Table], directory: Path | None = None) -> None:
        self.rows = rows
        self.n = rows.n
        self._local = threading.local()
        if directory is not None and (directory / "vocab.arrow").exists():
            self._load(directory)
            return
        self._build(pc.fill_null(table().column("terms"), ""))
        if directory is not None:
            self._save(directory)

    def _build(self, terms: pa.ChunkedArray) -> None:
        n = self.n
        vocab: dict[str, int] = {}
        blocks = []  # per block of rows: (term, row, tf) sorted by term, then row
        dl = np.zeros(n, np.float32)
        for start in range(0, n, self.BLOCK):
            part = terms.slice(start, self.BLOCK)
            m = len(part)
            tokens = pc.split_pattern(part, " ").combine_chunks()
            lengths = np.asarray(pc.list_value_length(tokens).fill_null(0).to_numpy(zero_copy_only=False), np.int64)
            flat = tokens.flatten()
            doc = np.repeat(np.arange(m, dtype=np.int64), lengths)
            keep = np.asarray(pc.not_equal(flat, "").fill_null(False).to_numpy(zero_copy_only=False), bool)
            if not keep.all():
                flat, doc = flat.filter(pa.array(keep)), doc[keep]
            enc = pc.dictionary_encode(flat)
            words = enc.dictionary.to_pylist()
            remap = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), np.int64, len(words))
            tid = remap[np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)]
            del flat, enc, tokens, words
            dl[start:start + m] = np.bincount(doc, minlength=m)
            key, tf = np.unique(tid * m + doc, return_counts=True)
            del tid, doc
            blocks.append(((key // m).astype(np.int32), (key % m + start).astype(np.int32),
                           np.minimum(tf, 65_535).astype(np.uint16)))
            del key, tf
        counts = np.zeros(len(vocab), np.int64)
        for t, _, _ in blocks:
            counts += np.bincount(t, minlength=len(vocab))
        self.indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        total = int(self.indptr[-1])
        self.post_rows = np.empty(total, np.int32)
        self.post_tf = np.empty(total, np.uint16)
        fill = self.indptr[:-1].copy()
        while blocks:  # blocks in row order: each term's postings stay sorted by row
            t, d, f = blocks.pop(0)
            uniq, first, cnt = np.unique(t, return_index=True, return_counts=True)
            pos = fill[t] + (np.arange(len(t)) - np.repeat(first, cnt))
            self.post_rows[pos] = d
            self.post_tf[pos] = f
            fill[uniq] += cnt
        self.dl = dl
        self.df = counts
        # each term's largest frequency and shortest row: the bound MaxScore prunes with
        if total:
            self.max_tf = np.maximum.reduceat(self.post_tf, self.indptr[:-1])
            self.min_dl = np.minimum.reduceat(dl[self.post_rows], self.indptr[:-1])
        else:
            self.max_tf, self.min_dl = np.zeros(len(vocab), np.uint16), np.zeros(len(vocab), np.float32)
        self.vocab = vocab

    def _save(self, directory: Path) -> None:
        with saved_folder(directory) as tmp:
            for name in self.ARRAYS:
                np.save(tmp / f"{name}.npy", getattr(self, name))
            words = pa.array(list(self.vocab), pa.large_string())
            schema = pa.schema([("w", words.type)])
            with pa.OSFile(str(tmp / "vocab.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as w:
                w.write_table(pa.table({"w": words}))

    def _load(self, directory: Path) -> None:
        for name in self.ARRAYS:
            setattr(self, name, np.load(directory / f"{name}.npy", mmap_mode="r"))
        self.dl = np.asarray(self.dl)  # read whole by every generation's statistics
        words = pa.ipc.open_file(pa.memory_map(str(directory / "vocab.arrow"))).read_all().column("w").to_pylist()
        self.vocab = {w: i for i, w in enumerate(words)}

    def live_df(self, term: str, live: np.ndarray | None) -> int:
        """How many of the live rows (a mask; None: all) hold ``term``."""
        i = self.vocab.get(term)
        if i is None:
            return 0
        if live is None:
            return int(self.df[i])
        return int(live[self.post_rows[int(self.indptr[i]):int(self.indptr[i + 1])]].sum())

    def live_df_by_language(self, term: str, live: np.ndarray | None) -> np.ndarray:
        """How many of the live rows of each language (``Rows.lang_groups``' codes) hold ``term``."""
        i = self.vocab.get(term)
        if i is None:
            return np.zeros(LANGUAGE_GROUPS, np.int64)
        rows = np.asarray(self.post_rows[int(self.indptr[i]):int(self.indptr[i + 1])])
        if live is not None:
            rows = rows[live[rows]]
        return np.bincount(self.rows.lang_groups()[rows], minlength=LANGUAGE_GROUPS)

    def _row_weight(self, w: float | np.ndarray, rows: np.ndarray) -> float | np.ndarray:
        """A term's weight for these rows: the term's one weight, or each row's language's."""
        return w if isinstance(w, float) else np.asarray(w)[self.rows.lang_groups()[rows]]

    def _accumulate(self, acc: np.ndarray, i: int, w: float | np.ndarray, norm: np.ndarray) -> np.ndarray:
        """Add term ``i``'s weights (``w``: the term's) under these row normalisations to its
        postings' rows in ``acc``; the rows it held 0 for (not seen yet: every weight is > 0)."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        found = np.asarray(self.post_rows[a:b])
        weights = weigh(self.post_tf[a:b], norm[found], self._row_weight(w, found))
        before = acc[found]
        new = found[before == 0]
        before += weights
        acc[found] = before  # rows are unique within a term
        return new

    def _search_compiled(self, local: list[tuple[int, float | np.ndarray]], k: int, rows: np.ndarray | None,
                         norm: np.ndarray, rest: np.ndarray, read: np.ndarray, floor: float) -> Found:
        """``search`` by the compiled module: the same steps, rows and float32 scores."""
        assert compiled_bm25 is not None
        scratch = self._scratch()
        terms = np.array([i for i, _ in local], np.int64)
        if all(isinstance(w, float) for _, w in local):
            wks = np.array([_times_k1(w) for _, w in local], np.float32)
            groups = _NO_GROUPS
        else:  # one weight per language for every term
            wks = np.stack([np.broadcast_to(_times_k1(w), (LANGUAGE_GROUPS,)) for _, w in local])
            groups = self.rows.lang_groups()
        allowed = _NO_ROWS
        if rows is not None:
            allowed = scratch.allowed
            allowed[rows] = True
        out_rows, out_scores = np.empty(k, np.int64), np.empty(k, np.float32)
        try:
            m = compiled_bm25.search(self.post_rows, self.post_tf, self.indptr, terms, wks, groups, norm, scratch.acc,
                                     allowed, scratch.member, rest, read, out_rows, out_scores, k, float(floor))
        finally:
            if rows is not None:
                allowed[rows] = False
        return self.rows.found(out_rows[:m], out_scores[:m])

    def search(self, items: Sequence[tuple[str, float | np.ndarray]], k: int, rows: np.ndarray | None,
               norm: np.ndarray, avgdl: float | np.ndarray, floor: float = -1.0) -> Found:
        """The k best rows (of ``rows`` when given), exactly, without reading every posting of
        common terms (MaxScore). ``items``: the query's terms and weights in the order to add them.
        ``floor``: a score k rows elsewhere (other segments) already reach; rows that cannot reach
        it may be left out. With statistics per language, a weight and ``avgdl`` are arrays (one
        value per language).

        Once the k-th best score of the rows seen so far (counting only the terms read) beats the
        most a row seen by none of them could score (the sum of the unread terms' bounds), no
        unseen row can enter the top k: the rows seen (less those that cannot reach the k-th best
        even with every unread term's bound) get the unread terms' weights, by binary search in
        those terms' postings or by reading a common term's postings whole, whichever costs less,
        term after term in the same order (the same float32 sum as reading every posting).
        """
        local = [(self.vocab[t], w) for t, w in items if t in self.vocab]
        if not local or k <= 0:
            return self.rows.found(NOTHING, NOTHING)
        bounds = np.array([self._bound(i, w, avgdl) for i, w in local])
        rest = np.concatenate((np.cumsum(bounds[::-1])[::-1], [0.0]))  # rest[j]: bound of terms j..
        read = np.cumsum(bounds) * (1 + 1e-5)  # read[j]: the most a row can score from terms ..j
        if compiled_bm25 is not None:
            return self._search_compiled(local, k, rows, norm, rest, read, floor)
        scratch = self._scratch()
        acc = scratch.acc  # zero outside the rows touched, which are zeroed again before returning
        touched: list[np.ndarray] = []
        allowed = None
        if rows is not None:
            allowed = scratch.allowed
            allowed[rows] = True
        try:
            parts: list[np.ndarray] = []  # the allowed rows seen, each once
            for j, (i, w) in enumerate(local):
                new = self._accumulate(acc, i, w, norm)
                touched.append(new)
                parts.append(new if allowed is None else new[allowed[new]])
                if j + 1 == len(local):
                    break
                if read[j] <= rest[j + 1] and floor <= rest[j + 1]:
                    continue  # no row seen can yet beat the unread terms' bound: no cut possible
                ok = np.concatenate(parts) if len(parts) > 1 else parts[0]
                parts = [ok]
                # the cut needs k rows above the unread terms' bound (or the floor above it): the
                # k-th best is looked for among those rows only
                high = acc[ok]
                high = high[high > rest[j + 1]]
                theta = float(np.partition(high, len(high) - k)[len(high) - k]) if len(high) >= k else -1.0
                theta = max(theta, floor)
                if theta > rest[j + 1]:
                    parts = [self._complete(acc, ok, local, j + 1, rest, theta, norm, scratch.member)]
                    break
            ok = np.concatenate(parts) if len(parts) > 1 else parts[0]
            scores = acc[ok]
            if len(ok) > k:  # the rows that can be among the k best (ties at the k-th included)
                keep = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]
                ok, scores = ok[keep], scores[keep]
            order = np.lexsort((ok, -scores))[:k]  # best first, ties in row order
            return self.rows.found(ok[order].astype(np.int64), scores[order])
        finally:
            if sum(len(t) for t in touched) > self.n // 16:
                acc.fill(0)
            else:
                for t in touched:
                    acc[t] = 0
            if rows is not None:
                allowed[rows] = False  # type: ignore[index]

    def _complete(self, acc: np.ndarray, ok: np.ndarray, local: list[tuple[int, float | np.ndarray]], first: int,
                  rest: np.ndarray, theta: float, norm: np.ndarray, member: np.ndarray) -> np.ndarray:
        """Add terms ``first``.. to the rows ``ok`` in order, dropping before each term the rows that
        cannot reach ``theta`` with every unread term's bound; the rows left (sorted)."""
        for j2 in range(first, len(local)):
            # theta: k rows score at least it; the bounds carry a margin over float32 rounding
            ok = ok[acc[ok] + rest[j2] * (1 + 1e-5) >= theta]
            if j2 == first:
                ok = np.sort(ok)  # the binary searches below want them in row order
            i2, w2 = local[j2]
            a, b = int(self.indptr[i2]), int(self.indptr[i2 + 1])
            if len(ok) * np.log2(b - a + 2) < b - a:  # few rows: binary search in the postings
                self._add(acc, i2, w2, ok, norm)
                continue
            member[ok] = True  # many: read the postings whole, keep the rows seen
            try:
                found = np.asarray(self.post_rows[a:b])
                keep = np.flatnonzero(member[found])
                target = found[keep]
                acc[target] += weigh(self.post_tf[a + keep], norm[target], self._row_weight(w2, target))
            finally:
                member[ok] = False
        return ok

    def _scratch(self) -> _Scratch:
        """This thread's zeroed working arrays for this index (kept: a million rows' accumulator
        is 4 MB, zeroed again by each search where it wrote)."""
        found = getattr(self._local, "scratch", None)
        if found is None:
            found = self._local.scratch = _Scratch(self.n)
        return found

    def _bound(self, i: int, w: float | np.ndarray, avgdl: float | np.ndarray) -> float:
        """The most term ``i`` (of weight ``w``) can weigh in a row: its largest frequency in its
        shortest row (per language: the largest over the languages, each with its own weight and
        average length)."""
        tf = float(self.max_tf[i])
        if isinstance(w, float) and isinstance(avgdl, float):  # one set of statistics: plain floats
            return float(w) * tf * (BM25_K1 + 1) / (
                tf + BM25_K1 * (1 - BM25_B + BM25_B * float(self.min_dl[i]) / (float(avgdl) or 1.0))) * (1 + 1e-6)
        avg = np.asarray(avgdl, np.float64)
        avg = np.where(avg > 0, avg, 1.0)
        per = tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * float(self.min_dl[i]) / avg))
        return float(np.max(np.asarray(w, np.float64) * per)) * (1 + 1e-6)

    def _add(self, acc: np.ndarray, i: int, w: float | np.ndarray, rows: np.ndarray, norm: np.ndarray) -> None:
        """Add term ``i``'s weight to these rows (sorted) where it occurs, by binary search in its postings."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        postings = self.post_rows[a:b]
        pos = np.minimum(np.searchsorted(postings, rows), b - a - 1)
        hit = postings[pos] == rows
        at, target = a + pos[hit], rows[hit]
        acc[target] += weigh(self.post_tf[at], norm[target], self._row_weight(w, target))


class _Scratch:
    """A search's per-thread working arrays: the score of each row, and two row masks."""

    def __init__(self, n: int) -> None:
        self.acc = np.zeros(n, np.float32)
        self.allowed = np.zeros(n, bool)
        self.member = np.zeros(n, bool)


_NO_GROUPS = np.zeros(0, np.int8)  # the compiled search: one weight for every row
_NO_ROWS = np.zeros(0, bool)  # the compiled search: every row allowed


def weigh(tf: np.ndarray, norm: np.ndarray, w: float | np.ndarray) -> np.ndarray:
    """A term's BM25 weights ``w tf (k1 + 1) / (tf + norm)`` in float32 (``w``: the term's idf, or
    each posting's row's language's; a query term counts once, ``query_terms``), computed one way
    everywhere: the score of one row must not depend on which path read its postings. ``norm`` is
    a new array (a gather) and is overwritten."""
    f = np.asarray(tf).astype(np.float32)
    np.add(norm, f, out=norm)
    f *= _times_k1(w)
    f /= norm
    return f


def _times_k1(w: float | np.ndarray) -> np.float32 | np.ndarray:
    """A term's weight (or one per posting, or per language) times k1 + 1, rounded to float32 once:
    the factor both the NumPy path (``weigh``) and the compiled search multiply by."""
    if isinstance(w, float):
        return np.float32((BM25_K1 + 1) * w)
    return ((BM25_K1 + 1) * np.asarray(w, np.float64)).astype(np.float32)


class SparseIndex:
    """One generation's learned sparse vectors as a CSR matrix, for exact dot-product search."""

    def __init__(self, rows: Rows, tbl: pa.Table) -> None:
        from scipy.sparse import csr_matrix

        self.rows = rows
        idx = tbl.column("sparse_idx").combine_chunks()
        val = tbl.column("sparse_val").combine_chunks()
        n = tbl.num_rows
        lengths = np.asarray(pc.list_value_length(idx).fill_null(0).to_numpy(zero_copy_only=False), np.int64)
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)  # null rows (deleted since): empty
        cols = np.asarray(idx.flatten(), np.int64) if n else np.zeros(0, np.int64)
        data = np.asarray(val.flatten(), np.float32) if n else np.zeros(0, np.float32)
        self.width = int(cols.max()) + 1 if len(cols) else 1
        self.matrix = csr_matrix((data, cols, offsets), shape=(n, self.width))

    def search(self, query: dict[int, float], k: int, rows: np.ndarray | None) -> Found:
        q = np.zeros(self.width, np.float32)
        for i, w in query.items():
            if 0 <= i < self.width:
                q[i] = w
        scores = self.matrix @ q
        if rows is not None:
            scores = scores[rows]
        pos = np.flatnonzero(scores > 0)
        if not len(pos):
            return self.rows.found(NOTHING, NOTHING)
        top = pos[np.argsort(-scores[pos], kind="stable")[:k]]
        return self.rows.found(top if rows is None else rows[top], scores[top])



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


def _random_access_map(path: Path) -> mmap.mmap:
    """A read-only map of a file read at random places: no read-ahead, so what stays resident
    is what look-ups touched."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(m, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        m.madvise(mmap.MADV_RANDOM)
    return m


class ParentTable:
    """One generation's parents for look-up by id: held in memory, or (given a ``directory``, in
    large stores) written once to an uncompressed Arrow file there and mapped without read-ahead
    (a look-up reads only the pages of the rows it takes)."""

    BATCH = 65_536

    def __init__(self, table: Callable[[], pa.Table], directory: Path | None) -> None:
        if directory is None:
            tbl = table().combine_chunks()  # small segments (larger ones are saved): one batch
        else:
            path = directory / "parents.arrow"
            if not path.exists():
                tbl = table()
                with saved_folder(directory) as tmp, pa.OSFile(str(tmp / path.name), "wb") as sink, \
                        pa.ipc.new_file(sink, tbl.schema) as writer:
                    # record batches of BATCH rows, however small the chunks the scan gave (a look-up
                    # takes from each batch it touches: a million parents in 1,024-row chunks made a
                    # look-up of 60 ids 55 takes, 7 ms); one batch's worth copied at a time
                    for start in range(0, tbl.num_rows, self.BATCH):
                        writer.write_batch(tbl.slice(start, self.BATCH).combine_chunks().to_batches()[0])
            reader = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(_random_access_map(path))))
            tbl = pa.Table.from_batches([reader.get_batch(i) for i in range(reader.num_record_batches)],
                                        schema=reader.schema)
        # one record batch per chunk: a take across a whole chunked table reads every chunk
        self.batches = tbl.to_batches()
        self.starts = np.cumsum([0] + [b.num_rows for b in self.batches])
        self.ids = IdIndex(tbl.column("parent_id").combine_chunks() if tbl.num_rows else pa.array([], pa.string()))

    def take(self, parent_ids: Sequence[str], columns: list[str] | None = None) -> pa.Table:
        """The rows of the ids found (those ``columns`` of them, else all), in row order."""
        rows = np.sort(self.ids.rows(parent_ids))
        rows = rows[rows >= 0]
        which = np.searchsorted(self.starts, rows, side="right") - 1
        parts = [(self.batches[b] if columns is None else self.batches[b].select(columns))
                 .take(pa.array(rows[which == b] - self.starts[b])) for b in np.unique(which)]
        if not parts:
            return pa.table({"parent_id": pa.array([], pa.string())})
        return pa.Table.from_batches(parts)
