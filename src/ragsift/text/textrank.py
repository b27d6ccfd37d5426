"""Key sentences by TextRank (Mihalcea and Tarau, 2004): sentences are nodes, edges weigh the
overlap of their BM25 analyzer terms, PageRank ranks them. No model, deterministic."""
from __future__ import annotations

import math
import re

from ragsift.text.analyzer import shared_analyzer
from ragsift.text.lang import CJK_RE
from ragsift.text.sentences import sentence_spans

__all__ = ["key_sentences"]

_DAMPING = 0.85
_WORDY_RE = re.compile(r"[A-Za-z0-9]|" + CJK_RE.pattern)


def key_sentences(text: str, k: int = 3) -> list[tuple[int, int]]:
    """The ``k`` most central sentences of ``text`` as (start, end) spans, in document order.

    Sentences come from ``sentence_spans``; two sentences are similar by the overlap of their
    analyzer terms, normalised by log length (TextRank); PageRank over that graph ranks them,
    the earlier sentence winning a tie. With ``k`` or fewer sentences all are returned.
    """
    if k <= 0 or not text or not text.strip():
        return []
    spans = [(s, e) for s, e in sentence_spans(text) if _WORDY_RE.search(text, s, e)]
    if len(spans) <= k:
        return spans
    analyzer = shared_analyzer()
    bags = [set(analyzer.terms(text[s:e])) for s, e in spans]
    n = len(spans)
    weights = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            overlap = len(bags[i] & bags[j])
            if overlap:
                w = overlap / (math.log(1 + len(bags[i])) + math.log(1 + len(bags[j])))
                weights[i][j] = weights[j][i] = w
    scores = _pagerank(weights)
    best = sorted(range(n), key=lambda i: (-round(scores[i], 12), i))[:k]
    return [spans[i] for i in sorted(best)]


def _pagerank(weights: list[list[float]], iterations: int = 100, tol: float = 1e-10) -> list[float]:
    """Weighted PageRank by power iteration; a sentence with no neighbours keeps the base score."""
    n = len(weights)
    out_sum = [sum(row) for row in weights]
    # incoming edges of i: (j, share of j's weight that goes to i)
    incoming = [[(j, weights[j][i] / out_sum[j]) for j in range(n) if weights[j][i]] for i in range(n)]
    scores = [1.0 / n] * n
    for _ in range(iterations):
        new = [(1 - _DAMPING) / n + _DAMPING * sum(share * scores[j] for j, share in incoming[i]) for i in range(n)]
        delta = max(abs(a - b) for a, b in zip(new, scores))
        scores = new
        if delta < tol:
            break
    return scores
