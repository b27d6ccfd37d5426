"""The query pipeline, one name per step:

    Retriever.answer(question)        -> Result: passages and the trace (what a user asks for)
      Retriever.search(question)      -> SearchRound: the ranked units, by the query's strategy
        strategy.search               one round, or a multi-hop search (``multihop``), or auto's choice
          Searcher.round              channels in parallel, deduplicated by unit, fused, reranked
      unit.candidates                 the ranked units expanded (``units/``)
      packing.pack                    packed into the token budget
    Retriever.rank_documents          document ids in final order (evaluation)

The knowledge base reaches the engine through ``Retriever`` only."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import QuerySettings, Settings
from ragsift.errors import RetrievalError
from ragsift.models.embedders import Embedder
from ragsift.retrieve import strategy
from ragsift.retrieve.channels import CHANNELS
from ragsift.retrieve.channels.base import ENGINE_HYBRID
from ragsift.retrieve.confidence import judge, question_terms, searchable, term_match, unsearchable
from ragsift.retrieve.found import Candidate
from ragsift.retrieve.highlight import best_sentences
from ragsift.retrieve.packing import pack
from ragsift.retrieve.search import Searcher, SearchRound, checked_query
from ragsift.retrieve.units import check_unit
from ragsift.retrieve.whole import parts_of
from ragsift.store.base import Store
from ragsift.store.filters import Node
from ragsift.text.analyzer import Analyzer
from ragsift.text.lang import detect_language
from ragsift.types import Match, Passage, Ranking, Result, Trace, located

FUSED_IN_TRACE = 100


def merged_provenance(prov: Mapping[str, list[dict[str, Any]]], members: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """The hops that found any of a passage's members; per hop and query its best rank."""
    best: dict[tuple[int, str], dict[str, Any]] = {}
    for m in members:
        for e in prov.get(m, ()):
            k = (e["hop"], e["query"])
            if k not in best or e["rank"] < best[k]["rank"]:
                best[k] = e
    return tuple(sorted(best.values(), key=lambda e: e["hop"]))


class Retriever:
    """Answers queries on one store: ``answer`` gives passages and a trace, ``search`` the ranked
    units before expansion, ``rank_documents`` document ids in final order (for evaluation)."""

    def __init__(self, store: Store, embedder: Callable[[], Embedder], analyzer: Analyzer) -> None:
        self.store, self.analyzer = store, analyzer
        self.searcher = Searcher(store, embedder, analyzer)

    @staticmethod
    def check(s: Settings) -> None:
        """Settings the query layer must accept: channels, their weights and timeouts; the unit
        (registered, and its own rule)."""
        CHANNELS.check(s)
        check_unit(s)

    def search(self, query: str, s: Settings, where: Node | None, deadline: Deadline | None = None,
               shown: bool = True) -> SearchRound:
        """The ranked units for a query (checked once, here): one round, or a multi-hop search,
        as its ``strategy`` says (``shown`` off: the router's signals without the question's entities)."""
        return strategy.search(self.searcher, checked_query(query, s), s, where, deadline, shown)

    def answer(self, query: str, s: Settings, where: Node | None,
               filter_spec: dict[str, Any] | None = None, deadline: Deadline | None = None,
               name_units: bool = True) -> Result:
        """Passages for a query, packed into its budget, and the trace of how they were found
        (``name_units`` off, for a caller that shows no trace: the trace's ``units`` left empty, its
        sections never read, and the router's signals without the question's entities)."""
        t0 = time.perf_counter()
        if not searchable(query):  # only emoji, punctuation, symbols: nothing to search, nothing returned
            return self._nothing_to_search(checked_query(query, s), s, filter_spec, t0)
        r = self.search(query, s, where, deadline, shown=name_units)
        t_found = time.perf_counter()
        if r.channels and all(c.error for c in r.channels):
            raise RetrievalError("every channel failed: " + "; ".join(
                f"{c.name}: {(c.error or '').splitlines()[0][:200]}" for c in r.channels))
        passages, packing, match = self._passages(r, s.query)
        t_end = time.perf_counter()
        units = self._named_units(r) if name_units else {}
        timings = {**r.timings_ms, "expand_and_pack": (t_end - t_found) * 1000,
                   "total": (time.perf_counter() - t0) * 1000}
        trace = Trace(
            query=r.query, language=r.language, channels=r.channels, fusion=fusion_trace(r, s.query),
            filter=filter_spec, generation=self.store.generation, timings_ms=timings,
            fused=tuple(r.fused.ranking[:FUSED_IN_TRACE]), packing=packing,
            transforms=dict(r.transforms), rerank=r.rerank, multihop=r.multihop,
            strategy=dict(r.strategy) if r.strategy is not None else None, units=units)
        return Result(r.query, tuple(passages), trace, match=match)

    def _passages(self, r: SearchRound, q: QuerySettings) -> tuple[list[Passage], dict[str, Any], Match]:
        """The round's units expanded by its unit, packed into the budget, with their best sentences
        and scores; the packing's trace; how well they match the question."""
        cands, extra = r.unit.candidates(r.ranked, r.found, r.span_lists(), self.store, q)
        if r.provenance is not None:
            cands = [_with_provenance(c, r.provenance) for c in cands]
        cands = [replace(c, passage=replace(c.passage, scores=channel_scores(r.evidence, c.members))) for c in cands]
        passages, packing = pack(cands, q.token_budget, q.max_passages)
        terms = question_terms(r.query, self.analyzer)
        passages = [replace(p, sentences=best_sentences(p.text, p.matched, r.query, self.analyzer, p.heading),
                            term_match=term_match(terms, "\n".join((p.title, *p.heading_path, p.text)), self.analyzer))
                    for p in passages]
        bm25 = r.rankings.get("bm25")
        dense = [v["dense"] for v in r.evidence.values() if "dense" in v] if "dense" in r.rankings else None
        match = judge(passages, q, dense=dense, terms=terms, cross_language=_cross_language(r),
                      term_hits=None if bm25 is None else len(bm25), empty=self.store.generation == 0)
        packing["unit"] = r.unit.name  # a strategy may set its own
        packing.update(extra)
        return passages, packing, match

    def _nothing_to_search(self, query: str, s: Settings, filter_spec: dict[str, Any] | None, t0: float) -> Result:
        """The result of a question with nothing to search (``confidence.searchable``): no passages,
        no good match, and a trace that says no channel ran."""
        trace = Trace(query=query, language=detect_language(query), channels=(),
                      fusion={"mode": s.query.fusion, "channels": [], "note": "nothing to search: no channel ran"},
                      filter=filter_spec, generation=self.store.generation,
                      timings_ms={"total": (time.perf_counter() - t0) * 1000})
        return Result(query, (), trace, match=unsearchable(s.query))

    def _named_units(self, r: SearchRound) -> dict[str, dict[str, Any]]:
        """The ids the trace shows (the sections of the channels' hits, the fused units) named by
        source and heading path, so a reader of the trace needs no id: one read of those sections'
        labels (their text is not read)."""
        hit_of = {r.unit.key(f.hit): f.hit for f in r.found.values()}
        section_of = {h.parent_id: h.parent_id for c in r.channels for h in c.hits}
        documents: set[str] = set()
        for key, _ in r.fused.ranking[:FUSED_IN_TRACE]:
            h = hit_of.get(key)
            if h is not None:
                section_of.setdefault(key, h.parent_id)
                if key == h.doc_id != h.parent_id:  # unit document: named by its source alone
                    documents.add(key)
        labels = self.store.parent_labels(set(section_of.values()))
        out: dict[str, dict[str, Any]] = {}
        for key, pid in section_of.items():
            label = labels.get(pid)
            if label is not None:
                whole = key in documents
                out[key] = {"source": label.source, "heading_path": [] if whole else list(label.heading_path),
                            "location": None if whole else located(label.location)}
        return out

    def rank_documents(self, query: str, s: Settings, k: int = 100, where: Node | None = None,
                       details: dict[str, Any] | None = None) -> Ranking:
        """Document ids in final order (a document ranks as its best unit), for evaluation.
        ``details``, if given, receives the multi-hop and strategy traces."""
        r = self.search(query, s, where)
        if details is not None:
            details["multihop"] = r.multihop
            details["strategy"] = r.strategy
        doc_of = {r.unit.key(f.hit): f.hit.doc_id for f in r.found.values()}
        seen: set[str] = set()
        out: Ranking = []
        for unit, score in r.ranked:
            d = doc_of[unit]
            if d not in seen:
                seen.add(d)
                out.append((d, score))
        return out[:k]


def _cross_language(r: SearchRound) -> bool:
    """Whether the dense channel's best entry is in another language than the question (both known)."""
    best = next((c.hits[0] for c in r.channels if c.name == "dense" and c.hits), None)
    found = r.found.get(best.child_id) if best is not None else None
    lang = found.hit.lang if found is not None else ""
    return lang in ("zh", "en") and r.language in ("zh", "en") and lang != r.language


def fusion_trace(r: SearchRound, q: QuerySettings) -> dict[str, Any]:
    """The trace's ``fusion``: what the fusion did (``Fused.info``: the mode, the channels, the mode's
    own details, a single channel's note) and what made the channels' scores beside it."""
    out = dict(r.fused.info)
    note = out.pop("note", None)  # kept last, where the trace has always shown it
    if parts_of(q.index_kinds):
        # per channel, how a section's whole entry and its parts made its score (ragsift.retrieve.whole;
        # the engine's one hybrid search takes the better of the two)
        used = {c: None if c == ENGINE_HYBRID else q.whole_weight(c) for c in r.rankings
                if CHANNELS.make(c).searches_kinds}
        out["whole_weights"] = {c: "max" if w is None else w for c, w in used.items()}
    if q.tuned_by:
        out["tuned_by"] = q.tuned_by
    if r.cross_language:
        out["cross_language"] = {"question": r.language, "weight": q.cross_language_weight,
                                 "hits": {c: len(v) for c, v in r.cross_language.items()}}
    return out if note is None else {**out, "note": note}


def channel_scores(evidence: Mapping[str, Mapping[str, float]], members: tuple[str, ...]) -> dict[str, float]:
    """Per channel, its own best score of a passage's members (the ranked units it stands for)."""
    out: dict[str, float] = {}
    for m in members:
        for channel, v in evidence.get(m, {}).items():
            if channel not in out or v > out[channel]:
                out[channel] = v
    return {c: round(float(v), 6) for c, v in out.items()}


def _with_provenance(c: Candidate, prov: Mapping[str, list[dict[str, Any]]]) -> Candidate:
    return replace(c, passage=replace(c.passage, provenance=merged_provenance(prov, c.members)))
