"""What a search round found, as the units and packing see it: ``Found`` (an entry's best hit and
the channels that found it) and ``Candidate`` (a unit ready to pack into a passage)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ragsift.store.base import StoredHit, StoredParent
from ragsift.types import Passage, Span, public_metadata


@dataclass(frozen=True)
class Candidate:
    """A unit ready to pack: the passage it becomes (rank 0 and its matched spans best first
    until it is packed), its id, and the ranked ids it stands for (merged windows, auto-merged
    units), by which multi-hop finds its provenance."""

    key: str
    passage: Passage
    offset: int = 0  # where the text starts in the parent's text (windows)
    members: tuple[str, ...] = ()


def candidate(key: str, score: float, sp: StoredParent, text: str, tokens: int, spans: tuple[Span, ...],
              unit: str, *, heading_path: tuple[str, ...] | None = None, offset: int = 0,
              members: tuple[str, ...] = (), location: tuple[str, int, int] | None = None) -> Candidate:
    """A candidate of a stored section (``sp``): the passage it becomes before it is packed (its
    heading path and location the section's unless given; its metadata what a caller sees)."""
    p = sp.parent
    passage = Passage(rank=0, parent_id=p.parent_id, doc_id=p.doc_id, source=sp.source, title=sp.title,
                      heading_path=p.heading_path if heading_path is None else heading_path, text=text,
                      tokens=tokens, score=score, matched=spans, metadata=public_metadata(sp.metadata), unit=unit,
                      location=p.location if location is None else location)
    return Candidate(key, passage, offset, members or (key,))


class Found(NamedTuple):
    """An entry found by a round: its best hit, and the channels that found it."""

    hit: StoredHit
    channels: tuple[str, ...]


def hits_by_unit(found: Mapping[str, Found], key: Callable[[StoredHit], str]) -> dict[str, StoredHit]:
    """The first-found hit of each unit (parent, child or document), from the per-entry hits."""
    out: dict[str, StoredHit] = {}
    for h, _ in found.values():
        out.setdefault(key(h), h)
    return out
