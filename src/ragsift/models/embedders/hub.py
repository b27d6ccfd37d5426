"""``st:<model>``: any sentence-transformers model, run in process."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.embedders.base import normalize


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by hub name or local path (``st:<name>``)."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ModelError("st:<model> embedders need sentence-transformers: pip install 'ragsift[hub]'") from e
        try:
            self._model = SentenceTransformer(model, device="cpu")
        except Exception as e:  # hub unreachable, bad path ...
            raise ModelError(f"cannot load sentence-transformers model {model!r}: {e}") from e
        self.name = f"st:{model}"
        dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dim())  # type: ignore[arg-type]  # sentence-transformers: None only for an unknown width

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(self._model.encode(list(texts), normalize_embeddings=True))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return normalize(self._model.encode(list(texts), normalize_embeddings=True))
