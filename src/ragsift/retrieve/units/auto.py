"""``auto``: auto-merging over the top entries found, then candidates at each merged level
(entries, or their section, or their document, by the share found)."""
from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import replace
from typing import Any, NamedTuple

from ragsift.config import EntryKind, QuerySettings, Settings, Unit
from ragsift.errors import ConfigError
from ragsift.retrieve.found import Candidate, Found
from ragsift.retrieve.units.base import UnitStrategy, considered, parent_candidates, register_unit
from ragsift.retrieve.units.child import child_candidates
from ragsift.retrieve.units.document import document_candidates
from ragsift.store.base import Store, StoredHit
from ragsift.types import Ranking, Span


@register_unit
class AutoUnit(UnitStrategy):
    """Auto-merging over the top entries found (as many as other units consider), then
    candidates at each merged level."""

    name = Unit.AUTO

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def check(self, settings: Settings) -> None:
        kinds = settings.query.index_kinds
        if EntryKind.CHUNK not in kinds or not set(kinds) <= {EntryKind.CHUNK, EntryKind.PARENT}:
            raise ConfigError("auto-merging measures the share of a section's chunks that were found: "
                              "use it with index_kinds ['chunk'] (or ['chunk', 'parent'])")

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = [(cid, score) for cid, score in ranked if cid in found][:considered(q)]
        parent_ids = {found[cid].hit.parent_id for cid, _ in top}
        doc_ids = {found[cid].hit.doc_id for cid, _ in top}
        chunks = store.count_children(parent_ids)
        doc_parents = store.get_document_parents(doc_ids)
        sections = {d: sum(1 for sp in ps if not sp.parent.synthetic) for d, ps in doc_parents.items()}
        parents = store.get_parents(parent_ids)
        # an entry that spans its whole section (a whole-section entry, or a section's one chunk) finds all of it
        whole = {h.parent_id for h in (found[cid].hit for cid, _ in top)
                 if h.parent_id in parents and h.start == 0 and h.end >= len(parents[h.parent_id].parent.text)}
        units, trace = auto_merge(top, found, chunks, sections, q.merge_threshold, whole)
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


class Merged(NamedTuple):
    """A unit auto-merging kept: its level (document, parent or child), id, score and the entries in it."""

    level: str
    key: str
    score: float
    members: tuple[str, ...]


def auto_merge(fused: Ranking, hits: Mapping[str, Found],
               chunks_per_parent: dict[str, int], sections_per_doc: dict[str, int],
               threshold: float, whole: Set[str] = frozenset()) -> tuple[list[Merged], dict[str, Any]]:
    """Auto-merging up a three-level tree (chunk, section, document), as hierarchical merging
    retrievers do it: a section whose share of chunks among those found reaches ``threshold``
    replaces them, at the rank of its best one; then a document whose share of *merged*
    sections reaches ``threshold`` replaces them. A section in ``whole`` was found whole (an
    entry spanning all of it, as whole-section entries do) and merges at any threshold. Returns
    the units in rank order and what was merged, for the trace."""
    found: dict[str, set[str]] = {}
    for cid, _ in fused:
        h = hits[cid][0]
        found.setdefault(h.parent_id, set()).add(cid)
    merged_parents = {p for p, cids in found.items()
                      if p in whole or (chunks_per_parent.get(p, 0) and len(cids) / chunks_per_parent[p] >= threshold)}
    merged_by_doc: dict[str, set[str]] = {}
    for cid, _ in fused:
        h = hits[cid][0]
        if h.parent_id in merged_parents:
            merged_by_doc.setdefault(h.doc_id, set()).add(h.parent_id)
    merged_docs = {d for d, ps in merged_by_doc.items()
                   if sections_per_doc.get(d, 0) and len(ps) / sections_per_doc[d] >= threshold}
    order: dict[str, tuple[str, float]] = {}  # key -> (level, score), in rank order
    members: dict[str, list[str]] = {}
    for cid, score in fused:
        h = hits[cid][0]
        if h.doc_id in merged_docs:
            level, key = "document", h.doc_id
        elif h.parent_id in merged_parents:
            level, key = "parent", h.parent_id
        else:
            level, key = "child", cid
        order.setdefault(key, (level, score))
        members.setdefault(key, []).append(cid)
    out = [Merged(level, key, score, tuple(members[key])) for key, (level, score) in order.items()]
    trace = {"threshold": threshold, "merged_sections": sorted(merged_parents),
             "merged_documents": sorted(merged_docs),
             "share": {p: "whole" if p in whole else f"{len(c)}/{chunks_per_parent.get(p, 0)}"
                       for p, c in sorted(found.items())}}
    return out, trace
