"""Expansion and packing: fused units -> passages that fit a token budget.

The unit returned is a setting (``unit``): ``parent`` (the default: the section a matching
child belongs to), ``child`` (flat chunks: the matching children themselves), ``document``
(whole documents), ``window`` (the entry found and ``window_sentences`` sentences on each side,
within its section) or ``auto`` (auto-merging: a section replaces its chunks when a share of
them was found, a document its sections likewise). Candidates are taken in fused order. Each is added whole if it fits the
remaining budget; one that does not fit is skipped (a smaller one further down may still fit)
and noted in the trace. The best candidate is always returned: if it alone exceeds the budget
it is cut to the budget around its best-matching child, and marked ``truncated``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from ragsift.store.base import StoredHit, StoredParent
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens, token_spans
from ragsift.types import Passage, Span


@dataclass(frozen=True)
class Candidate:
    """A unit ready to pack: the passage it becomes (rank 0 and its matched spans best first
    until it is packed), its id, and the ranked ids it stands for (merged windows, auto-merged
    units), by which multi-hop finds its provenance."""

    key: str
    passage: Passage
    offset: int = 0  # where the text starts in the parent's text (windows)
    members: tuple[str, ...] = ()


def _candidate(key: str, score: float, sp: StoredParent, text: str, tokens: int, spans: tuple[Span, ...],
               unit: str, *, heading_path: tuple[str, ...] | None = None, offset: int = 0,
               members: tuple[str, ...] = ()) -> Candidate:
    p = sp.parent
    passage = Passage(rank=0, parent_id=p.parent_id, doc_id=p.doc_id, source=sp.source, title=sp.title,
                      heading_path=p.heading_path if heading_path is None else heading_path, text=text,
                      tokens=tokens, score=score, matched=spans, metadata=sp.metadata, unit=unit)
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


def parent_candidates(fused: Sequence[tuple[str, float]], parents: dict[str, StoredParent],
                      spans: dict[str, list[Span]]) -> list[Candidate]:
    out = []
    for pid, score in fused:
        sp = parents.get(pid)
        if sp is not None:
            out.append(_candidate(pid, score, sp, sp.parent.text, sp.parent.tokens, tuple(spans.get(pid, ())),
                                  "parent"))
    return out


def child_candidates(fused: Sequence[tuple[str, float]], hits: Mapping[str, Found],
                     parents: dict[str, StoredParent]) -> list[Candidate]:
    out = []
    for cid, score in fused:
        h, channels = hits[cid]
        sp = parents.get(h.parent_id)
        if sp is not None:
            text = sp.parent.text[h.start:h.end]
            out.append(_candidate(cid, score, sp, text, count_tokens(text), (Span(cid, 0, len(text), channels),),
                                  "child"))
    return out


def document_candidates(fused: Sequence[tuple[str, float]], doc_parents: dict[str, list[StoredParent]],
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
        out.append(_candidate(did, score, parts[0], text, sum(sp.parent.tokens for sp in parts), tuple(mapped),
                              "document", heading_path=()))
    return out


def window_bounds(text: str, start: int, end: int, window: int) -> tuple[int, int]:
    """The span ``[start, end)`` widened to whole sentences and ``window`` more on each side."""
    sents = sentence_spans(text) or [(0, len(text))]
    inside = [i for i, (s, e) in enumerate(sents) if s < end and e > start] or [0]
    lo, hi = max(0, inside[0] - window), min(len(sents) - 1, inside[-1] + window)
    return sents[lo][0], sents[hi][1]


def window_candidates(fused: Sequence[tuple[str, float]], hits: Mapping[str, Found],
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
    return _candidate(key, score, sp, text, count_tokens(text), spans, "window", offset=start, members=members)


class Merged(NamedTuple):
    """A unit auto-merging kept: its level (document, parent or child), id, score and the entries in it."""

    level: str
    key: str
    score: float
    members: tuple[str, ...]


def auto_merge(fused: Sequence[tuple[str, float]], hits: Mapping[str, Found],
               chunks_per_parent: dict[str, int], sections_per_doc: dict[str, int],
               threshold: float) -> tuple[list[Merged], dict[str, Any]]:
    """Auto-merging up a three-level tree (chunk, section, document), as hierarchical merging
    retrievers do it: a section whose share of chunks among those found reaches ``threshold``
    replaces them, at the rank of its best one; then a document whose share of *merged*
    sections reaches ``threshold`` replaces them. Returns the units in rank order and what was
    merged, for the trace."""
    found: dict[str, set[str]] = {}
    for cid, _ in fused:
        h = hits[cid][0]
        found.setdefault(h.parent_id, set()).add(cid)
    merged_parents = {p for p, cids in found.items()
                      if chunks_per_parent.get(p, 0) and len(cids) / chunks_per_parent[p] >= threshold}
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
             "share": {p: f"{len(c)}/{chunks_per_parent.get(p, 0)}" for p, c in sorted(found.items())}}
    return out, trace


def pack(candidates: Sequence[Candidate], budget: int, max_passages: int) -> tuple[list[Passage], dict[str, Any]]:
    out: list[Passage] = []
    used = 0
    skipped: list[str] = []
    for c in candidates:
        if len(out) >= max_passages:
            break
        p = c.passage
        text, tokens, truncated = p.text, p.tokens, False
        matched = tuple(sorted(p.matched, key=lambda s: s.start))
        if used + tokens > budget:
            if out:
                skipped.append(c.key)
                continue
            text, offset = _cut(p.text, budget, list(p.matched))
            tokens, truncated = count_tokens(text), True
            matched = tuple(Span(s.child_id, max(0, s.start - offset), min(len(text), s.end - offset), s.channels)
                            for s in matched if s.end > offset and s.start - offset < len(text))
        used += tokens
        out.append(replace(p, rank=len(out) + 1, text=text, tokens=tokens, matched=matched, truncated=truncated))
    return out, {"budget": budget, "max_passages": max_passages, "used_tokens": used,
                 "skipped_for_budget": skipped}


def _cut(text: str, budget: int, spans: list[Span]) -> tuple[str, int]:
    """A window of ``budget`` tokens that starts a little before the first (best) matched span."""
    toks = token_spans(text)
    if len(toks) <= budget:
        return text, 0
    centre = spans[0].start if spans else 0
    first = next((i for i, (s, _) in enumerate(toks) if s >= centre), 0)
    lo = max(0, min(first - budget // 4, len(toks) - budget))
    hi = lo + budget
    start, end = toks[lo][0], toks[hi - 1][1]
    return text[start:end], start
