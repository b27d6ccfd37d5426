"""``AnnIndex``: an HNSW graph (usearch) over int8-quantised vectors, its candidates re-ranked
exactly with the full float32 vectors read from a memory-mapped file: the large-store path. Built
once per generation (``_build_ann``) and saved with the full vectors and their int8 and 4-bit
copies (``ragsift.store.memindex.quantised``)."""
from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
import pyarrow as pa

from ragsift.store.memindex.flat import unit_rows, vectors_of
from ragsift.store.memindex.quantised import Int4Copy, Int8Copy, _write_int4, _write_int8, compiled_scan
from ragsift.store.memindex.rows import NOTHING, Rows, SegmentHits, top_k
from ragsift.store.memindex.saved import random_access_map, saved_folder


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
        self.mapped = np.frombuffer(random_access_map(full), np.float32).reshape(-1, dim) if self.n else None
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

    def search(self, vector: np.ndarray, k: int, rows: np.ndarray | None) -> SegmentHits:
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
            part = unit_rows(vectors_of(tbl.slice(start, step), column, dim))
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
