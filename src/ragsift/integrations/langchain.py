"""A LangChain retriever over a ragsift knowledge base.

    from ragsift import KnowledgeBase
    from ragsift.integrations.langchain import RagsiftRetriever

    retriever = RagsiftRetriever(kb=KnowledgeBase.open("my-kb"), k=4, settings={"fusion": "weighted",
                                 "weights": {"dense": 0.5, "bm25": 0.5}})
    docs = retriever.invoke("恢复出厂设置要按哪些键？", filter={"source": "manual.md"})
    docs = await retriever.ainvoke("How do I reset the hub?")

Each ``Document`` is a passage: ``page_content`` its text, ``id`` its parent id, ``metadata``
its source, heading path, score, unit, matched spans, trace id and the document's metadata.
"""
from __future__ import annotations

import asyncio
from typing import Any

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the LangChain retriever needs langchain-core: pip install 'ragsift[langchain]'") from e

from ragsift.integrations import passage_metadata, query_args
from ragsift.kb import KnowledgeBase


class RagsiftRetriever(BaseRetriever):
    """Passages from ragsift as LangChain documents. ``k``: passages returned; ``filter``: a
    ragsift metadata filter; ``settings``: query settings by flat name. A call may pass
    ``filter=``, ``settings=`` or single settings (``unit="child"``) to ``invoke``."""

    kb: KnowledgeBase
    k: int = 4
    filter: dict[str, Any] | None = None
    settings: dict[str, Any] = {}

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        flt, settings = query_args(self.k, self.filter, self.settings, **kwargs)
        result = self.kb.query(query, filter=flt, **settings)
        return [Document(page_content=p.text, id=p.parent_id, metadata=passage_metadata(p, result))
                for p in result.passages]

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await asyncio.to_thread(self._get_relevant_documents, query, run_manager=run_manager.get_sync(),
                                       **kwargs)
