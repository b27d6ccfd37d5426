"""The query pipeline: channels in parallel -> dedupe by parent per channel -> fuse -> expand
to parents -> pack into a token budget -> Result with a trace.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import QueryError, RagsiftError
from ragsift.ingest.small_index import is_synthetic
from ragsift.models.embedders import Embedder, load_embedder
from ragsift.models.llm import LLM, load_llm
from ragsift.models.rerankers import load_reranker
from ragsift.retrieve.fusion import fuse, rrf
from ragsift.retrieve.packing import (auto_merge, child_candidates, document_candidates, hits_by_unit, pack,
                                      parent_candidates, window_candidates)
from ragsift.retrieve.runner import Shared, run_channels
from ragsift.retrieve.transforms import (generate_hypotheses, hyde_text, hyde_vector, multi_queries,
                                         rewrite_query)
from ragsift.store.base import Store, StoredHit
from ragsift.store.filters import Node
from ragsift.text.analyzer import Analyzer
from ragsift.text.keywords import entity_terms
from ragsift.text.lang import detect_language
from ragsift.text.tokens import cut_to_tokens
from ragsift.types import ChannelTrace, Hit, Passage, Result, Span, Trace

ChannelFn = Callable[[Deadline], list[StoredHit]]

FUSED_IN_TRACE = 100


_UNIT_KEYS: dict[str, Callable[[StoredHit], str]] = {
    "parent": lambda h: h.parent_id, "child": lambda h: h.child_id, "document": lambda h: h.doc_id,
    # windows and auto-merging start from the entries found; they are widened after fusion
    "window": lambda h: h.child_id, "auto": lambda h: h.child_id}


def dedupe(hits: list[StoredHit], key: Callable[[StoredHit], str]) -> list[tuple[StoredHit, int]]:
    """Keep the best hit per unit (parent, child or document; hits come best first), so the
    chunks of one unit cannot each add score in fusion. Ranks are 1-based after dedup."""
    seen: set[str] = set()
    out = []
    for h in hits:
        k = key(h)
        if k in seen:
            continue
        seen.add(k)
        out.append((h, len(out) + 1))
    return out


def dedupe_by_parent(hits: list[StoredHit]) -> list[tuple[StoredHit, int]]:
    return dedupe(hits, _UNIT_KEYS["parent"])


def checked_query(query: Any, s: Settings) -> str:
    if not isinstance(query, str) or not query.strip():
        raise QueryError("the query is empty")
    if len(query) > s.max_query_chars:
        raise QueryError(f"the query is {len(query)} characters; the limit is {s.max_query_chars} "
                         "(setting max_query_chars)")
    return query.strip()


class _Steps:
    """The LLM steps of one query, each run once and shared by the channels that need it."""

    def __init__(self, retriever: "Retriever", query: str, language: str, s: Settings) -> None:
        self.query, self.language, self.s = query, language, s
        llm = retriever.llm

        def last(*channels: str) -> float:
            """When the last of these channels that runs must end (channel deadlines run from
            the same start): a step they share never outlives them nor starves one of them."""
            return max((s.timeout(c) for c in channels if c in s.channels), default=s.channel_timeout_s)

        def until(*channels: str) -> Deadline:
            return Deadline(last(*channels))

        # the rewrite has its own, shorter timeout so the channels waiting for it can fall back
        rewrite_until = Deadline(min(s.timeout("rewrite"), last("dense", "bm25")))
        self.rewrite = Shared(lambda d: rewrite_query(
            llm(s), query, language, prompts=s.prompts, deadline=rewrite_until)) if s.rewrite else None
        self.rewrite_error: str | None = None
        n = s.hyde_samples if s.hyde_mode == "mean" else 1
        hyde_until = until("hyde", "hyde_bm25")
        self.hyde = Shared(lambda d: generate_hypotheses(
            llm(s), query, language, n, temperature=s.hyde_temperature, max_tokens=s.hyde_max_tokens,
            prompts=s.prompts, deadline=hyde_until))
        multi_until = until("multi_query")
        self.multi = Shared(lambda d: multi_queries(
            llm(s), query, language, s.multi_query_n, prompts=s.prompts, deadline=multi_until))

    def plain_query(self, deadline: Deadline) -> str:
        """The query the plain channels search: the rewrite, or the question when rewriting is
        off or fails (the rewrite has its own timeout, so the channels still have time)."""
        if self.rewrite is None:
            return self.query
        try:
            return self.rewrite.get(deadline)
        except RagsiftError as e:
            self.rewrite_error = f"{type(e).__name__}: {e}"
            return self.query

    def trace(self, channels: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.rewrite is not None and self.rewrite.done:
            value, err = self.rewrite.outcome()
            out["rewrite"] = {"original": self.query, "rewritten": value,
                              "error": self.rewrite_error or (f"{type(err).__name__}: {err}" if err else None)}
        if channels & {"hyde", "hyde_bm25"}:
            value, err = self.hyde.outcome()
            h = {"mode": self.s.hyde_mode, "hypotheses": value.texts if value else [],
                 "errors": (value.errors if value else []) + ([f"{type(err).__name__}: {err}"] if err else []),
                 "elapsed_ms": round(value.elapsed_ms, 3) if value else None}
            out["hyde"] = h
        if "multi_query" in channels:
            value, err = self.multi.outcome()
            out["multi_query"] = {"queries": value or [], "error": f"{type(err).__name__}: {err}" if err else None}
        return out


class Retriever:
    def __init__(self, store: Store, embedder_loader: Callable[[], Embedder], analyzer: Analyzer) -> None:
        self.store = store
        self._embedder_loader = embedder_loader
        self.analyzer = analyzer

    @staticmethod
    def unit_key(unit: str) -> Callable[[StoredHit], str]:
        return _UNIT_KEYS[unit]

    def _find(self, query: str, s: Settings, where: Node | None) -> dict[str, Any]:
        if s.multihop != "off":
            from ragsift.retrieve.multihop import MultiHopSearch

            return MultiHopSearch(self, checked_query(query, s), s, where).run()
        return self.search(query, s, where)

    def llm(self, s: Settings) -> LLM:
        return load_llm(s.llm, base_url=s.llm_base_url or None, cache=s.llm_cache,
                        max_retries=s.llm_max_retries, max_concurrency=s.llm_max_concurrency)

    def _channels(self, steps: _Steps, s: Settings, where: Node | None) -> dict[str, ChannelFn]:
        depth, question, kinds = s.channel_depth, steps.query, s.index_kinds
        embedder = self._embedder_loader
        fns: dict[str, ChannelFn] = {}
        dense_search = lambda vec: self.store.search_dense(vec, depth, where, kinds)  # noqa: E731
        bm25_search = lambda text: self.store.search_bm25(self.analyzer.analyze(text), depth, where, kinds)  # noqa: E731

        def dense(d: Deadline) -> list[StoredHit]:
            return dense_search(embedder().embed_queries([steps.plain_query(d)])[0])

        def bm25(d: Deadline) -> list[StoredHit]:
            return bm25_search(steps.plain_query(d))

        def hyde(d: Deadline) -> list[StoredHit]:
            return dense_search(hyde_vector(embedder(), question, steps.hyde.get(d), s.hyde_mode))

        def hyde_bm25(d: Deadline) -> list[StoredHit]:
            return bm25_search(hyde_text(question, steps.hyde.get(d), s.hyde_mode))

        def multi_query(d: Deadline) -> list[StoredHit]:
            queries = steps.multi.get(d)
            vecs = embedder().embed_queries(queries)
            lists: dict[str, list[tuple[str, float]]] = {}
            by_id: dict[str, StoredHit] = {}
            for i, q in enumerate(queries):
                for name, hits in ((f"dense{i}", dense_search(vecs[i])), (f"bm25{i}", bm25_search(q))):
                    lists[name] = [(h.child_id, h.score) for h in hits]
                    by_id.update((h.child_id, h) for h in hits if h.child_id not in by_id)
            return [StoredHit(cid, by_id[cid].parent_id, by_id[cid].doc_id, score, by_id[cid].start, by_id[cid].end)
                    for cid, score in rrf(lists, k=s.rrf_k)[:depth]]

        def keywords(d: Deadline) -> list[StoredHit]:
            """The question's terms against the chunks' key words and phrases only."""
            return self.store.search_bm25(self.analyzer.analyze(steps.plain_query(d)), depth, where, ("keywords",))

        def entities(d: Deadline) -> list[StoredHit]:
            """The question's named entities against the chunks' entities; no entity, no hits."""
            terms = entity_terms(steps.plain_query(d))
            return self.store.search_bm25(terms, depth, where, ("entities",)) if terms else []

        def sparse(d: Deadline) -> list[StoredHit]:
            """Learned sparse (BGE-M3 / SPLADE style): the question's term weights, dot product."""
            from ragsift.models.sparse import load_sparse_encoder

            q = load_sparse_encoder(s.sparse_encoder).encode_queries([steps.plain_query(d)])[0]
            return self.store.search_sparse(q, depth, where, kinds)

        def other_embedder(name: str) -> ChannelFn:
            def dense_other(d: Deadline) -> list[StoredHit]:
                vec = load_embedder(name).embed_queries([steps.plain_query(d)])[0]
                return self.store.search_dense(vec, depth, where, kinds, using=name)
            return dense_other

        table = {"dense": dense, "bm25": bm25, "hyde": hyde, "hyde_bm25": hyde_bm25, "multi_query": multi_query,
                 "keywords": keywords, "entities": entities, "sparse": sparse}
        for name in s.channels:
            fns[name] = other_embedder(name[len("dense:"):]) if name.startswith("dense:") else table[name]
        return fns

    def rerank(self, query: str, fused: list[tuple[str, float]], s: Settings,
                best_hit: dict[str, tuple[StoredHit, tuple[str, ...]]], key: Callable[[StoredHit], str]
                ) -> tuple[list[tuple[str, float]], dict[str, Any]]:
        """Rerank the top ``rerank_top_n`` units; the rest keep their fused order. On failure
        (or when time runs out part way) the units not judged keep their fused order."""
        t = time.perf_counter()
        top = fused[: s.rerank_top_n]
        info: dict[str, Any] = {"model": s.rerank, "top_n": s.rerank_top_n, "judged": 0, "scores": [], "error": None}
        try:
            reranker = load_reranker(s.rerank, lambda: self.llm(s), s.prompts)
            info["model"] = reranker.name
            hit_of = hits_by_unit(best_hit, key)
            parents = self.store.get_parents(hit_of[u].parent_id for u, _ in top)
            texts = []
            for u, _ in top:
                h = hit_of[u]
                p = parents[h.parent_id].parent
                text = p.text[h.start:h.end] if s.unit == "child" else p.text
                head = " > ".join(p.heading_path)
                texts.append(cut_to_tokens((head + "\n" if head else "") + text, s.rerank_max_tokens))
            scores = reranker.score(query, texts, Deadline(s.timeout("rerank")))
        except RagsiftError as e:
            info["error"] = f"{type(e).__name__}: {e}"
            scores = []
        if len(scores) < len(top) and info["error"] is None:
            info["error"] = f"out of time: judged {len(scores)} of {len(top)}"
        judged = top[: len(scores)]
        order = sorted(range(len(judged)), key=lambda i: (-scores[i], i))
        info["judged"] = len(scores)
        info["scores"] = [{"id": judged[i][0], "score": round(scores[i], 4), "fused_rank": i + 1} for i in order]
        info["elapsed_ms"] = round((time.perf_counter() - t) * 1000, 3)
        return [judged[i] for i in order] + fused[len(judged):], info

    def search(self, query: str, s: Settings, where: Node | None) -> dict[str, Any]:
        """One retrieval round: channels, fusion, optional reranking (no expansion)."""
        t0 = time.perf_counter()
        query = checked_query(query, s)
        language = detect_language(query)
        steps = _Steps(self, query, language, s)
        results = run_channels(self._channels(steps, s, where), {c: s.timeout(c) for c in s.channels})
        t_channels = time.perf_counter()

        key = _UNIT_KEYS[s.unit]
        traces: list[ChannelTrace] = []
        rankings: dict[str, list[tuple[str, float]]] = {}
        spans: dict[str, dict[str, Span]] = {}
        best_hit: dict[str, tuple[StoredHit, tuple[str, ...]]] = {}
        for name, outcome in results.items():
            hits = outcome.value or []
            deduped = dedupe(hits, key)
            traces.append(ChannelTrace(name, tuple(Hit(h.child_id, h.parent_id, h.doc_id, h.score, r, h.start, h.end)
                                                   for h, r in deduped), outcome.elapsed_ms, outcome.error, len(hits)))
            if outcome.error is None:
                rankings[name] = [(key(h), h.score) for h, _ in deduped]
            for h, _ in deduped:
                cur = spans.setdefault(h.parent_id, {}).get(h.child_id)
                chans = (cur.channels if cur else ()) + (name,)
                spans[h.parent_id][h.child_id] = Span(h.child_id, h.start, h.end, chans)
                best_hit[h.child_id] = (best_hit.get(h.child_id, (h,))[0], chans)
        fused = fuse(rankings, s.fusion, k=s.rrf_k, weights=s.weights, normalization=s.normalization) \
            if rankings else []
        t_fuse = time.perf_counter()
        ranked, rerank_info = fused, None
        if s.rerank and fused:
            ranked, rerank_info = self.rerank(query, fused, s, best_hit, key)
        t_rerank = time.perf_counter()
        return {"query": query, "language": language, "steps": steps, "traces": traces, "rankings": rankings,
                "spans": spans, "best_hit": best_hit, "fused": fused, "ranked": ranked, "rerank": rerank_info,
                "times": (t0, t_channels, t_fuse, t_rerank)}

    def retrieve(self, query: str, s: Settings, where: Node | None,
                 filter_spec: dict[str, Any] | None = None, expand: bool = True) -> Result:
        f = self._find(query, s, where)
        t0, t_channels, t_fuse, t_rerank = f["times"]
        ranked, spans, best_hit, rankings = f["ranked"], f["spans"], f["best_hit"], f["rankings"]
        passages: list[Passage] = []
        packing: dict[str, Any] = {}
        if expand:
            top = ranked[: max(s.max_parents * 3, 10)]
            span_lists = {p: list(v.values()) for p, v in spans.items()}
            if s.unit == "parent":
                cands = parent_candidates(top, self.store.get_parents(pid for pid, _ in top), span_lists)
            elif s.unit == "child":
                parents = self.store.get_parents(best_hit[cid][0].parent_id for cid, _ in top)
                cands = child_candidates(top, best_hit, parents)
            elif s.unit == "window":
                parents = self.store.get_parents(best_hit[cid][0].parent_id for cid, _ in top)
                cands = window_candidates(top, best_hit, parents, s.window_sentences)
            elif s.unit == "auto":
                cands, packing["merging"] = self._auto_candidates(ranked, best_hit, span_lists, s)
            else:
                cands = document_candidates(top, self.store.get_document_parents(d for d, _ in top), span_lists)
            merging = packing.get("merging")
            passages, packing = pack(cands, s.token_budget, s.max_parents)
            packing["unit"] = s.unit
            if merging is not None:
                packing["merging"] = merging
            if f.get("provenance") is not None:
                prov = f["provenance"]
                unit_of = {"parent": lambda p: p.parent_id, "document": lambda p: p.doc_id,
                           "child": lambda p: p.matched[0].child_id if p.matched else ""}[s.unit]
                passages = [replace(p, provenance=tuple(prov.get(unit_of(p), ()))) for p in passages]
        t_end = time.perf_counter()
        fusion_info: dict[str, Any] = {"mode": s.fusion, "channels": list(rankings)}
        if s.fusion == "rrf":
            fusion_info["k"] = s.rrf_k
        else:
            fusion_info["weights"] = {c: s.weights.get(c, 0.0) for c in rankings}
            fusion_info["normalization"] = s.normalization
        if len(rankings) == 1:
            fusion_info["note"] = "single channel: its own order and raw scores"
        timings = {"channels": (t_channels - t0) * 1000, "fusion": (t_fuse - t_channels) * 1000}
        if f["rerank"] is not None:
            timings["rerank"] = (t_rerank - t_fuse) * 1000
        timings.update({"expand_and_pack": (t_end - t_rerank) * 1000, "total": (t_end - t0) * 1000})
        trace = Trace(
            query=f["query"], language=f["language"], channels=tuple(f["traces"]), fusion=fusion_info,
            filter=filter_spec, generation=self.store.generation, timings_ms=timings,
            fused=tuple(f["fused"][:FUSED_IN_TRACE]), packing=packing,
            transforms=f["steps"].trace(set(s.channels)), rerank=f["rerank"], multihop=f.get("multihop"))
        return Result(f["query"], tuple(passages), trace)

    def _auto_candidates(self, ranked: list[tuple[str, float]], best_hit: dict[str, tuple[StoredHit, tuple[str, ...]]],
                         span_lists: dict[str, list[Span]], s: Settings) -> tuple[list, dict[str, Any]]:
        """Auto-merging over the top entries found (as many as other units consider: three per
        passage asked for, at least ten), then candidates at each merged level."""
        found = [(cid, score) for cid, score in ranked if cid in best_hit][: max(s.max_parents * 3, 10)]
        parent_ids = {best_hit[cid][0].parent_id for cid, _ in found}
        doc_ids = {best_hit[cid][0].doc_id for cid, _ in found}
        chunks = self.store.count_children(parent_ids)
        doc_parents = self.store.get_document_parents(doc_ids)
        sections = {d: sum(1 for sp in ps if not is_synthetic(sp.parent)) for d, ps in doc_parents.items()}
        units, trace = auto_merge(found, best_hit, chunks, sections, s.merge_threshold)
        parents = self.store.get_parents(pid for pid in parent_ids)
        cands = []
        for level, key, score in units:
            if level == "document":
                cands += document_candidates([(key, score)], doc_parents, span_lists)
            elif level == "parent":
                cands += parent_candidates([(key, score)], parents, span_lists)
            else:
                cands += child_candidates([(key, score)], best_hit, parents)
        return cands, trace

    def rank_documents(self, query: str, s: Settings, k: int = 100, where: Node | None = None,
                       details: dict[str, Any] | None = None) -> list[tuple[str, float]]:
        """Document ids in final order (a document ranks as its best unit), for evaluation.
        ``details``, if given, receives the multi-hop trace."""
        f = self._find(query, s, where)
        if details is not None:
            details["multihop"] = f.get("multihop")
        key = _UNIT_KEYS[s.unit]
        doc_of = {key(h): h.doc_id for h, _ in f["best_hit"].values()}
        seen: set[str] = set()
        out: list[tuple[str, float]] = []
        for unit, score in f["ranked"]:
            d = doc_of[unit]
            if d not in seen:
                seen.add(d)
                out.append((d, score))
        return out[:k]
