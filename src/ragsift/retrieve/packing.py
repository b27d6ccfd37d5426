"""Packing: candidates (``found.Candidate``, built by the units) -> passages that fit a token
budget.

Candidates are taken in ranked order. Each is added whole if it fits the remaining budget; one
that does not fit is skipped (a smaller one further down may still fit) and noted in the trace.
The best candidate is always returned: if it alone exceeds the budget it is cut to the budget
around its best-matching child, and marked ``truncated``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragsift.retrieve.found import Candidate
from ragsift.text.tokens import count_tokens, token_spans
from ragsift.types import Passage, Span


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
