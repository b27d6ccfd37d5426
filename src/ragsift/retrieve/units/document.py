"""``document``: the whole document, its sections joined (cut around the best match when over
the budget)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.found import Candidate, Found, candidate
from ragsift.retrieve.units.base import UnitStrategy, considered, register_unit
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.types import Ranking, Span


@register_unit
class DocumentUnit(UnitStrategy):
    name = Unit.DOCUMENT

    def key(self, h: StoredHit) -> str:
        return h.doc_id

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        return document_candidates(top, store.get_document_parents(d for d, _ in top), dict(spans)), {}


def document_candidates(fused: Ranking, doc_parents: dict[str, list[StoredParent]],
                        spans: dict[str, list[Span]]) -> list[Candidate]:
    """Whole documents: their parents joined in order; child spans mapped into the joined text."""
    out = []
    order = {s.child_id: i for i, s in enumerate(s for lst in spans.values() for s in lst)}
    for did, score in fused:
        parts = [sp for sp in doc_parents.get(did, ()) if not sp.parent.synthetic]
        if not parts:
            continue
        offsets, pieces, pos = {}, [], 0
        for sp in parts:
            offsets[sp.parent.parent_id] = pos
            pieces.append(sp.parent.text)
            pos += len(sp.parent.text) + 2
        text = "\n\n".join(pieces)
        mapped = []
        for sp in parts:
            for s in spans.get(sp.parent.parent_id, ()):
                off = offsets[sp.parent.parent_id]
                mapped.append(Span(s.child_id, s.start + off, s.end + off, s.channels))
        mapped.sort(key=lambda s: order.get(s.child_id, len(order)))
        located = [sp.parent.location for sp in parts if sp.parent.location]
        span = (located[0][0], located[0][1], located[-1][2]) if located else None
        out.append(candidate(did, score, parts[0], text, sum(sp.parent.tokens for sp in parts), tuple(mapped),
                             "document", heading_path=(), location=span))
    return out
