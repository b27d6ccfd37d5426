"""The store interface. The embedded LanceDB store implements it; a scale-out backend will too.

Guarantees every implementation gives:

- **One generation, one commit.** Everything a write transaction adds or deletes (documents,
  parents, children, vectors, terms) becomes visible together when ``commit()`` returns, as
  generation N+1. Readers never see part of a transaction. A process killed at any moment
  leaves the last committed generation intact; the next writer rolls back the leftovers.
- **No orphans.** Deleting or replacing a document removes all its parents and children in
  the same commit. A committed child always has its parent, written in the same generation.
- **Filters are values.** Filters arrive parsed (``ragsift.store.filters``) and are rendered
  with every value quoted as a literal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol, Sequence

import numpy as np

from ragsift.store.filters import Node
from ragsift.types import Child, Document, Parent

# Filter fields every knowledge base has; document metadata adds more.
BUILTIN_FIELDS = {"doc_id": "string", "source": "string", "title": "string", "format": "string"}


@dataclass(frozen=True)
class StoredHit:
    child_id: str
    parent_id: str
    doc_id: str
    score: float  # higher is better; cosine similarity for dense, BM25 for bm25
    start: int
    end: int


@dataclass(frozen=True)
class StoredParent:
    parent: Parent
    source: str
    title: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    source: str
    title: str
    format: str
    content_hash: str
    generation: int
    parents: int
    children: int
    metadata: dict[str, Any]


@dataclass(frozen=True)
class IndexedChild:
    """A child ready to store: the child, its analyzed BM25 terms and its dense vector."""

    child: Child
    terms: str
    vector: np.ndarray


class WriteTransaction(Protocol):
    generation: int  # the generation this transaction will commit as

    def put_document(self, doc: Document, parents: Sequence[Parent],
                     children: Sequence[IndexedChild]) -> None:
        """Add a document, replacing any earlier version of the same doc_id."""

    def delete_document(self, doc_id: str) -> bool:
        """Remove a document with all its parents and children. False if it is not stored."""

    def commit(self) -> int:
        """Make everything visible at once; returns the new generation."""

    def abort(self) -> None:
        """Drop everything this transaction wrote."""


class Store(Protocol):
    generation: int
    dim: int

    def fields(self) -> dict[str, str]: ...

    def refresh(self) -> bool:
        """Pick up a generation committed by another process. True if it changed."""

    def search_dense(self, vector: np.ndarray, k: int, where: Node | None) -> list[StoredHit]: ...

    def search_bm25(self, terms: str, k: int, where: Node | None) -> list[StoredHit]: ...

    def get_parents(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]: ...

    def get_document_parents(self, doc_ids: Iterable[str]) -> dict[str, list[StoredParent]]:
        """All parents of each document, in document order."""

    def get_documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, StoredDocument]: ...

    def find_documents(self, source: str) -> list[StoredDocument]: ...

    def begin(self) -> WriteTransaction: ...

    def stats(self) -> dict[str, Any]: ...

    def check_integrity(self) -> list[str]:
        """Problems found (children without parents, counts that disagree); empty when sound."""

    def close(self) -> None: ...
