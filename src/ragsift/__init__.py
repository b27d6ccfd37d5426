"""ragsift: a retrieval engine for RAG.

By default small chunks are searched (dense vectors and BM25, fused adaptively); whole
parent sections come back, deduplicated and packed into a token budget, with a trace of how
each was found. Other channels, units and strategies are settings (``ragsift.config``).

    from ragsift import KnowledgeBase
    kb = KnowledgeBase.open("my-kb")          # created on first use
    kb.ingest("docs/")
    result = kb.query("什么是监督学习？")
    for passage in result.passages:
        print(passage.heading_path, passage.score)

The names below load on first use, so ``import ragsift`` (and ``ragsift --version``) does
not import the engine, numpy or the store.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsift.config import Settings
    from ragsift.errors import RagsiftError
    from ragsift.kb import KnowledgeBase
    from ragsift.types import Passage, Result

__all__ = ["KnowledgeBase", "Settings", "Result", "Passage", "RagsiftError"]
__version__ = "0.1.0"

_HOME = {"KnowledgeBase": "ragsift.kb", "Settings": "ragsift.config", "Result": "ragsift.types",
         "Passage": "ragsift.types", "RagsiftError": "ragsift.errors"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(import_module(_HOME[name]), name)
        globals()[name] = value  # found once
        return value
    raise AttributeError(f"module 'ragsift' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
