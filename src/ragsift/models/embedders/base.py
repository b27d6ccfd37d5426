"""The embedder protocol (``Embedder``), instructions put before the texts (``Prefixed``), and the
L2 normalisation every backend ends with."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


PREFIXES: dict[str, tuple[str, str]] = {  # embed_prefixes -> (query, passage) instructions
    "none": ("", ""),
    "e5": ("query: ", "passage: "),
    "bge": ("Represent this sentence for searching relevant passages: ", ""),
    "qwen3": ("Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ", ""),
}


class Prefixed:
    """An embedder with query and passage instructions put before the texts."""

    def __init__(self, inner: Embedder, prefixes: str) -> None:
        self.inner, (self.query_prefix, self.passage_prefix) = inner, PREFIXES[prefixes]
        self.name, self.dim = inner.name, inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries([self.query_prefix + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages([self.passage_prefix + t for t in texts])
