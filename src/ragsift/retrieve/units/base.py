"""The base of units: what a query returns, from the entries its channels found.

A unit (``UnitStrategy``) says
- ``key``: what a hit counts as before fusion (its parent, itself, its document): channels are
  deduplicated by it, fusion and reranking rank it, multi-hop counts what is new by it;
- ``read``: the text that stands for a hit's unit when a reranker judges it or multi-hop reads it;
- ``candidates``: the ranked units turned into packable candidates (``found.Candidate``), with
  their members (the ranked ids each stands for, for multi-hop provenance) and what the trace
  should show. Each unit builds its own candidates in its own module.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.found import Candidate, Found, candidate
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.types import Ranking, Span


def considered(q: QuerySettings) -> int:
    """How many ranked units are expanded: three per passage asked for, at least ten."""
    return max(q.max_passages * 3, 10)


class UnitStrategy:
    """Base: the parent section. Subclasses change what they differ in."""

    name: Unit = Unit.PARENT

    def key(self, h: StoredHit) -> str:
        return h.parent_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        return parent.parent.text

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        return parent_candidates(top, store.get_parents(pid for pid, _ in top), dict(spans)), {}


def parent_candidates(fused: Ranking, parents: dict[str, StoredParent],
                      spans: dict[str, list[Span]]) -> list[Candidate]:
    out = []
    for pid, score in fused:
        sp = parents.get(pid)
        if sp is not None:
            out.append(candidate(pid, score, sp, sp.parent.text, sp.parent.tokens, tuple(spans.get(pid, ())),
                                  "parent"))
    return out
