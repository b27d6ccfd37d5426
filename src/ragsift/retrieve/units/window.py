"""``window``: the entry found widened by ``window_sentences`` sentences on each side, within its
section; overlapping windows of one section merge (sentence-window retrieval)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragsift.config import QuerySettings, Unit
from ragsift.retrieve.found import Candidate, Found, candidate
from ragsift.retrieve.units.base import UnitStrategy, considered, register_unit
from ragsift.store.base import Store, StoredHit, StoredParent
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens
from ragsift.types import Ranking, Span


@register_unit
class WindowUnit(UnitStrategy):
    name = Unit.WINDOW

    def key(self, h: StoredHit) -> str:
        return h.child_id

    def read(self, h: StoredHit, parent: StoredParent, q: QuerySettings) -> str:
        start, end = window_bounds(parent.parent.text, h.start, h.end, q.window_sentences)
        return parent.parent.text[start:end]

    def candidates(self, ranked: Ranking, found: Mapping[str, Found], spans: Mapping[str, list[Span]],
                   store: Store, q: QuerySettings) -> tuple[list[Candidate], dict[str, Any]]:
        top = ranked[:considered(q)]
        parents = store.get_parents(found[cid].hit.parent_id for cid, _ in top)
        return window_candidates(top, found, parents, q.window_sentences), {}


def window_bounds(text: str, start: int, end: int, window: int) -> tuple[int, int]:
    """The span ``[start, end)`` widened to whole sentences and ``window`` more on each side."""
    sents = sentence_spans(text) or [(0, len(text))]
    inside = [i for i, (s, e) in enumerate(sents) if s < end and e > start] or [0]
    lo, hi = max(0, inside[0] - window), min(len(sents) - 1, inside[-1] + window)
    return sents[lo][0], sents[hi][1]


def window_candidates(fused: Ranking, hits: Mapping[str, Found],
                      parents: dict[str, StoredParent], window: int) -> list[Candidate]:
    """Each entry found, widened to whole sentences and ``window`` more on each side, within its
    section. Windows of one section that overlap a better one are merged into it."""
    out: list[Candidate] = []
    taken: dict[str, list[int]] = {}  # parent id -> indexes into out
    for cid, score in fused:
        h, channels = hits[cid]
        sp = parents.get(h.parent_id)
        if sp is None:
            continue
        start, end = window_bounds(sp.parent.text, h.start, h.end, window)
        span = Span(cid, h.start - start, h.end - start, channels)
        merged = False
        for i in taken.get(h.parent_id, []):
            c = out[i]
            c_start = c.offset
            c_end = c_start + len(c.passage.text)
            if start < c_end and end > c_start:  # overlaps a better window: grow that one
                ns, ne = min(start, c_start), max(end, c_end)
                spans = tuple(Span(x.child_id, x.start + c_start - ns, x.end + c_start - ns, x.channels)
                              for x in c.passage.matched) + (Span(cid, h.start - ns, h.end - ns, channels),)
                out[i] = _window(c.key, c.passage.score, sp, ns, ne, spans, c.members + (cid,))
                merged = True
                break
        if not merged:
            taken.setdefault(h.parent_id, []).append(len(out))
            out.append(_window(cid, score, sp, start, end, (span,), (cid,)))
    return out


def _window(key: str, score: float, sp: StoredParent, start: int, end: int, spans: tuple[Span, ...],
            members: tuple[str, ...]) -> Candidate:
    text = sp.parent.text[start:end]
    return candidate(key, score, sp, text, count_tokens(text), spans, "window", offset=start, members=members)
