"""In-memory search indexes of one committed generation, for the embedded store.

Each is built from the generation's children table the first time a search needs it and
answers without touching the table again; one module each:

- ``rows``: the hit columns (ids, offsets, language, kind: ``Rows``), read once per generation and
  shared by every index, and ``SegmentHits``, a search's rows and scores before hits are built.
- ``flat``: ``FlatIndex``, exact cosine search, the L2-normalised vectors as one float32 matrix.
- ``ann``: ``AnnIndex``, an HNSW graph (usearch) over int8-quantised vectors, its candidates
  re-ranked exactly with the full float32 vectors read from a memory-mapped file: the large-store path.
- ``quantised``: the int8 and 4-bit copies of the ANN's vectors that exact passes over a filter's
  rows read first (``Int8Copy``, ``Int4Copy``), by compiled scans split among the cores.
- ``bm25``: ``BM25Index``, an inverted index (postings per term as CSR arrays with each posting's
  term frequency; weights are computed at query time from the statistics of every segment), so a
  query touches only its own terms' postings; searched by compiled code (``_bm25.c``) when the
  module is built, else by NumPy, to the same rows and float32 scores.
- ``sparse``: ``SparseIndex``, learned sparse vectors as a CSR matrix, exact dot products.
- ``tables``: ``ParentTable``, the parents by id.
- ``saved``: the folders and files the indexes are saved in.

Every index reads the table in the same order, so a row number means the same child in all of
them. The public names are imported here; a test or benchmark that changes a module's setting
(``quantised.SPLIT_ROWS``, ``bm25.compiled_bm25``) sets it on that module.
"""
from __future__ import annotations

from ragsift.store.memindex.ann import AnnIndex
from ragsift.store.memindex.bm25 import BM25_B, BM25_K1, BM25Index, weigh
from ragsift.store.memindex.flat import FlatIndex, vectors_of
from ragsift.store.memindex.quantised import Int4Copy, Int8Copy
from ragsift.store.memindex.rows import LANGUAGE_GROUPS, NOTHING, UNKNOWN_LANGUAGE, IdIndex, Rows, SegmentHits, top_k
from ragsift.store.memindex.saved import saved_folder
from ragsift.store.memindex.sparse import SparseIndex
from ragsift.store.memindex.tables import ParentTable

__all__ = ["BM25_B", "BM25_K1", "LANGUAGE_GROUPS", "NOTHING", "UNKNOWN_LANGUAGE", "AnnIndex", "BM25Index",
           "FlatIndex", "SegmentHits", "IdIndex", "Int4Copy", "Int8Copy", "ParentTable", "Rows", "SparseIndex",
           "saved_folder", "top_k", "vectors_of", "weigh"]
