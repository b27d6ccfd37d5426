"""A LangChain retriever over a ragsift knowledge base.

    from ragsift import KnowledgeBase
    from ragsift.integrations.langchain import RagsiftRetriever

    retriever = RagsiftRetriever("my-kb", k=4, fusion="weighted", weights={"dense": 0.5, "bm25": 0.5})
    docs = retriever.invoke("恢复出厂设置要按哪些键？", filter={"source": "manual.md"})
    docs = retriever.invoke("恢复出厂设置要按哪些键？", filter={"$and": [{"lang": {"$eq": "zh"}}]})
    docs = await retriever.ainvoke("How do I reset the hub?")

Each ``Document`` is a passage: ``page_content`` its text, ``id`` its parent id, ``metadata``
its source, heading path, score, unit, matched spans, trace id and the document's metadata, and
how well it matches: ``similarity``, ``term_match``, ``scores`` (comparable across questions, unlike
``score``), ``no_good_match`` and ``match_reason`` (nothing in its result matched well, and why).

    docs = retriever.invoke("Who was the first emperor of Rome?")
    if docs and docs[0].metadata["no_good_match"]: ...            # weak: do not answer from them
    retriever.last_result.warnings     # with no documents, why: an empty knowledge base, a filter
                                       # value no document holds ("did you mean ...?")
"""
from __future__ import annotations

import asyncio
from typing import Any

from pydantic import PrivateAttr

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("the LangChain retriever needs langchain-core: pip install 'ragsift[langchain]'") from e

from ragsift.integrations import passage_id, passage_metadata, query_args, retriever_options
from ragsift.kb import KnowledgeBase
from ragsift.types import Result


class RagsiftRetriever(BaseRetriever):
    """Passages from ragsift as LangChain documents: ``RagsiftRetriever(kb, k=4, filter=None,
    settings=None, **query_settings)`` as in every ragsift retriever (``ragsift.integrations``);
    ``kb`` a knowledge base or its path; ``filter`` ragsift's or LangChain's (``$and``, ``$eq``,
    ``$between``, self-query ``Comparison`` / ``Operation``). A call may pass ``filter=``,
    ``settings=`` or single settings (``unit="child"``) to ``invoke``. LangChain's own fields
    (``tags``, ``metadata``) are taken as keywords too. ``last_result`` is the ragsift ``Result``
    of the latest call (its ``warnings``, ``match``, ``no_good_match``); with calls at once on one
    retriever, read the documents' metadata instead."""

    kb: KnowledgeBase
    k: int = 4
    filter: dict[str, Any] | None = None
    settings: dict[str, Any] = {}
    _last: Result | None = PrivateAttr(default=None)

    def __init__(self, kb: Any = None, k: int = 4, filter: Any = None, settings: dict[str, Any] | None = None,
                 **kwargs: Any) -> None:
        framework = {n: kwargs.pop(n) for n in list(kwargs) if n in BaseRetriever.model_fields}
        if kb is None:
            raise TypeError("RagsiftRetriever needs kb: a KnowledgeBase or the path of one")
        base, k, flt, s = retriever_options(kb, k, filter, settings, kwargs)
        super().__init__(kb=base, k=k, filter=flt, settings=s, **framework)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        flt, settings = query_args(self.kb, self.k, self.filter, self.settings, **kwargs)
        result = self.kb.query(query, filter=flt, trace=False, **settings)
        self._last = result
        return [Document(page_content=p.text, id=passage_id(p), metadata=passage_metadata(p, result))
                for p in result.passages]

    @property
    def last_result(self) -> Result | None:
        """The ragsift ``Result`` of the latest call (None before one): ``warnings`` says why it
        found nothing, where that can be told; ``match`` how well it matched, and why not."""
        return self._last

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await asyncio.to_thread(self._get_relevant_documents, query, run_manager=run_manager.get_sync(),
                                       **kwargs)
