"""Retrievers for the frameworks RAG teams already run, each behind its own extra:

- ``ragsift.integrations.langchain.RagsiftRetriever``: a LangChain ``BaseRetriever``
  (``pip install 'ragsift[langchain]'``);
- ``ragsift.integrations.llamaindex.RagsiftRetriever``: a LlamaIndex ``BaseRetriever`` returning
  nodes with scores (``pip install 'ragsift[llamaindex]'``);
- ``ragsift.integrations.haystack.RagsiftRetriever``: a Haystack component
  (``pip install 'ragsift[haystack]'``).

All three are made the same way: ``RagsiftRetriever(kb, k=4, filter=None, settings=None,
**query_settings)``, where ``kb`` is a ``KnowledgeBase`` or the path of one, ``filter`` is a
ragsift filter or one in the framework's own shape (``integrations.filters``: Haystack's
``{"field": "meta.lang", ...}``, LangChain's ``$and``/``$eq`` dicts and self-query objects,
LlamaIndex's ``MetadataFilters``), and any query setting goes by its flat name (``unit="child"``).
Names and values are checked when the retriever is made.

Each returns ragsift's passages (parent sections by default) with, in their metadata, the
source, heading path, score, unit, matched spans and the query's trace id; filter and settings
can also change per call; each has an async form.

How well each passage matches, comparable across questions (``Passage``): ``similarity`` (the
dense channel's cosine, None when it did not find the passage), ``term_match`` (the share of the
question's terms in it) and ``scores`` (each channel's own) are in every document's metadata,
beside the result's ``no_good_match`` and ``match_reason`` (``Result.match``). What a result says
with no passages to carry it (``Result.warnings``: an empty knowledge base, a filter value no
document holds) each framework gets its own way: Haystack as outputs of ``run`` beside
``documents`` (``no_good_match``, ``match``, ``warnings``); LangChain and LlamaIndex as the
retriever's ``last_result``, the ragsift ``Result`` of its latest call. LlamaIndex's node score is
the similarity (as its vector retrievers give, so ``SimilarityPostprocessor`` thresholds it); the
fused score stays in the metadata's ``score``.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

from ragsift.errors import ConfigError
from ragsift.integrations.filters import translate_filter
from ragsift.kb import KnowledgeBase
from ragsift.store.filters import parse_filter
from ragsift.types import Passage, Result

RESERVED = ("source", "title", "heading_path", "heading", "score", "rank", "unit", "parent_id", "doc_id", "matched",
            "truncated", "trace_id", "provenance", "similarity", "term_match", "scores", "no_good_match",
            "match_reason")


def passage_metadata(p: Passage, result: Result) -> dict[str, Any]:
    """What a framework document carries besides the text: the document's own metadata, and
    where and how the passage was found, how well it matches (``similarity``, ``term_match``,
    ``scores``) and whether anything in its result matched well (``no_good_match``,
    ``match_reason``): these keys win over metadata of the same name."""
    meta = {k: v for k, v in p.metadata.items() if k not in RESERVED}
    meta.update(source=p.source, title=p.title, heading_path=list(p.heading_path), heading=p.heading,
                score=p.score, rank=p.rank, unit=p.unit, parent_id=p.parent_id, doc_id=p.doc_id,
                matched=[s.to_dict() for s in p.matched], truncated=p.truncated, trace_id=result.trace.trace_id,
                similarity=p.similarity, term_match=p.term_match, scores=dict(p.scores),
                no_good_match=result.no_good_match, match_reason=result.match.reason)
    if p.provenance:
        meta["provenance"] = list(p.provenance)
    return meta


def passage_id(p: Passage) -> str:
    """A framework document's id: the parent id for a parent section (the default unit); for a
    smaller unit (a child, a window) the parent id with the unit and a digest of its text, since
    two children of one section may both be returned and frameworks drop repeated ids."""
    if p.unit == "parent":
        return p.parent_id
    return f"{p.parent_id}~{p.unit}-{hashlib.sha1(p.text.encode('utf-8')).hexdigest()[:12]}"


def open_kb(kb: KnowledgeBase | str | os.PathLike[str]) -> KnowledgeBase:
    """A knowledge base, or the path of one (which must exist: a retriever never creates one)."""
    if isinstance(kb, KnowledgeBase):
        return kb
    if isinstance(kb, (str, os.PathLike)):
        return KnowledgeBase.open(os.fspath(kb), create=False)
    raise ConfigError(f"a retriever takes a KnowledgeBase or the path of one, got {type(kb).__name__}")


def checked_filter(kb: KnowledgeBase, spec: Any) -> dict[str, Any] | None:
    """A filter in ragsift's language or a framework's shape (``integrations.filters``), as
    ragsift's language, checked against the knowledge base's fields now (a FilterError names
    what is wrong)."""
    fields = kb.store.fields()
    flt = translate_filter(spec, fields)
    parse_filter(flt, fields)
    return flt or None


def retriever_options(kb: KnowledgeBase | str | os.PathLike[str], k: int, filter: Any,
                      settings: dict[str, Any] | None, query_settings: dict[str, Any]
                      ) -> tuple[KnowledgeBase, int, dict[str, Any] | None, dict[str, Any]]:
    """The one constructor shape of the three retrievers: a knowledge base or its path, ``k``,
    a filter (any shape), query settings as a dict and/or by name; all checked here, so a
    wrong name or value fails when the retriever is made, not at its first question."""
    base = open_kb(kb)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k (passages per question) must be a positive integer, got {k!r}")
    s = {**(settings or {}), **query_settings}
    base.query_settings(**s)
    return base, k, checked_filter(base, filter), s


def query_args(kb: KnowledgeBase, k: int | None, filter: dict[str, Any] | None, settings: dict[str, Any] | None, /,
               **per_call: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The filter and settings of one call: per-call values over the retriever's own (a per-call
    filter in any shape is translated)."""
    f = per_call.pop("filter", None)  # checked by the query itself
    f = (translate_filter(f, kb.store.fields()) or None) if f is not None else filter
    call = {**(per_call.pop("settings", None) or {}), **per_call}
    s = {**(settings or {}), **call}
    if k is not None and "max_passages" not in call and "max_parents" not in call:
        s["max_passages"] = k
    return f, s
