"""Units as strategies: what a query returns, from the entries its channels found.

Each unit says
- ``key``: what a hit counts as before fusion (its parent, itself, its document): channels are
  deduplicated by it, fusion and reranking rank it, multi-hop counts what is new by it;
- ``read``: the text that stands for a hit's unit when a reranker judges it or multi-hop reads it;
- ``candidates``: the ranked units turned into packable candidates, with their members (the
  ranked ids each stands for, for multi-hop provenance) and what the trace should show.

| unit | key | returned |
|---|---|---|
| ``parent`` (default) | parent id | the whole section (small-to-big) |
| ``child`` | entry id | the entry's own span (flat chunks) |
| ``document`` | document id | the document's sections joined |
| ``window`` | entry id | the entry widened by ``window_sentences`` sentences, overlapping windows merged |
| ``auto`` | entry id | entries, or their section, or their document, by the share found (auto-merging) |

Single-shot retrieval, multi-hop, reranking and ``rank_documents`` all go through ``UNITS``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.packing import (Candidate, Found, auto_merge, child_candidates, document_candidates,
                                      parent_candidates, window_bounds, window_candidates)
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.types import Span

Ranked = Sequence[tuple[str, float]]


def considered(q: QuerySettings) -> int:
    """How many ranked units are expanded: three per passage asked for, at least ten."""
    return max(q.max_parents * 3, 10)


class UnitStrategy:
    """Base: the parent section. Subclasses change what they differ in."""

    name: Unit = Unit.PARENT

    def key(self, h: StoredHit) -> str:
        return h.parent_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        return parent.parent.text

    def candidates(self, ranked: Ranked, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        return parent_candidates(top, store.get_parents(pid for pid, _ in top), dict(spans)), {}


class ParentUnit(UnitStrategy):
    name = Unit.PARENT


class ChildUnit(UnitStrategy):
    name = Unit.CHILD

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        return parent.parent.text[h.start:h.end]

    def candidates(self, ranked, found, spans, store, q):
        top = ranked[:considered(q)]
        parents = store.get_parents(found[cid].hit.parent_id for cid, _ in top)
        return child_candidates(top, found, parents), {}


class DocumentUnit(UnitStrategy):
    name = Unit.DOCUMENT

    def key(self, h: StoredHit) -> str:
        return h.doc_id

    def candidates(self, ranked, found, spans, store, q):
        top = ranked[:considered(q)]
        return document_candidates(top, store.get_document_parents(d for d, _ in top), dict(spans)), {}


class WindowUnit(UnitStrategy):
    name = Unit.WINDOW

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        start, end = window_bounds(parent.parent.text, h.start, h.end, q.window_sentences)
        return parent.parent.text[start:end]

    def candidates(self, ranked, found, spans, store, q):
        top = ranked[:considered(q)]
        parents = store.get_parents(found[cid].hit.parent_id for cid, _ in top)
        return window_candidates(top, found, parents, q.window_sentences), {}


class AutoUnit(UnitStrategy):
    """Auto-merging over the top entries found (as many as other units consider), then
    candidates at each merged level."""

    name = Unit.AUTO

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def candidates(self, ranked, found, spans, store, q):
        top = [(cid, score) for cid, score in ranked if cid in found][:considered(q)]
        parent_ids = {found[cid].hit.parent_id for cid, _ in top}
        doc_ids = {found[cid].hit.doc_id for cid, _ in top}
        chunks = store.count_children(parent_ids)
        doc_parents = store.get_document_parents(doc_ids)
        sections = {d: sum(1 for sp in ps if not sp.parent.synthetic) for d, ps in doc_parents.items()}
        units, trace = auto_merge(top, found, chunks, sections, q.merge_threshold)
        parents = store.get_parents(parent_ids)
        cands: list[Candidate] = []
        for u in units:
            if u.level == "document":
                made = document_candidates([(u.key, u.score)], doc_parents, dict(spans))
            elif u.level == "parent":
                made = parent_candidates([(u.key, u.score)], parents, dict(spans))
            else:
                made = child_candidates([(u.key, u.score)], found, parents)
            cands += [replace(c, members=u.members) for c in made]
        return cands, {"merging": trace}


UNITS: dict[Unit, UnitStrategy] = {u.name: u for u in (ParentUnit(), ChildUnit(), DocumentUnit(), WindowUnit(), AutoUnit())}


def unit_strategy(unit: Unit | str) -> UnitStrategy:
    return UNITS[Unit(unit)]
