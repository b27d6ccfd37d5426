"""The BM25 analyzers: one function from text to index terms, used at index AND query time.

A knowledge base records the analyzer it was made with (``IndexSettings.analyzer``) and keeps
it until it is re-ingested into a new knowledge base: its terms were indexed by it.

``ragsift-unicode-v2`` (the default for new knowledge bases):

- the text is NFKC-normalised first, so full-width "ＡＸ－Ｈ１" is "AX-H1" and ligatures and
  compatibility forms index as their plain letters;
- Chinese (Han) runs are segmented with jieba's search mode (``cut_for_search``: words plus
  their shorter in-vocabulary parts, so "机器学习" also indexes "机器" and "学习"); a word jieba
  made up from characters outside its vocabulary (HMM, "骁龙") also indexes its characters
  (two characters) or bigrams (more), so the same name segmented differently in a question
  still matches;
- kana (Japanese), hangul (Korean) and Thai-family runs, which have no spaces between words or
  carry particles on them, are indexed as overlapping character bigrams (a one-character run
  as itself), as Lucene's CJK analyzer does;
- every other script's words are runs of letters, digits and combining marks, case-folded:
  "zurück", "Straße" (as "strasse"), "Москва", "हिन्दी" stay whole. Plain ASCII words are
  stop-worded (English) and Snowball-stemmed (English); apostrophes keep English clitics off
  ("John's" -> "john") and French elisions off ("l'homme" -> "homme").

``ragsift-zh-en-v1`` (knowledge bases made before): Chinese runs through jieba and
``[A-Za-z0-9]`` runs, stop-worded and stemmed; every other character is dropped.

The store receives the terms as a space-joined string, so BM25 means the same thing on
every backend and Chinese never silently scores zero for lack of segmentation.
"""
from __future__ import annotations

import logging
import re
import sys
import threading
import unicodedata
from collections.abc import Iterable
from typing import Any

import Stemmer

from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.text.wordlists import words

_RUN_RE = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)|([A-Za-z0-9]+(?:['’][A-Za-z]+)?)")

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_RUN_RE = re.compile(f"[{_HAN}]+")
_KANA = "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
_THAI = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer: no spaces
_MARKS = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0900-\u0dff"
# a word: letters, digits and combining marks of any script but the ones above (no underscore)
_WORD = f"(?:[^\\W_{_HAN}{_KANA}{_HANGUL}{_THAI}]|[{_MARKS}])+"
_UNICODE_RE = re.compile(
    f"([{_HAN}]+)|([{_KANA}]+)|([{_HANGUL}]+)|([{_THAI}]+)|({_WORD}(?:['’]{_WORD})*)")
_CLITICS = frozenset({"s", "t", "re", "ve", "ll", "d", "m"})
# what _UNICODE_RE's word group matches in lower-case ASCII text (no other group can): the
# ASCII fast path of UnicodeAnalyzer.terms
_ASCII_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")

ENGLISH_STOPWORDS = words("stopwords-en")
CHINESE_STOPWORDS = words("stopwords-zh")

_jieba_lock = threading.Lock()
_jieba = None


def load_jieba():
    """jieba, initialised once (quietly), its dictionary from the per-user cache on disk
    (``ragsift.text.segmenter``: milliseconds, where building or loading it whole takes
    seconds)."""
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            jieba = _import_jieba()
            from ragsift.text.segmenter import open_dictionary

            jieba.setLogLevel(logging.WARNING)
            with jieba.dt.lock:
                if not jieba.dt.initialized:
                    open_dictionary(jieba.dt, jieba.__version__)
            _jieba = jieba
    return _jieba


def _import_jieba() -> Any:
    """``import jieba`` without ``pkg_resources``: jieba's ``_compat`` imports it (when setuptools
    is installed) only to open jieba's own files, and importing it scans every installed
    distribution (0.3-0.6 s, the most of a cold Chinese query); without it jieba opens the same
    files by their path beside its modules. ``pkg_resources`` stays importable for everyone else
    (hidden only while jieba is imported, and only when nothing has imported it yet)."""
    hide = "pkg_resources" not in sys.modules
    if hide:
        sys.modules["pkg_resources"] = None  # type: ignore[assignment]  # ``import`` raises ImportError
    try:
        import jieba
    finally:
        if hide and "pkg_resources" in sys.modules and sys.modules["pkg_resources"] is None:
            del sys.modules["pkg_resources"]
    return jieba


class Analyzer:
    """Text to BM25 terms. Stateless apart from the stemmer; safe to share across threads.
    Subclasses give ``name`` (recorded in a knowledge base) and ``terms``."""

    name = ""

    def __init__(self) -> None:
        self._stemmer_local = threading.local()

    def _stemmer(self) -> Stemmer.Stemmer:
        st = getattr(self._stemmer_local, "stemmer", None)
        if st is None:
            st = self._stemmer_local.stemmer = Stemmer.Stemmer("english")
        return st

    def terms(self, text: str) -> list[str]:
        raise NotImplementedError

    def analyze(self, text: str) -> str:
        """Terms as one space-joined string, the form the stores index."""
        return " ".join(self.terms(text))


class ZhEnAnalyzer(Analyzer):
    """``ragsift-zh-en-v1``: jieba for Chinese, ``[A-Za-z0-9]`` words for the rest (kept for
    knowledge bases made with it)."""

    name = "ragsift-zh-en-v1"

    def terms(self, text: str) -> list[str]:
        out: list[str] = []
        stem = self._stemmer().stemWord
        for m in _RUN_RE.finditer(text):
            cjk, latin = m.group(1), m.group(2)
            if cjk:
                jieba = load_jieba()
                for piece in han_pieces(cjk):
                    for w in jieba.cut_for_search(piece):
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


#: the longest run of Han characters jieba segments at once: its HMM (Viterbi) copies the path so far
#: at every character, so a run without punctuation costs the square of its length (a 16,000-character
#: run took 1.2 s); real text breaks runs far sooner (a comma, a space), so only such runs are cut
HAN_PIECE = 256


def han_pieces(run: str) -> list[str]:
    """A run of Han characters in pieces jieba segments in linear time (``HAN_PIECE``)."""
    return [run] if len(run) <= HAN_PIECE else [run[i:i + HAN_PIECE] for i in range(0, len(run), HAN_PIECE)]


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


class UnicodeAnalyzer(Analyzer):
    """``ragsift-unicode-v2``: NFKC, jieba for Han, bigrams for kana, hangul and Thai-family
    scripts, whole words of every other script (module docstring)."""

    name = "ragsift-unicode-v2"

    def terms(self, text: str) -> list[str]:
        if text.isascii():  # most English text: the same terms, one regex pass and one stemming call
            words = [_word(w) if "'" in w else w for w in _ASCII_WORD_RE.findall(text.lower())]
            return self._stemmer().stemWords([w for w in words if w and w not in ENGLISH_STOPWORDS])
        return self._terms(text)

    def _terms(self, text: str) -> list[str]:
        """Every text's terms, a match at a time (``terms`` takes a faster way through ASCII text)."""
        out: list[str] = []
        stem = self._stemmer().stemWord
        for m in _UNICODE_RE.finditer(unicodedata.normalize("NFKC", text)):
            han, kana, hangul, thai, word = m.groups()
            if han:
                out += self._han(han)
            elif kana or hangul or thai:
                out += _bigrams(kana or hangul or thai)
            else:
                w = _word(word.casefold().replace("’", "'"))
                if not w or w in ENGLISH_STOPWORDS:
                    continue
                out.append(stem(w) if w.isascii() else w)
        return out

    @staticmethod
    def _han(run: str) -> list[str]:
        jieba = load_jieba()
        freq = jieba.dt.FREQ
        out: list[str] = []
        for piece in han_pieces(run):
            for w in jieba.cut_for_search(piece):
                if w in CHINESE_STOPWORDS:
                    continue
                out.append(w)
                if len(w) > 1 and not freq.get(w):  # made up by jieba's HMM: its characters too
                    out += list(w) if len(w) == 2 else _bigrams(w)
        return out


def _word(w: str) -> str:
    """A word with its apostrophe resolved: English clitics dropped ("john's" -> "john",
    "don't" -> "don"), French and Italian elisions dropped ("l'homme" -> "homme")."""
    if "'" not in w:
        return w
    head, _, tail = w.partition("'")
    if tail in _CLITICS or not tail:
        return head
    if len(head) <= 2 or head == "qu":
        return tail.replace("'", "")
    return head + tail.replace("'", "")


ANALYZERS: Registry[Analyzer] = Registry("analyzer", ConfigError)
for _a in (UnicodeAnalyzer, ZhEnAnalyzer):
    ANALYZERS.add(_a.name, _a)
DEFAULT_ANALYZER = UnicodeAnalyzer.name


def analyzer_for(name: str) -> Analyzer:
    """A new analyzer of the given name (``ANALYZERS``)."""
    return ANALYZERS.make(name)


def posseg(text: str) -> list[tuple[str, str]]:
    """jieba (word, part-of-speech tag) pairs covering ``text`` character for character."""
    load_jieba()
    import jieba.posseg as pseg

    cuts = [i for m in _HAN_RUN_RE.finditer(text) if m.end() - m.start() > HAN_PIECE
            for i in range(m.start() + HAN_PIECE, m.end(), HAN_PIECE)]
    out: list[tuple[str, str]] = []  # a long run of Han characters cut as the analyzer cuts it (linear time)
    for a, b in zip([0, *cuts], [*cuts, len(text)]):
        out += [(w, t) for w, t in pseg.lcut(text[a:b])]
    return out


_shared: Analyzer | None = None
_shared_lock = threading.Lock()


def shared_analyzer() -> Analyzer:
    """One analyzer (the default) for helpers that need the BM25 view of words (keywords, key
    sentences)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = analyzer_for(DEFAULT_ANALYZER)
    return _shared


def analyzed_terms(phrases: Iterable[str]) -> str:
    """The analyzer terms of some phrases, space-joined, each term once, in order."""
    analyzer = shared_analyzer()
    out: dict[str, None] = {}
    for phrase in phrases:
        out.update(dict.fromkeys(analyzer.terms(phrase)))
    return " ".join(out)
