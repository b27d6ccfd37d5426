"""The query pipeline: channels in parallel -> dedupe by parent per channel -> fuse -> expand
to parents -> pack into a token budget -> Result with a trace.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Callable

from ragsift.config import Settings
from ragsift.errors import QueryError
from ragsift.models.embedders import Embedder
from ragsift.retrieve.fusion import fuse
from ragsift.retrieve.packing import child_candidates, document_candidates, pack, parent_candidates
from ragsift.store.base import Store, StoredHit
from ragsift.store.filters import Node
from ragsift.text.analyzer import Analyzer
from ragsift.text.lang import detect_language
from ragsift.types import ChannelTrace, Hit, Passage, Result, Span, Trace

ChannelFn = Callable[[], list[StoredHit]]

FUSED_IN_TRACE = 100
_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="ragsift-channel")


_UNIT_KEYS: dict[str, Callable[[StoredHit], str]] = {
    "parent": lambda h: h.parent_id, "child": lambda h: h.child_id, "document": lambda h: h.doc_id}


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


def run_channels(channels: dict[str, ChannelFn], timeout_s: float) -> dict[str, tuple[list[StoredHit], float, str | None]]:
    """Run channels concurrently, each bounded by ``timeout_s``. A failing or slow channel
    yields no hits and an error; it never fails the query."""
    t0 = time.perf_counter()
    futures = {}
    for name, fn in channels.items():
        futures[name] = _pool.submit(_timed, fn)
    wait(list(futures.values()), timeout=timeout_s)
    out = {}
    for name, fut in futures.items():
        if not fut.done():
            fut.cancel()
            out[name] = ([], (time.perf_counter() - t0) * 1000, f"timed out after {timeout_s:g}s")
            continue
        hits, ms, err = fut.result()
        out[name] = (hits, ms, err)
    return out


def _timed(fn: ChannelFn) -> tuple[list[StoredHit], float, str | None]:
    t = time.perf_counter()
    try:
        return fn(), (time.perf_counter() - t) * 1000, None
    except Exception as e:  # a channel's failure is recorded, never raised
        return [], (time.perf_counter() - t) * 1000, f"{type(e).__name__}: {e}"


class Retriever:
    def __init__(self, store: Store, embedder_loader: Callable[[], Embedder], analyzer: Analyzer) -> None:
        self.store = store
        self._embedder_loader = embedder_loader
        self.analyzer = analyzer

    def _channels(self, query: str, s: Settings, where: Node | None) -> dict[str, ChannelFn]:
        depth = s.channel_depth
        fns: dict[str, ChannelFn] = {}
        if "dense" in s.channels:
            def dense() -> list[StoredHit]:
                vec = self._embedder_loader().embed_queries([query])[0]
                return self.store.search_dense(vec, depth, where)
            fns["dense"] = dense
        if "bm25" in s.channels:
            def bm25() -> list[StoredHit]:
                return self.store.search_bm25(self.analyzer.analyze(query), depth, where)
            fns["bm25"] = bm25
        return fns

    def retrieve(self, query: str, s: Settings, where: Node | None,
                 filter_spec: dict[str, Any] | None = None, expand: bool = True) -> Result:
        t0 = time.perf_counter()
        if not isinstance(query, str) or not query.strip():
            raise QueryError("the query is empty")
        if len(query) > s.max_query_chars:
            raise QueryError(f"the query is {len(query)} characters; the limit is {s.max_query_chars} "
                             "(setting max_query_chars)")
        query = query.strip()
        results = run_channels(self._channels(query, s, where), s.channel_timeout_s)
        t_channels = time.perf_counter()

        key = _UNIT_KEYS[s.unit]
        traces: list[ChannelTrace] = []
        rankings: dict[str, list[tuple[str, float]]] = {}
        spans: dict[str, dict[str, Span]] = {}
        best_hit: dict[str, tuple[StoredHit, tuple[str, ...]]] = {}
        for name, (hits, ms, err) in results.items():
            deduped = dedupe(hits, key)
            traces.append(ChannelTrace(name, tuple(Hit(h.child_id, h.parent_id, h.doc_id, h.score, r, h.start, h.end)
                                                   for h, r in deduped), ms, err, len(hits)))
            if err is None:
                rankings[name] = [(key(h), h.score) for h, _ in deduped]
            for h, _ in deduped:
                cur = spans.setdefault(h.parent_id, {}).get(h.child_id)
                chans = (cur.channels if cur else ()) + (name,)
                spans[h.parent_id][h.child_id] = Span(h.child_id, h.start, h.end, chans)
                best_hit[h.child_id] = (best_hit.get(h.child_id, (h,))[0], chans)
        fused = fuse(rankings, s.fusion, k=s.rrf_k, weights=s.weights, normalization=s.normalization) \
            if rankings else []
        t_fuse = time.perf_counter()

        passages: list[Passage] = []
        packing: dict[str, Any] = {}
        if expand:
            top = fused[: max(s.max_parents * 3, 10)]
            span_lists = {p: list(v.values()) for p, v in spans.items()}
            if s.unit == "parent":
                cands = parent_candidates(top, self.store.get_parents(pid for pid, _ in top), span_lists)
            elif s.unit == "child":
                parents = self.store.get_parents(best_hit[cid][0].parent_id for cid, _ in top)
                cands = child_candidates(top, best_hit, parents)
            else:
                cands = document_candidates(top, self.store.get_document_parents(d for d, _ in top), span_lists)
            passages, packing = pack(cands, s.token_budget, s.max_parents)
            packing["unit"] = s.unit
        t_end = time.perf_counter()
        fusion_info: dict[str, Any] = {"mode": s.fusion, "channels": list(rankings)}
        if s.fusion == "rrf":
            fusion_info["k"] = s.rrf_k
        else:
            fusion_info["weights"] = {c: s.weights.get(c, 0.0) for c in rankings}
            fusion_info["normalization"] = s.normalization
        if len(rankings) == 1:
            fusion_info["note"] = "single channel: its own order and raw scores"
        trace = Trace(
            query=query, language=detect_language(query), channels=tuple(traces), fusion=fusion_info,
            filter=filter_spec, generation=self.store.generation,
            timings_ms={"channels": (t_channels - t0) * 1000, "fusion": (t_fuse - t_channels) * 1000,
                        "expand_and_pack": (t_end - t_fuse) * 1000, "total": (t_end - t0) * 1000},
            fused=tuple(fused[:FUSED_IN_TRACE]), packing=packing)
        return Result(query, tuple(passages), trace)

    def rank_documents(self, query: str, s: Settings, k: int = 100,
                       where: Node | None = None) -> list[tuple[str, float]]:
        """Document ids by fused score (a document scores as its best parent), for evaluation."""
        res = self.retrieve(query, s, where, expand=False)
        key = _UNIT_KEYS[s.unit]
        doc_of = {key(h): h.doc_id for c in res.trace.channels for h in c.hits}
        seen: set[str] = set()
        out: list[tuple[str, float]] = []
        for pid, score in res.trace.fused:
            d = doc_of[pid]
            if d not in seen:
                seen.add(d)
                out.append((d, score))
        return out[:k]
