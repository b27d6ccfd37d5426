"""A Haystack component over a ragsift knowledge base.

    from haystack import Pipeline
    from ragsift.integrations.haystack import RagsiftRetriever

    pipe = Pipeline()
    pipe.add_component("retriever", RagsiftRetriever("my-kb", top_k=4))
    out = pipe.run({"retriever": {"query": "恢复出厂设置要按哪些键？", "filters": {"lang": "zh"}}})
    out["retriever"]["documents"]        # haystack Documents, best first, with scores

``filters`` take ragsift's filter language; ``settings`` are query settings by flat name.
The component serializes to its knowledge base's path (``to_dict`` / ``from_dict``).
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the Haystack component needs haystack-ai: pip install 'ragsift[haystack]'") from e

from ragsift.integrations import passage_metadata, query_args
from ragsift.kb import KnowledgeBase


@component
class RagsiftRetriever:
    """Passages from ragsift as Haystack documents (``content`` the text, ``score`` the fused
    score, ``meta`` source, heading path, unit, matched spans, trace id, document metadata)."""

    def __init__(self, kb: KnowledgeBase | str | Path, top_k: int = 4, filters: dict[str, Any] | None = None,
                 settings: dict[str, Any] | None = None) -> None:
        self.kb = kb if isinstance(kb, KnowledgeBase) else KnowledgeBase.open(kb, create=False)
        self.top_k, self.filters, self.settings = top_k, filters, dict(settings or {})

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, kb=str(self.kb.path), top_k=self.top_k, filters=self.filters,
                               settings=self.settings)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagsiftRetriever:
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None,
            settings: dict[str, Any] | None = None) -> dict[str, list[Document]]:
        flt, s = query_args(top_k or self.top_k, self.filters, self.settings, filter=filters, settings=settings)
        result = self.kb.query(query, filter=flt, **s)
        return {"documents": [Document(id=p.parent_id, content=p.text, score=p.score, meta=passage_metadata(p, result))
                              for p in result.passages]}

    @component.output_types(documents=list[Document])
    async def run_async(self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None,
                        settings: dict[str, Any] | None = None) -> dict[str, list[Document]]:
        return await asyncio.to_thread(self.run, query, filters, top_k, settings)
