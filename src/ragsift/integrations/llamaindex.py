"""A LlamaIndex retriever over a ragsift knowledge base.

    from ragsift.integrations.llamaindex import RagsiftRetriever

    retriever = RagsiftRetriever("my-kb", k=4, filter={"lang": "zh"}, unit="parent")
    retriever = RagsiftRetriever(kb, filter=MetadataFilters(filters=[MetadataFilter(key="lang", value="en")]))
    nodes = retriever.retrieve("恢复出厂设置要按哪些键？")           # NodeWithScore, best first
    nodes = await retriever.aretrieve("How do I reset the hub?")
    engine = RetrieverQueryEngine.from_args(retriever, llm=...)
    child = retriever.with_options(unit="child", filter={"source": "manual.md"})   # per-call settings

Each node is a ``TextNode`` (``id_`` the parent id, ``metadata`` source, heading path, unit,
matched spans, trace id and the document's metadata) scored by the passage's ``similarity``: the
cosine similarity of the question and the passage from the dense channel, comparable across
questions, as LlamaIndex's vector retrievers score (None when that channel did not find it). So
``SimilarityPostprocessor(similarity_cutoff=0.85)`` keeps what matches well. The metadata also holds
``term_match``, ``scores``, the fused ``score`` (the order), ``no_good_match`` and ``match_reason``
(hidden from the LLM and the embedder); ``retriever.last_result`` is the ragsift ``Result`` of the
latest call: its ``warnings`` say why it found nothing (an empty knowledge base, a filter value no
document holds, "did you mean ...?").
"""
from __future__ import annotations

import asyncio
import inspect
import os
from typing import Any

try:
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the LlamaIndex retriever needs llama-index-core: pip install 'ragsift[llamaindex]'") from e

from ragsift.integrations import passage_id, passage_metadata, query_args, retriever_options
from ragsift.kb import KnowledgeBase
from ragsift.types import Result

# metadata LlamaIndex should not put in front of the text it sends to an LLM or embedder
_HIDDEN = ["score", "rank", "unit", "parent_id", "doc_id", "matched", "truncated", "trace_id", "provenance",
           "heading_path", "similarity", "term_match", "scores", "no_good_match", "match_reason"]


_FRAMEWORK_ARGS = frozenset(inspect.signature(BaseRetriever.__init__).parameters) - {"self", "args", "kwargs"}


class RagsiftRetriever(BaseRetriever):
    """Passages from ragsift as LlamaIndex nodes with scores: ``RagsiftRetriever(kb, k=4,
    filter=None, settings=None, **query_settings)`` as in every ragsift retriever
    (``ragsift.integrations``); ``filter`` ragsift's or LlamaIndex's ``MetadataFilters``;
    LlamaIndex's own arguments (``callback_manager``, ``verbose``, ...) by keyword.
    ``last_result``: the ragsift ``Result`` of the latest call (with calls at once on one
    retriever, read the nodes' metadata instead)."""

    def __init__(self, kb: KnowledgeBase | str | os.PathLike[str], k: int = 4, filter: Any = None,
                 settings: dict[str, Any] | None = None, **kwargs: Any) -> None:
        framework = {n: kwargs.pop(n) for n in list(kwargs) if n in _FRAMEWORK_ARGS}
        super().__init__(**framework)
        self.kb, self.k, self.filter, self.settings = retriever_options(kb, k, filter, settings, kwargs)
        self.last_result: Result | None = None

    def with_options(self, filter: Any = None, **settings: Any) -> RagsiftRetriever:
        """A retriever like this one with another filter and more settings (for one call or a few)."""
        return RagsiftRetriever(self.kb, settings.pop("k", self.k), filter if filter is not None else self.filter,
                                {**self.settings, **settings}, callback_manager=self.callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        flt, settings = query_args(self.kb, self.k, self.filter, self.settings)
        result = self.kb.query(query_bundle.query_str, filter=flt, trace=False, **settings)
        self.last_result = result
        return [NodeWithScore(node=TextNode(id_=passage_id(p), text=p.text, metadata=passage_metadata(p, result),
                                            excluded_llm_metadata_keys=_HIDDEN, excluded_embed_metadata_keys=_HIDDEN),
                              score=p.similarity) for p in result.passages]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
