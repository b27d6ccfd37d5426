"""One retrieval round: channels in parallel -> deduplicate each channel by unit -> fuse ->
rerank. Its result is a ``SearchRound``, which single-shot retrieval expands into passages and
multi-hop merges with the rounds of its follow-up queries."""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import QueryError
from ragsift.models.embedders import Embedder
from ragsift.models.llm import LLM, llm_for
from ragsift.retrieve.channels import CHANNELS, ChannelContext
from ragsift.retrieve.channels.base import ENGINE_HYBRID
from ragsift.retrieve.found import Found
from ragsift.retrieve.fusion import Fused, FusionInput, run_fusion
from ragsift.retrieve.rerank import rerank
from ragsift.retrieve.runner import run_channels
from ragsift.retrieve.steps import Steps
from ragsift.retrieve.units import UnitStrategy, unit_strategy
from ragsift.store.base import Store, StoredHit
from ragsift.store.filters import Node
from ragsift.text.analyzer import Analyzer
from ragsift.text.clean import clean_str
from ragsift.text.lang import detect_language
from ragsift.text.links import TitleIndex
from ragsift.types import ChannelTrace, Hit, Ranking, Span

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchRound:
    """What one round found, before expansion.

    Rankings hold unit ids (``unit.key`` of a hit: a parent, entry or document id) with scores,
    best first. ``found`` has every entry any channel returned (its first hit, and the channels
    that returned it); ``spans`` the same entries as spans inside their parents.
    """

    query: str
    language: str
    unit: UnitStrategy
    channels: tuple[ChannelTrace, ...]  # per channel: deduplicated hits, time, error
    rankings: Mapping[str, Ranking]  # per channel that succeeded, unit ids with raw scores
    found: Mapping[str, Found]  # entry id -> its hit and the channels that found it
    spans: Mapping[str, Mapping[str, Span]]  # parent id -> entry id -> span in the parent
    fused: Fused  # after fusion: the ranking, and what the fusion mode did (the trace's ``fusion``)
    ranked: Ranking  # after reranking (the fused order without a reranker)
    transforms: Mapping[str, Any] = field(default_factory=dict)  # rewrite, HyDE, multi-query traces
    rerank: dict[str, Any] | None = None
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    # per term channel: the units its hits found in another language than the ones searched
    cross_language: Mapping[str, frozenset[str]] = field(default_factory=dict)
    multihop: dict[str, Any] | None = None  # multi-hop: every hop, and why it stopped
    provenance: Mapping[str, list[dict[str, Any]]] | None = None  # multi-hop: unit id -> hops that found it
    strategy: Mapping[str, Any] | None = None  # a named strategy, or auto's choice and its reason
    # unit id -> channel -> the channel's own score (``StoredHit.raw_score``) of the unit's best entry,
    # for the question of this round (a multi-hop search keeps its question's round's)
    evidence: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def span_lists(self) -> dict[str, list[Span]]:
        return {p: list(v.values()) for p, v in self.spans.items()}


def dedupe(hits: list[StoredHit], key: Callable[[StoredHit], str]) -> list[tuple[StoredHit, int]]:
    """Keep the best hit per unit (parent, child or document; hits come best first), so the
    chunks of one unit cannot each add score in fusion. Ranks are 1-based after dedup."""
    seen: set[str] = set()
    out: list[tuple[StoredHit, int]] = []
    for h in hits:
        k = key(h)
        if k in seen:
            continue
        seen.add(k)
        out.append((h, len(out) + 1))
    return out


def checked_query(query: Any, s: Settings) -> str:
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty")
    if len(query) > s.query.max_query_chars:
        raise QueryError(f"the query is {len(query)} characters; the limit is {s.query.max_query_chars} "
                         "(setting max_query_chars)")
    return clean_str(query.strip())  # a lone surrogate would fail every model and store


class Searcher:
    """Runs rounds on one store with one embedder and analyzer."""

    def __init__(self, store: Store, embedder: Callable[[], Embedder], analyzer: Analyzer) -> None:
        self.store, self.embedder, self.analyzer = store, embedder, analyzer
        self._titles: tuple[int, TitleIndex] | None = None

    def titles(self) -> TitleIndex:
        """The knowledge base's document titles, to find the documents a text names (multi-hop
        follows them); built once per committed generation."""
        gen, cached = self.store.generation, self._titles
        if cached is None or cached[0] != gen:
            cached = self._titles = (gen, TitleIndex(self.store.document_titles()))
        return cached[1]

    def llm(self, s: Settings) -> LLM:
        return llm_for(s.llm)

    def round(self, query: str, s: Settings, where: Node | None, deadline: Deadline | None = None) -> SearchRound:
        """One round: channels, fusion, optional reranking (no expansion), for a query already
        checked (``checked_query``). Cancelling ``deadline`` ends the round's channels and steps."""
        t0 = time.perf_counter()
        language = detect_language(query)
        channels = CHANNELS.build(s)
        corpus = self.store.languages() if s.llm.model and s.transforms.translate else {}
        steps = Steps(query, language, s, channels, lambda: self.llm(s), deadline, corpus)
        ctx = ChannelContext(query, language, s, where, self.store, self.analyzer, self.embedder, steps)
        # type-ignored: mypy cannot type a lambda with a default argument against a one-argument Callable
        results = run_channels({name: (lambda d, ch=ch: ch.search(ctx, d))  # type: ignore[misc]
                                for name, ch in channels.items()},
                               {name: s.timeout(name) for name in channels}, deadline)
        t_channels = time.perf_counter()

        unit = unit_strategy(s.query.unit)
        traces: list[ChannelTrace] = []
        rankings: dict[str, Ranking] = {}
        spans: dict[str, dict[str, Span]] = {}
        found: dict[str, Found] = {}
        discounts: dict[str, dict[str, float]] = {}
        evidence: dict[str, dict[str, float]] = {}
        w_cross = s.query.cross_language_weight
        for name, outcome in results.items():
            if outcome.error is not None:
                log.warning("channel %s failed for %r: %s", name, query[:80], outcome.error)
            hits = outcome.value or []
            deduped = dedupe(hits, unit.key)
            traces.append(ChannelTrace(name, tuple(Hit(h.child_id, h.parent_id, h.doc_id, h.score, r, h.start, h.end)
                                                   for h, r in deduped), outcome.elapsed_ms, outcome.error, len(hits)))
            if outcome.error is None:
                rankings[name] = [(unit.key(h), h.score) for h, _ in deduped]
                for h in hits:
                    mine = evidence.setdefault(unit.key(h), {})
                    mine[name] = max(mine.get(name, -math.inf), h.raw_score)
                if channels[name].matches_terms:
                    searched = {steps.written_language} if channels[name].steps else steps.searched_languages()
                    other = {unit.key(h): w_cross for h, _ in deduped if h.lang and h.lang not in searched}
                    if other:
                        discounts[name] = other
            for h, _ in deduped:
                cur = spans.setdefault(h.parent_id, {}).get(h.child_id)
                chans = (cur.channels if cur else ()) + (name,)
                spans[h.parent_id][h.child_id] = Span(h.child_id, h.start, h.end, chans)
                found[h.child_id] = Found(found[h.child_id].hit if h.child_id in found else h, chans)
        fused = run_fusion(s.query.fusion, FusionInput.of_query(
            rankings, s.query, query=query, language=language, discounts=discounts if w_cross != 1.0 else None,
            fused_by_store=tuple(c for c in rankings if c == ENGINE_HYBRID)))
        t_fuse = time.perf_counter()
        ranked, rerank_info = fused.ranking, None
        timings = {"channels": (t_channels - t0) * 1000, "fusion": (t_fuse - t_channels) * 1000}
        if s.rerank.model and ranked:
            ranked, rerank_info = rerank(query, ranked, s, found, unit, self.store, lambda: self.llm(s), deadline)
            timings["rerank"] = (time.perf_counter() - t_fuse) * 1000
        return SearchRound(query, language, unit, tuple(traces), rankings, found, spans, fused, ranked,
                           steps.trace(), rerank_info, timings, {c: frozenset(v) for c, v in discounts.items()},
                           evidence=evidence)
