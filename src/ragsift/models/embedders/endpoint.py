"""``openai:<model>``: any OpenAI-compatible ``/v1/embeddings`` endpoint."""
from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ragsift.cancel import Deadline
from ragsift.config import shown_url
from ragsift.errors import ModelError
from ragsift.models.embedders.base import normalize
from ragsift.models.retry import Transient, retried, transient_status


class EndpointEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (``openai:<model>``): vLLM, Ollama, Text
    Embeddings Inference, OpenAI. Texts go in batches of ``batch_size``, ``concurrency`` batches
    in flight; a batch is retried on transient errors (connection errors, 429, 5xx) a bounded
    number of times within ``timeout_s``. The dimension is discovered from the first answer;
    every vector must have it. Vectors are L2-normalised."""

    def __init__(self, model: str, options: Any = None) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ModelError("openai:<model> embedders need the 'openai' package") from e
        o = options
        base_url = (getattr(o, "base_url", "") or os.environ.get("RAGSIFT_EMBED_BASE_URL")
                    or os.environ.get("OPENAI_BASE_URL"))
        api_key = os.environ.get("RAGSIFT_EMBED_API_KEY") or os.environ.get("OPENAI_API_KEY") or "none"
        self.timeout_s = float(getattr(o, "timeout_s", 60.0))
        self.batch_size = int(getattr(o, "batch_size", 32))
        self.concurrency = int(getattr(o, "concurrency", 4))
        self.max_retries = int(getattr(o, "max_retries", 2))
        self._openai = openai
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=self.timeout_s)
        self.model = model
        self.name = f"openai:{model}"
        self.where = shown_url(str(self._client.base_url))  # never the URL's credentials
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._embed(["dimension probe"])
        return self._dim  # type: ignore[return-value]

    def _batch(self, texts: list[str]) -> np.ndarray:
        def attempt(left: float) -> np.ndarray:
            try:
                resp = self._client.embeddings.create(model=self.model, input=texts, encoding_format="float",
                                                      timeout=left)
                vecs = np.asarray([r.embedding for r in sorted(resp.data, key=lambda d: d.index)], np.float32)
            except self._openai.APIStatusError as e:
                if transient_status(e.status_code):
                    raise Transient(f"HTTP {e.status_code}") from None
                raise ModelError(f"{self.name} at {self.where}: HTTP {e.status_code}: {e.message}") from None
            except (self._openai.APIConnectionError, self._openai.APITimeoutError) as e:
                raise Transient(f"{type(e).__name__}: {e}") from None
            except (self._openai.APIError, ValueError, TypeError, AttributeError) as e:
                raise ModelError(f"{self.name} at {self.where}: not an embeddings answer ({e})") from None
            if vecs.ndim != 2 or len(vecs) != len(texts):
                raise ModelError(f"{self.name} at {self.where}: {len(vecs)} vectors for {len(texts)} texts")
            return vecs
        return retried(attempt, deadline=Deadline(self.timeout_s), retries=self.max_retries,
                       fail=lambda why: ModelError(f"{self.name} at {self.where}: {why}"))

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), np.float32)
        batches = [list(texts[i:i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        if len(batches) == 1:
            parts = [self._batch(batches[0])]
        else:
            with ThreadPoolExecutor(min(self.concurrency, len(batches))) as pool:
                parts = list(pool.map(self._batch, batches))
        dims = {p.shape[1] for p in parts}
        if len(dims) != 1 or (self._dim is not None and self._dim not in dims):
            raise ModelError(f"{self.name} at {self.where}: vectors of {sorted(dims)} dimensions"
                             + (f"; this model gave {self._dim} before" if self._dim else ""))
        self._dim = dims.pop()
        return normalize(np.vstack(parts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)
