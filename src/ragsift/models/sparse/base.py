"""The sparse encoder protocol (``SparseEncoder``), its vectors (``SparseVector``, ``sparse_dot``),
and the pruning every encoder shares (``EncoderBase``)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ragsift.errors import ConfigError

SparseVector = dict[int, float]

DEFAULT_PASSAGE_TOP_K = 256  # splade-tiny and splade:<model>
E5_PASSAGE_TOP_K = 512  # e5-sparse: see E5Sparse
DEFAULT_QUERY_TOP_K: int | None = None


class SparseEncoder(Protocol):
    name: str
    dim: int  # size of the feature space: every key is in range(dim)

    def encode_queries(self, texts: Sequence[str]) -> list[SparseVector]: ...

    def encode_passages(self, texts: Sequence[str]) -> list[SparseVector]: ...


def sparse_dot(q: SparseVector, d: SparseVector) -> float:
    """The dot product of two sparse vectors (0.0 when they share no feature)."""
    if len(q) > len(d):
        q, d = d, q
    return float(sum(w * d[k] for k, w in q.items() if k in d))


def _to_dict(idx: np.ndarray, val: np.ndarray, top_k: int | None) -> SparseVector:
    """Positive entries only, the ``top_k`` largest (all when None), largest first."""
    idx = np.asarray(idx)
    val = np.asarray(val, dtype=np.float32)
    keep = val > 0
    idx, val = idx[keep], val[keep]
    # stable sort on (-weight, id): equal weights keep a fixed order, so pruning is deterministic
    order = np.lexsort((idx, -val))
    if top_k is not None:
        order = order[:top_k]
    return {int(i): float(v) for i, v in zip(idx[order], val[order])}


def _check_top_k(top_k: int | None, what: str) -> int | None:
    if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
        raise ConfigError(f"{what} must be a positive integer or None (keep all), got {top_k!r}")
    return top_k


class EncoderBase:
    """Top-k pruning and empty-text handling; subclasses give ``_encode_raw``."""

    name: str

    def __init__(self, passage_top_k: int | None, query_top_k: int | None) -> None:
        self.passage_top_k = _check_top_k(passage_top_k, "passage_top_k")
        self.query_top_k = _check_top_k(query_top_k, "query_top_k")

    def _encode_raw(self, texts: list[str], top_k: int | None) -> list[tuple[np.ndarray, np.ndarray]]:
        """(feature ids, weights) per text; ``top_k`` is a hint (the result is pruned again)."""
        raise NotImplementedError

    def _encode(self, texts: Sequence[str], top_k: int | None) -> list[SparseVector]:
        if isinstance(texts, str):
            raise TypeError("pass a list of texts, not a single string")
        texts = list(texts)
        out: list[SparseVector] = [{} for _ in texts]
        live = [i for i, t in enumerate(texts) if t and t.strip()]
        if live:
            raw = self._encode_raw([texts[i] for i in live], top_k)
            for i, (ix, vl) in zip(live, raw):
                out[i] = _to_dict(ix, vl, top_k)
        return out

    def encode_queries(self, texts: Sequence[str]) -> list[SparseVector]:
        return self._encode(texts, self.query_top_k)

    def encode_passages(self, texts: Sequence[str]) -> list[SparseVector]:
        return self._encode(texts, self.passage_top_k)
