"""``FlatIndex``: exact cosine search, the L2-normalised vectors as one float32 matrix (saved and
mapped when given a folder); ``vectors_of`` reads a vector column as a matrix."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from ragsift.store.memindex.rows import NOTHING, Rows, SegmentHits, top_k
from ragsift.store.memindex.saved import saved_folder


def unit_rows(raw: np.ndarray) -> np.ndarray:
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
        self.matrix = unit_rows(vectors_of(table(), column, dim))  # a new array: arrow's buffer stays untouched
        if directory is not None:
            with saved_folder(directory) as tmp:
                self.matrix.tofile(tmp / "vectors.f32")

    def search(self, vector: np.ndarray, k: int, rows: np.ndarray | None) -> SegmentHits:
        v = (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
        matrix = self.matrix if rows is None else self.matrix[rows]
        if matrix.shape[0] == 0:
            return self.rows.found(NOTHING, NOTHING)
        scores = matrix @ v
        top = top_k(scores, k)
        return self.rows.found(top if rows is None else rows[top], scores[top])
