"""Retrievers for the frameworks RAG teams already run, each behind its own extra:

- ``ragsift.integrations.langchain.RagsiftRetriever``: a LangChain ``BaseRetriever``
  (``pip install 'ragsift[langchain]'``);
- ``ragsift.integrations.llamaindex.RagsiftRetriever``: a LlamaIndex ``BaseRetriever`` returning
  nodes with scores (``pip install 'ragsift[llamaindex]'``);
- ``ragsift.integrations.haystack.RagsiftRetriever``: a Haystack component
  (``pip install 'ragsift[haystack]'``).

Each returns ragsift's passages (parent sections by default) with, in their metadata, the
source, heading path, score, unit, matched spans and the query's trace id; each accepts a
ragsift filter and query settings, fixed or per call, and has an async form.
"""
from __future__ import annotations

from typing import Any

from ragsift.types import Passage, Result

RESERVED = ("source", "title", "heading_path", "heading", "score", "rank", "unit", "parent_id", "doc_id", "matched",
            "truncated", "trace_id", "provenance")


def passage_metadata(p: Passage, result: Result) -> dict[str, Any]:
    """What a framework document carries besides the text: the document's own metadata, and
    where and how the passage was found (these keys win over metadata of the same name)."""
    meta = {k: v for k, v in p.metadata.items() if k not in RESERVED}
    meta.update(source=p.source, title=p.title, heading_path=list(p.heading_path), heading=p.heading,
                score=p.score, rank=p.rank, unit=p.unit, parent_id=p.parent_id, doc_id=p.doc_id,
                matched=[s.to_dict() for s in p.matched], truncated=p.truncated, trace_id=result.trace.trace_id)
    if p.provenance:
        meta["provenance"] = list(p.provenance)
    return meta


def query_args(k: int | None, filter: dict[str, Any] | None, settings: dict[str, Any] | None, /,
               **per_call: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The filter and settings of one call: per-call values over the retriever's own."""
    f = per_call.pop("filter", None) or filter
    call = {**(per_call.pop("settings", None) or {}), **per_call}
    s = {**(settings or {}), **call}
    if k is not None and "max_passages" not in call and "max_parents" not in call:
        s["max_passages"] = k
    return f, s
