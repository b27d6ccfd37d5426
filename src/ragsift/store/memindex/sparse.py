"""``SparseIndex``: learned sparse vectors as a CSR matrix, exact dot products."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsift.store.memindex.rows import NOTHING, Rows, SegmentHits


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

    def search(self, query: dict[int, float], k: int, rows: np.ndarray | None) -> SegmentHits:
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
