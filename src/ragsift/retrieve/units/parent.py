"""``parent``: the whole section a matching entry belongs to (small-to-big, the default)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.found import Candidate, Found
from ragsift.retrieve.units.base import UnitStrategy, considered, parent_candidates, register_unit
from ragsift.store.base import Store, StoredHit
from ragsift.types import Ranking, Span


@register_unit
class ParentUnit(UnitStrategy):
    """The section: hits count by their parent, and each ranked section is returned whole."""

    name = Unit.PARENT

    def key(self, h: StoredHit) -> str:
        return h.parent_id

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        return parent_candidates(top, store.get_parents(pid for pid, _ in top), dict(spans)), {}
