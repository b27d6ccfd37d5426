"""Sentence highlights: inside each matched child of a passage, the sentences that say what the
question asks, so a reader sees where to look rather than a whole ~200-token chunk.

A sentence scores by the question's terms it holds, as the knowledge base's BM25 analyzer sees
words (jieba words for Chinese, stemmed English words without stop words; ``text.analyzer``),
each term weighted by how rare it is among the passage's matched sentences (a word in every
sentence tells nothing) and less when the section's heading holds it (the whole section is about
its heading: the sentence that answers holds the question's other words). Per child at most
``MAX_PER_CHILD`` sentences are kept, those scoring at least ``KEEP_SHARE`` of its best, and
never every sentence of a child of several: a one-sentence child is that sentence, and a child
where no sentence shares a word with the question (a dense-only match) has none. Cheap: one
analyzer pass over the matched text, no model."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ragsift.text.analyzer import Analyzer
from ragsift.text.sentences import sentence_spans
from ragsift.types import Span

MAX_PER_CHILD = 2
KEEP_SHARE = 0.5
HEADING_WEIGHT = 0.3  # a question's term that the heading holds counts this much


def best_sentences(text: str, matched: Sequence[Span], query: str, analyzer: Analyzer,
                   heading: str = "") -> tuple[Span, ...]:
    """The sentences of ``text`` inside the ``matched`` child spans that best match ``query``,
    as spans of ``text`` (each with its child's id and channels), in text order; ``heading`` is
    the passage's heading path, as text."""
    wanted = set(analyzer.terms(query))
    if not wanted or not matched:
        return ()
    # every sentence of every matched child, with the question's terms it holds
    per_child: list[tuple[Span, list[tuple[int, int, frozenset[str]]]]] = []
    for s in matched:
        body = text[s.start:s.end]
        sents = [(s.start + a, s.start + b, frozenset(analyzer.terms(body[a:b])) & wanted)
                 for a, b in sentence_spans(body)]
        if sents:
            per_child.append((s, sents))
    distinct = {(a, b): terms for _, sents in per_child for a, b, terms in sents}  # overlapping children: once
    df = Counter(t for terms in distinct.values() for t in terms)
    titled = set(analyzer.terms(heading)) if heading else set()
    weight = {t: math.log(1 + len(distinct) / c) * (HEADING_WEIGHT if t in titled else 1.0) for t, c in df.items()}
    out: dict[tuple[int, int], Span] = {}
    for s, sents in per_child:
        scored = sorted(((sum(weight[t] for t in terms), a, b) for a, b, terms in sents if terms),
                        key=lambda x: (-x[0], x[1]))
        if not scored:
            continue
        room = MAX_PER_CHILD if len(sents) > MAX_PER_CHILD else max(1, len(sents) - 1)
        best = scored[0][0]
        for score, a, b in scored[:room]:
            if score >= KEEP_SHARE * best:
                out.setdefault((a, b), Span(s.child_id, a, b, s.channels))
    return tuple(out[k] for k in sorted(out))
