"""The approximate copies of an ``AnnIndex``'s vectors read by exact passes over a filter's rows:
``Int8Copy`` (a quarter of the float32 bytes) and ``Int4Copy`` (an eighth), their writers, and the
compiled scan (``_scan.c``) split among the cores."""
from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ragsift.store.memindex.saved import random_access_map, replacing

try:  # the int8 and 4-bit exact passes' inner loops (``_scan.c``, built at install like ``_bm25.c``)
    import ragsift.store._scan as compiled_scan
except ImportError:  # pragma: no cover - without it an exact pass reads every row's float32 vector
    compiled_scan = None  # type: ignore[assignment]


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
        return random_access_map(path), np.fromfile(side, np.float32)
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
    with replacing(directory / "vectors.i8.scales") as out:
        out.write(scales.tobytes())
    with replacing(directory / "vectors.i8") as out:
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
    with replacing(directory / "vectors.u4.params") as out:
        out.write(np.concatenate([low, step]).tobytes())
    with replacing(directory / "vectors.u4") as out:
        for start in range(0, len(vectors), step_rows):
            codes = np.clip(np.rint((vectors[start:start + step_rows] - low) / step), 0, 15).astype(np.uint8)
            codes = np.pad(codes, ((0, 0), (0, padded - dim))).reshape(len(codes), -1, 2, 32)
            out.write((codes[:, :, 0, :] | (codes[:, :, 1, :] << 4)).tobytes())
