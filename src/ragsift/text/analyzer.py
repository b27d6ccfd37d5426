"""The BM25 analyzer: one function from text to index terms, used at index AND query time.

- Chinese runs are segmented with jieba's search mode (``cut_for_search``: words plus
  their shorter in-vocabulary parts, so "机器学习" also indexes "机器" and "学习").
- Latin runs are lower-cased, split on non-alphanumerics, stop-worded and Snowball-stemmed.
- Punctuation and Chinese function words are dropped.

The store receives the terms as a space-joined string, so BM25 means the same thing on
every backend and Chinese never silently scores zero for lack of segmentation.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Iterable

import Stemmer

from ragsift.text.wordlists import words

_RUN_RE = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)|([A-Za-z0-9]+(?:['’][A-Za-z]+)?)")

ENGLISH_STOPWORDS = words("stopwords-en")
CHINESE_STOPWORDS = words("stopwords-zh")

_jieba_lock = threading.Lock()
_jieba = None


def load_jieba():
    """jieba, initialised once (quietly)."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba = jieba
    return _jieba


class Analyzer:
    """Text to BM25 terms. Stateless apart from the stemmer; safe to share across threads."""

    name = "ragsift-zh-en-v1"

    def __init__(self) -> None:
        self._stemmer_local = threading.local()

    def _stemmer(self) -> Stemmer.Stemmer:
        st = getattr(self._stemmer_local, "stemmer", None)
        if st is None:
            st = self._stemmer_local.stemmer = Stemmer.Stemmer("english")
        return st

    def terms(self, text: str) -> list[str]:
        out: list[str] = []
        stem = self._stemmer().stemWord
        for m in _RUN_RE.finditer(text):
            cjk, latin = m.group(1), m.group(2)
            if cjk:
                jieba = load_jieba()
                for w in jieba.cut_for_search(cjk):
                    if w not in CHINESE_STOPWORDS:
                        out.append(w)
            else:
                w = latin.lower().replace("’", "'")
                if w in ENGLISH_STOPWORDS:
                    continue
                w = w.split("'")[0]
                if w:
                    out.append(stem(w))
        return out

    def analyze(self, text: str) -> str:
        """Terms as one space-joined string, the form the stores index."""
        return " ".join(self.terms(text))


def posseg(text: str) -> list[tuple[str, str]]:
    """jieba (word, part-of-speech tag) pairs covering ``text`` character for character."""
    load_jieba()
    import jieba.posseg as pseg

    return [(w, t) for w, t in pseg.lcut(text)]


_shared: Analyzer | None = None
_shared_lock = threading.Lock()


def shared_analyzer() -> Analyzer:
    """One analyzer for helpers that need the BM25 view of words (keywords, key sentences)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Analyzer()
    return _shared


def analyzed_terms(phrases: Iterable[str]) -> str:
    """The analyzer terms of some phrases, space-joined, each term once, in order."""
    analyzer = shared_analyzer()
    out: dict[str, None] = {}
    for phrase in phrases:
        out.update(dict.fromkeys(analyzer.terms(phrase)))
    return " ".join(out)
