"""Reranking the top fused units: the reranker (``ragsift.models.rerankers``) scores the text
that stands for each unit (its heading and ``unit.read``, cut to ``rerank_max_tokens``); the
units after ``rerank_top_n`` keep their fused order. On failure, or when time runs out part
way, the units not judged keep their fused order and the error is traced."""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ragsift.cancel import Deadline
from ragsift.config import Settings
from ragsift.errors import RagsiftError
from ragsift.models.llm import LLM
from ragsift.retrieve.found import Found, hits_by_unit
from ragsift.retrieve.units import UnitStrategy
from ragsift.store.base import Store
from ragsift.text.tokens import cut_to_tokens
from ragsift.types import Ranking


def rerank(query: str, fused: Ranking, s: Settings, found: Mapping[str, Found],
           unit: UnitStrategy, store: Store, llm: Callable[[], LLM], parent: Deadline | None = None
           ) -> tuple[Ranking, dict[str, Any]]:
    t = time.perf_counter()
    r = s.rerank
    top = fused[: r.top_n]
    info: dict[str, Any] = {"model": r.model, "top_n": r.top_n, "judged": 0, "scores": [], "error": None}
    try:
        from ragsift.models.rerankers import load_reranker  # a query without a reranker never imports it

        reranker = load_reranker(r.model, llm, s.llm.prompts, r.base_url)
        info["model"] = reranker.name
        hit_of = hits_by_unit(found, unit.key)
        parents = store.get_parents(hit_of[u].parent_id for u, _ in top)
        texts = []
        for u, _ in top:
            h = hit_of[u]
            sp = parents[h.parent_id]
            head = " > ".join(sp.parent.heading_path)
            texts.append(cut_to_tokens((head + "\n" if head else "") + unit.read(h, sp, s.query), r.max_tokens))
        timeout = s.timeout("rerank")
        scores = reranker.score(query, texts, parent.child(timeout) if parent is not None else Deadline(timeout))
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
