"""``child``: the entry found itself, its own span (flat chunks)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.found import Candidate, Found, candidate
from ragsift.retrieve.units.base import UnitStrategy, considered, register_unit
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.text.tokens import count_tokens
from ragsift.types import Ranking, Span


@register_unit
class ChildUnit(UnitStrategy):
    name = Unit.CHILD

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        return parent.parent.text[h.start:h.end]

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        parents = store.get_parents(found[cid].hit.parent_id for cid, _ in top)
        return child_candidates(top, found, parents), {}


def child_candidates(fused: Ranking, hits: Mapping[str, Found],
                     parents: dict[str, StoredParent]) -> list[Candidate]:
    out = []
    for cid, score in fused:
        h, channels = hits[cid]
        sp = parents.get(h.parent_id)
        if sp is not None:
            text = sp.parent.text[h.start:h.end]
            out.append(candidate(cid, score, sp, text, count_tokens(text), (Span(cid, 0, len(text), channels),),
                                  "child"))
    return out
