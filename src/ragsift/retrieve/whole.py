"""Whole sections beside their parts: how one channel scores an entry when a query searches the
sections whole (``index_kinds`` with ``parent``) beside their chunks (or sentences, key
sentences...).

Searched together, the two kinds compete on raw score and a section counts as the better of
its whole entry and its best part (``max``); the benchmarks measured that below chunks alone
(docs/benchmarks.md, "Whole entries beside chunks"). A channel with a *whole weight* ``a``
(``whole_weights``) instead searches the parts and the whole sections each to its own depth,
scales each list min-max to [0, 1], and scores

- a part: ``a * whole(its section) + (1 - a) * itself``;
- a whole section: ``a * itself + (1 - a) * its best part``;

where an entry a list did not return scores 0 there. A section's best entry thus scores
``a * whole + (1 - a) * best part``: the mix the benchmarks chose across ten sets (dense 0.25,
BM25 0.5). Ties rank the part first (its span is the more precise).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ragsift.config import EntryKind
from ragsift.retrieve.fusion import normalize
from ragsift.store.base import StoredHit

Search = Callable[[tuple[EntryKind, ...]], list[StoredHit]]


def mix_whole(parts: Sequence[StoredHit], whole: Sequence[StoredHit], weight: float) -> list[StoredHit]:
    """Parts and whole sections (each best first, raw scores) as one list, best first, scored by
    their mix (module docstring). A section's whole entry counts once (its first hit)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"a whole weight is between 0 and 1 (got {weight})")
    first: dict[str, StoredHit] = {}
    for h in whole:
        first.setdefault(h.parent_id, h)
    sections = list(first.values())
    scaled_whole = dict(zip((h.parent_id for h in sections), normalize([h.score for h in sections], "minmax")))
    scaled_parts = normalize([h.score for h in parts], "minmax")
    best_part: dict[str, float] = {}
    for h, s in zip(parts, scaled_parts):
        best_part[h.parent_id] = max(best_part.get(h.parent_id, 0.0), s)
    mixed = [(weight * scaled_whole.get(h.parent_id, 0.0) + (1 - weight) * s, 0, i, h)
             for i, (h, s) in enumerate(zip(parts, scaled_parts))]
    mixed += [(weight * scaled_whole[h.parent_id] + (1 - weight) * best_part.get(h.parent_id, 0.0), 1, i, h)
              for i, h in enumerate(sections)]
    mixed.sort(key=lambda m: (-m[0], m[1], m[2]))
    return [replace(h, score=score, raw=h.raw_score) for score, _, _, h in mixed]


def parts_of(kinds: Sequence[EntryKind]) -> tuple[EntryKind, ...]:
    """The kinds searched beside whole sections: none when ``kinds`` has no whole sections (or
    nothing else), so that whole weights apply exactly when this is not empty."""
    parts = tuple(k for k in kinds if k != EntryKind.PARENT)
    return parts if EntryKind.PARENT in kinds else ()


def search_kinds(search: Search, kinds: Sequence[EntryKind], weight: float | None) -> list[StoredHit]:
    """One channel's hits over ``kinds``: one search of them all when ``weight`` is None or the
    query does not search whole sections beside other kinds; else the parts and the whole
    sections searched apart and mixed (``mix_whole``)."""
    parts = parts_of(kinds)
    if weight is None or not parts:
        return search(tuple(kinds))
    return mix_whole(search(parts), search((EntryKind.PARENT,)), weight)
