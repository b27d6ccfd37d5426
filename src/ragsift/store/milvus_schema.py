"""What the Milvus store's reads and writes share: its collections, the engine's limits it keeps to
and how analyzer terms become the engine's BM25 tokens (``ragsift.store.milvus`` reads,
``ragsift.store.milvus_write`` writes)."""
from __future__ import annotations

import hashlib

from ragsift.store.base import query_terms

KINDS = ("documents", "parents", "children")
MAX_VARCHAR = 65535  # bytes, the engine's limit for one VARCHAR value
IN_CHUNK = 500
_DUMMY_DIM = 2  # every collection needs a vector field; _meta, documents and parents get a dummy one


def term_token(term: str) -> str:
    """One analyzer term as one engine token (hex digits survive any tokenizer intact)."""
    return "t" + hashlib.blake2b(term.encode("utf-8"), digest_size=8).hexdigest()


def bm25_text(terms: str) -> str:
    return " ".join(term_token(t) for t in terms.split())


def bm25_query(terms: str) -> str:
    """A query's BM25 text: each distinct term once (``query_terms``; the engine would count repeats)."""
    return " ".join(term_token(t) for t in query_terms(terms))
