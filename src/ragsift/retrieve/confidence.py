"""Honest confidence: what a caller can threshold, per passage and per result.

Fused scores rank (the first passage of a weighted fusion always scores 1); they say nothing of
how well anything matched. So each passage keeps, beside its fused score,

- ``scores``: per channel that found it, the channel's own score of its best entry for the
  question (``SearchRound.evidence``): dense, the cosine similarity of the question's vector and
  the entry's (its ``similarity``); bm25, the BM25 score;
- ``term_match``: the share of the question's distinct search terms (the BM25 analyzer's) found
  in the passage, its title or its heading path (``term_match``): a Chinese term as written in
  the text, any other as the analyzer's term of a word of it (a stem).

A result is judged (``judge``) from the best of its passages: no good match when the question
has nothing to search (no letter or digit: only emoji, punctuation, symbols; no passages are
returned then), when nothing was found, or when no passage reaches ``min_similarity`` nor
``min_term_match`` and, when the dense channel's best is in another language than the question,
it does not stand out of the rest of its list by ``min_standout`` (``standout``: the best
similarity minus the mean of the next 49). The standout is what tells a match in another
language: a question in English over Chinese passages finds every similarity lower, the right
passage's too, but the right one still stands out. (Within one language it does not count: in a
small knowledge base of unlike documents an unrelated question's best stands out as well.) The
defaults were chosen on the shared sets against as many questions with no answer in the knowledge
base (``benchmarks/confidence.py``, docs/benchmarks.md).
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace

from ragsift.config import QuerySettings
from ragsift.text.analyzer import Analyzer
from ragsift.text.lang import CJK_RE
from ragsift.types import Match, Passage


def searchable(question: str) -> bool:
    """Whether a question has anything to search: a letter or a digit (of any script)."""
    return any(unicodedata.category(c)[0] in "LN" for c in question)


def question_terms(question: str, analyzer: Analyzer) -> frozenset[str]:
    """The question's distinct search terms (the analyzer's: stemmed, without stop words)."""
    return frozenset(analyzer.terms(question))


def term_match(terms: frozenset[str], text: str, analyzer: Analyzer) -> float | None:
    """The share of ``terms`` found in ``text`` (None without terms): a term with a Chinese
    character as a substring of the text (folded), any other among the text's own terms."""
    if not terms:
        return None
    folded = unicodedata.normalize("NFKC", text).casefold()
    cjk = [t for t in terms if CJK_RE.search(t)]
    found = sum(1 for t in cjk if t in folded)
    if len(cjk) < len(terms):
        own = set(analyzer.terms(text))
        found += sum(1 for t in terms if t in own and not CJK_RE.search(t))
    return found / len(terms)


STANDOUT_DEPTH = 50  # the standout reads the dense channel's first 50 units
STANDOUT_MIN_OTHERS = 10  # and needs at least 10 besides the best


def standout(dense: Sequence[float]) -> float | None:
    """How far the best of the dense channel's similarities (one per unit, any order) stands out:
    the best minus the mean of the next ``STANDOUT_DEPTH - 1``; None with fewer than
    ``STANDOUT_MIN_OTHERS`` others (a list too short to have a level to stand out of)."""
    top = sorted(dense, reverse=True)[:STANDOUT_DEPTH]
    if len(top) <= STANDOUT_MIN_OTHERS:
        return None
    return round(top[0] - sum(top[1:]) / (len(top) - 1), 6)


def judge(passages: Sequence[Passage], q: QuerySettings, *, dense: Sequence[float] | None, terms: frozenset[str],
          term_hits: int | None = None, cross_language: bool = False, empty: bool = False) -> Match:
    """Whether ``passages`` (term_match and scores set) match their question well. ``dense``: the
    dense channel's similarity of each unit it found (None: it did not run); ``terms``: the
    question's search terms; ``term_hits``: the entries BM25 found (None: it did not run);
    ``cross_language``: the dense channel's best is in another language than the question (only
    then does its standout count); ``empty``: the knowledge base holds nothing to search."""
    sims = [p.similarity for p in passages if p.similarity is not None]
    tms = [p.term_match for p in passages if p.term_match is not None]
    best_sim = max(sims) if sims else None
    best_tm = max(tms) if tms else None
    out = standout(dense) if dense else None
    m = Match(similarity=best_sim, term_match=best_tm, standout=out, cross_language=cross_language,
              min_similarity=q.min_similarity,
              min_term_match=q.min_term_match, min_standout=q.min_standout)
    if empty:
        return _weak(m, "the knowledge base is empty: ingest documents first")
    if not passages:
        if dense is None and not terms:
            return _weak(m, "no passage was found: the question has no search terms (only common words)")
        if dense is None and term_hits == 0:
            return _weak(m, "no passage was found: none of the question's search terms is in the knowledge base")
        return _weak(m, "no passage was found")
    if ((best_sim is not None and best_sim >= q.min_similarity)
            or (best_tm is not None and best_tm > 0 and best_tm >= q.min_term_match)
            or (cross_language and out is not None and out >= q.min_standout)):
        return m
    why = []
    if dense is not None:
        why.append(f"the best similarity to the question, {best_sim:.3f}, is below {q.min_similarity:g} "
                   "(min_similarity)" if best_sim is not None else "the dense channel found none of these passages")
        if cross_language and out is not None:
            why.append(f"the best match, in another language, stands out of the others by {out:.3f}, below "
                       f"{q.min_standout:g} (min_standout)")
    if not terms:
        why.append("the question has no search terms (only common words)")
    elif term_hits == 0:
        why.append("none of the question's search terms is in the knowledge base")
    elif not best_tm:
        why.append("none of the question's search terms is in the passages")
    else:
        why.append(f"at most {best_tm:.0%} of the question's search terms are in a passage, below "
                   f"{q.min_term_match:.0%} (min_term_match)")
    return _weak(m, "; ".join(why))


def _weak(m: Match, reason: str) -> Match:
    return replace(m, no_good_match=True, reason=reason)


def unsearchable(q: QuerySettings) -> Match:
    """The verdict on a question with nothing to search (``searchable`` is False)."""
    return Match(True, "the question has nothing to search: no letter or digit (only emoji, punctuation "
                       "or symbols)", min_similarity=q.min_similarity, min_term_match=q.min_term_match,
                 min_standout=q.min_standout)
