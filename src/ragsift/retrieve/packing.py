"""Parent expansion and packing: fused parents -> passages that fit a token budget.

Parents are taken in fused order. Each is added whole if it fits the remaining budget;
one that does not fit is skipped (a smaller one further down may still fit) and noted in
the trace. The best parent is always returned: if it alone exceeds the budget it is cut to
the budget around its best-matching child, and marked ``truncated``.
"""
from __future__ import annotations

from typing import Any, Sequence

from ragsift.store.base import StoredParent
from ragsift.text.tokens import token_spans
from ragsift.types import Passage, Span


def pack(fused: Sequence[tuple[str, float]], parents: dict[str, StoredParent],
         spans: dict[str, list[Span]], budget: int, max_parents: int) -> tuple[list[Passage], dict[str, Any]]:
    out: list[Passage] = []
    used = 0
    skipped: list[str] = []
    for pid, score in fused:
        if len(out) >= max_parents:
            break
        sp = parents.get(pid)
        if sp is None:
            skipped.append(pid)
            continue
        p = sp.parent
        text, tokens, truncated = p.text, p.tokens, False
        matched = tuple(sorted(spans.get(pid, []), key=lambda s: s.start))
        if used + tokens > budget:
            if out:
                skipped.append(pid)
                continue
            text, offset = _cut(p.text, budget, spans.get(pid, []))
            tokens, truncated = budget, True
            matched = tuple(Span(s.child_id, max(0, s.start - offset), min(len(text), s.end - offset), s.channels)
                            for s in matched if s.end > offset and s.start - offset < len(text))
        used += tokens
        out.append(Passage(rank=len(out) + 1, parent_id=pid, doc_id=p.doc_id, source=sp.source,
                           title=sp.title, heading_path=p.heading_path, text=text, tokens=tokens,
                           score=score, matched=matched, metadata=sp.metadata, truncated=truncated))
    return out, {"budget": budget, "max_parents": max_parents, "used_tokens": used,
                 "skipped_for_budget": skipped}


def _cut(text: str, budget: int, spans: list[Span]) -> tuple[str, int]:
    """A window of ``budget`` tokens, centred on the first (best) matched span."""
    toks = token_spans(text)
    if len(toks) <= budget:
        return text, 0
    centre = spans[0].start if spans else 0
    first = next((i for i, (s, _) in enumerate(toks) if s >= centre), 0)
    lo = max(0, min(first - budget // 4, len(toks) - budget))
    hi = lo + budget
    start, end = toks[lo][0], toks[hi - 1][1]
    return text[start:end], start
