"""A Haystack component over a ragsift knowledge base (see ``ragsift.integrations.haystack``)."""
from __future__ import annotations

import asyncio
import os
from typing import Any

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the Haystack component needs haystack-ai: pip install 'ragsift[haystack]'") from e

from ragsift.integrations import passage_id, passage_metadata, query_args, retriever_options
from ragsift.kb import KnowledgeBase


@component
class RagsiftRetriever:
    """Passages from ragsift as Haystack documents (``content`` the text, ``score`` the fused
    score, ``meta`` source, heading path, unit, matched spans, trace id, document metadata, and
    how well it matches, comparable across questions: ``similarity``, ``term_match``, ``scores``).

    ``run`` returns beside ``documents`` what the result says as a whole: ``no_good_match``
    (nothing matched well: the documents, if any, are weak), ``match`` (why, and the thresholds:
    ``Result.match``) and ``warnings`` (why nothing was found: an empty knowledge base, a filter
    value no document holds, "did you mean ...?").

    ``RagsiftRetriever(kb, k=4, filter=None, settings=None, **query_settings)`` as in every
    ragsift retriever (``ragsift.integrations``); Haystack's own names ``top_k`` and ``filters``
    are taken too, and ``run`` takes them per call. Filters may be Haystack's
    (``{"field": "meta.lang", "operator": "==", "value": "zh"}``) or ragsift's."""

    def __init__(self, kb: KnowledgeBase | str | os.PathLike[str], k: int = 4, filter: Any = None,
                 settings: dict[str, Any] | None = None, *, top_k: int | None = None, filters: Any = None,
                 **query_settings: Any) -> None:
        self.kb, self.k, self.filter, self.settings = retriever_options(
            kb, top_k if top_k is not None else k, filters if filters is not None else filter, settings,
            query_settings)

    @property
    def top_k(self) -> int:
        return self.k

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, kb=str(self.kb.path), k=self.k, filter=self.filter, settings=self.settings)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RagsiftRetriever:
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document], no_good_match=bool, match=dict[str, Any], warnings=list[str])
    def run(self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None,
            settings: dict[str, Any] | None = None) -> dict[str, Any]:
        flt, s = query_args(self.kb, top_k or self.k, self.filter, self.settings, filter=filters, settings=settings)
        result = self.kb.query(query, filter=flt, trace=False, **s)
        return {"documents": [Document(id=passage_id(p), content=p.text, score=p.score,
                                       meta=passage_metadata(p, result)) for p in result.passages],
                "no_good_match": result.no_good_match, "match": result.match.to_dict(),
                "warnings": list(result.warnings)}

    @component.output_types(documents=list[Document], no_good_match=bool, match=dict[str, Any], warnings=list[str])
    async def run_async(self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None,
                        settings: dict[str, Any] | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.run, query, filters, top_k, settings)
