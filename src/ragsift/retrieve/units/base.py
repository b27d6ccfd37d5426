"""The base of units: what a query returns, from the entries its channels found.

A unit (a ``UnitStrategy`` subclass, registered by name with ``@register_unit`` in ``UNITS``) says
- ``key``: what a hit counts as before fusion (its parent, itself, its document): channels are
  deduplicated by it, fusion and reranking rank it, multi-hop counts what is new by it;
- ``read``: the text that stands for a hit's unit when a reranker judges it or multi-hop reads it
  (by default its section);
- ``candidates``: the ranked units turned into packable candidates (``found.Candidate``), with
  their members (the ranked ids each stands for, for multi-hop provenance) and what the trace
  should show. Each unit builds its own candidates in its own module;
- ``check``: its own rule on the settings it runs with (``auto`` needs chunk entries), run
  wherever settings meet the query layer (``check_unit``, from ``Retriever.check``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from ragsift.config import QuerySettings, Settings
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.retrieve.found import Candidate, Found, candidate
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.types import Ranking, Span


def considered(q: QuerySettings) -> int:
    """How many ranked units are expanded: three per passage asked for, at least ten."""
    return max(q.max_passages * 3, 10)


class UnitStrategy(ABC):
    """What a query returns. Subclasses name themselves (``name``) and say what a hit counts as
    (``key``) and how ranked units become candidates (``candidates``)."""

    name: ClassVar[str]

    @abstractmethod
    def key(self, h: StoredHit) -> str:
        """What a hit counts as: the id channels are deduplicated and fused by."""

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        """The text that stands for a hit's unit (a reranker's or multi-hop's reading): its section."""
        return parent.parent.text

    @abstractmethod
    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        """The ranked units as packable candidates, and what the trace's packing should show."""

    def check(self, settings: Settings) -> None:  # noqa: B027 (a hook: most units take any settings)
        """Refuse (``ConfigError``) settings this unit cannot run with; most units take any."""


UNITS: Registry[UnitStrategy] = Registry("unit", ConfigError)

U = TypeVar("U", bound=type[UnitStrategy])


def register_unit(cls: U) -> U:
    """Class decorator: register a unit under its ``name`` (one shared instance: units hold no state)."""
    UNITS.add(str(cls.name), cls)
    return cls


def unit_strategy(unit: str) -> UnitStrategy:
    """The strategy of a unit (one shared object per unit); an unknown name is a ``ConfigError``."""
    return UNITS.load(str(unit))


def check_unit(settings: Settings) -> None:
    """The settings' unit is registered and takes them (its own ``check``)."""
    unit_strategy(settings.query.unit).check(settings)


def parent_candidates(fused: Ranking, parents: dict[str, StoredParent],
                      spans: dict[str, list[Span]]) -> list[Candidate]:
    out = []
    for pid, score in fused:
        sp = parents.get(pid)
        if sp is not None:
            out.append(candidate(pid, score, sp, sp.parent.text, sp.parent.tokens, tuple(spans.get(pid, ())),
                                  "parent"))
    return out
