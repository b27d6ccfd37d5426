"""What the Milvus store's reads and writes share: its collections, the engine's limits it keeps to
and how analyzer terms become the engine's BM25 tokens (``ragsift.store.milvus`` reads,
``ragsift.store.milvus_write`` writes)."""
from __future__ import annotations

import hashlib

from ragsift.store.base import query_terms

FORMAT = 1
KINDS = ("documents", "parents", "children")
BATCH_CHILDREN = 2048
MAX_VARCHAR = 65535  # bytes, the engine's limit for one VARCHAR value
TEXT_PIECE_CHARS = 16000  # a parent's text is stored in pieces (<= 64 KB even at 4 bytes a char)
MAX_K = 16384  # the engine's largest top-k
QUERY_PAGE = 16384  # rows one query call returns; more go through a query iterator
IN_CHUNK = 500
LEASE_S = 60.0
_DUMMY_DIM = 2  # every collection needs a vector field; _meta, documents and parents get a dummy one
_HIT_FIELDS = ["child_id", "parent_id", "doc_id", "start", "end"]
# BM25 as on the embedded store (tantivy) and Milvus 2.5's defaults; milvus-lite's own default k1 is 1.5
BM25_PARAMS = {"bm25_k1": 1.2, "bm25_b": 0.75}


def term_token(term: str) -> str:
    """One analyzer term as one engine token (hex digits survive any tokenizer intact)."""
    return "t" + hashlib.blake2b(term.encode("utf-8"), digest_size=8).hexdigest()


def bm25_text(terms: str) -> str:
    return " ".join(term_token(t) for t in terms.split())


def bm25_query(terms: str) -> str:
    """A query's BM25 text: each distinct term once (``query_terms``; the engine would count repeats)."""
    return " ".join(term_token(t) for t in query_terms(terms))
