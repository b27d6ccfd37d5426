"""Key words and phrases of a Chinese or English text, without a model.

- Chinese: key words from jieba's TF-IDF (nouns and the like), with words that keep occurring
  side by side joined into phrases ("智能音箱").
- English: key phrases from a RAKE-style scorer over candidate phrases delimited by stopwords,
  common verbs and punctuation ("solar panel cleaning").
- Mixed text gets both, each weighted by its share of the text.

``keyword_terms`` gives them as BM25 analyzer terms, for the keyword side index (channel
``keywords``) queried with the same analyzer. Everything is deterministic and needs no download.
"""
from __future__ import annotations

import math
import re
from collections import Counter

from ragsift.text.analyzer import (
    CHINESE_STOPWORDS,
    ENGLISH_STOPWORDS,
    analyzed_terms,
    load_jieba,
    posseg,
    shared_analyzer,
)
from ragsift.text.lang import CJK_RE
from ragsift.text.wordlists import words

__all__ = ["keywords", "keyword_terms"]

# English tokens: words with inner hyphens, apostrophes or dots ("wi-fi", "user's", "v1.2")
_EN_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-'’.][A-Za-z0-9]+)*")
_NUMERIC = re.compile(r"[0-9][0-9.,]*")
# RAKE needs a longer stop list than BM25 does: these words delimit phrases too (and are
# never a name on their own at a sentence start: ``entities``)
PHRASE_STOPWORDS = ENGLISH_STOPWORDS | words("rake-stop")
_RAKE_STOP = PHRASE_STOPWORDS
_RAKE_MAX_WORDS = 4

# jieba tags kept as Chinese keyword candidates: nouns, names, verbal nouns, abbreviations,
# set phrases and Latin words
_ZH_KEYWORD_POS = ("n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "vn", "j", "l", "eng")
_ZH_PHRASE_MAX_WORDS = 4
_ZH_PHRASE_MAX_CHARS = 12
# below this share of Latin words in a text with Chinese, English gets no phrases of its own
_MIN_ENGLISH_SHARE = 0.15


def keywords(text: str, k: int = 10) -> list[tuple[str, float]]:
    """The ``k`` best key words and phrases of ``text`` with scores, best first.

    Chinese words come from jieba's TF-IDF, plus phrases of keywords that occur side by side at
    least twice (scored as the sum of their words); English phrases come from a RAKE-style
    scorer (lower-cased, up to four words, variants grouped by stem). In mixed text each side
    is weighted by its share of the text. Scores are relative: the best keyword scores 1.0.
    """
    if k <= 0 or not text or not text.strip():
        return []
    zh_units = len(CJK_RE.findall(text)) / 1.5  # about 1.5 characters a Chinese word
    en_units = sum(1 for m in _EN_TOKEN.finditer(text) if not _NUMERIC.fullmatch(m.group(0)))
    total = zh_units + en_units
    if total == 0:
        return []
    merged: dict[str, float] = {}
    first_pos: dict[str, int] = {}
    sides: list[tuple[float, list[tuple[str, float, int]]]] = []
    if zh_units:
        # Latin words inside Chinese text ("S2", "Wi-Fi") are scored by jieba along with the
        # Chinese, unless there is enough English for phrases of its own
        latin = en_units / total < _MIN_ENGLISH_SHARE
        sides.append((zh_units / total, _chinese_keywords(text, k, keep_latin=latin)))
    if en_units:
        sides.append((en_units / total, _english_keywords(text)))
    for weight, found in sides:
        if not found:
            continue
        top = max(s for _, s, _ in found)
        for phrase, score, pos in found:
            value = weight * score / top
            if value > merged.get(phrase, 0.0):
                merged[phrase] = value
            first_pos[phrase] = min(pos, first_pos.get(phrase, pos))
    if not merged:
        return []
    best = max(merged.values())
    ranked = sorted(merged, key=lambda p: (-round(merged[p], 12), first_pos[p], p))
    return [(p, round(merged[p] / best, 6)) for p in ranked[:k]]


def _verb_forms(bases: str) -> frozenset[str]:
    """Third-person and past forms of regular verbs ("reduce" -> "reduces", "reduced")."""
    out: set[str] = set()
    for b in bases.split():
        if b.endswith("y") and b[-2:-1] not in "aeiou":
            out |= {b[:-1] + "ies", b[:-1] + "ied"}
        elif b.endswith("e"):
            out |= {b + "s", b + "d"}
        elif b.endswith(("s", "sh", "ch", "x", "z")):
            out |= {b + "es", b + "ed"}
        else:
            out |= {b + "s", b + "ed"}
    return frozenset(out)


# verbs end a key phrase ("the status light blinks blue" -> "status light", "blue"). Base forms
# delimit only for verbs that are rarely nouns; inflected forms for verbs whose plural-looking
# form is rarely a noun (so "updates", "answers", "controls", "lights" stay phrase words).
_EN_VERB_BASES = words("verbs-base")
_EN_VERB_INFLECTED = _verb_forms(" ".join(sorted(_EN_VERB_BASES | words("verbs-inflected")))) | words("verbs-irregular")
_RAKE_DELIM = _RAKE_STOP | _EN_VERB_BASES | _EN_VERB_INFLECTED
_SENTENCE_END = re.compile(r"(?:^|[.!?:;。！？；\n])\W*$")


def _split_long(run: list[tuple[str, str, int]]) -> list[list[tuple[str, str, int]]]:
    """A run of content words longer than ``_RAKE_MAX_WORDS`` is split at a likely verb (a word
    in -s after a word not in -s: "controller reports solar panel temperature"), else dropped
    (title-case headings such as "Aurora SmartHub X1 User Guide")."""
    if not run:
        return []
    if len(run) <= _RAKE_MAX_WORDS:
        return [run]
    for i in range(1, len(run) - 1):
        w, prev = run[i][0], run[i - 1][0]
        if w.endswith("s") and not w.endswith("ss") and not prev.endswith("s"):
            return _split_long(run[:i]) + _split_long(run[i + 1:])
    return []


def _english_keywords(text: str) -> list[tuple[str, float, int]]:
    """RAKE: candidate phrases are runs of content words between stopwords, common verbs,
    punctuation, numbers and a switch between a name and lower-case words ("Tokyo" | "offices");
    a word scores degree / frequency, a phrase the sum of its words' scores times
    1 + ln(how often the phrase occurs)."""
    candidates = _rake_candidates(text)
    if not candidates:
        return []
    return _rake_scored(candidates)


def _rake_candidates(text: str) -> list[list[tuple[str, str, int]]]:
    """RAKE's candidate phrases, each its words as (surface, stem key, position)."""
    analyzer = shared_analyzer()
    candidates: list[list[tuple[str, str, int]]] = []  # [(surface, stem key, position)]
    run: list[tuple[str, str, int]] = []
    prev_end: int | None = None
    prev_cap: bool | None = None

    def flush() -> None:
        candidates.extend(_split_long(list(run)))
        run.clear()

    for m in _EN_TOKEN.finditer(text):
        token = m.group(0)
        if run and prev_end is not None and text[prev_end:m.start()].strip():
            flush()  # punctuation or CJK between two words ends a phrase
        prev_end = m.end()
        word = token.lower().replace("’", "'")
        word = word.removesuffix("'s")
        if len(word) < 2 or _NUMERIC.fullmatch(word) or word in _RAKE_DELIM or word.split("'")[0] in _RAKE_DELIM:
            flush()
            prev_cap = None
            continue
        # a capitalised word not at a sentence start is (part of) a name; one at a sentence
        # start may be either and goes with its neighbour
        cap: bool | None = token[:1].isupper()
        if cap and _SENTENCE_END.search(text[max(0, m.start() - 8):m.start()]):
            cap = None
        if run and cap is not None and prev_cap is not None and cap != prev_cap:
            flush()
        prev_cap = cap
        key = "-".join(analyzer.terms(word)) or word
        run.append((word, key, m.start()))
    flush()
    return candidates


def _rake_scored(candidates: list[list[tuple[str, str, int]]]) -> list[tuple[str, float, int]]:
    """Each distinct phrase named by its most frequent surface form, with its score and first position."""
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for cand in candidates:
        for _, key, _ in cand:
            freq[key] += 1
            degree[key] += len(cand)
    word_score = {w: degree[w] / freq[w] for w in freq}

    surfaces: dict[tuple[str, ...], Counter[str]] = {}
    first: dict[tuple[str, ...], int] = {}
    for cand in candidates:
        phrase = tuple(k for _, k, _ in cand)
        surfaces.setdefault(phrase, Counter())[" ".join(w for w, _, _ in cand)] += 1
        first.setdefault(phrase, cand[0][2])
    out: list[tuple[str, float, int]] = []
    for phrase, forms in surfaces.items():
        # the most frequent surface form names the phrase; the earliest one on a tie
        surface = max(forms.items(), key=lambda kv: kv[1])[0]
        count = sum(forms.values())
        out.append((surface, sum(word_score[w] for w in phrase) * (1 + math.log(count)), first[phrase]))
    return out


def _chinese_keywords(text: str, k: int, keep_latin: bool = True) -> list[tuple[str, float, int]]:
    """jieba TF-IDF words, Latin fragments mapped back to whole tokens ("Wi"+"Fi" -> "wi-fi"),
    and phrases of candidate words that stand side by side at least twice."""
    weights = _zh_weights(text, k, keep_latin)
    if not weights:
        return []
    positions: dict[str, int] = {}
    lowered = text.lower()
    for key in weights:
        pos = lowered.find(key.lower())
        positions[key] = pos if pos >= 0 else len(text)
    out = [(w, s, positions[w]) for w, s in weights.items()]
    phrase_count, phrase_parts, phrase_pos = _zh_phrases(text, weights)
    for phrase, count in phrase_count.items():
        if count >= 2 and phrase not in weights:
            out.append((phrase, sum(weights[p] for p in phrase_parts[phrase]), phrase_pos[phrase]))
    return out


def _zh_weights(text: str, k: int, keep_latin: bool) -> dict[str, float]:
    """jieba's TF-IDF words worth keeping and their weights, a Latin fragment under its whole token."""
    load_jieba()
    import jieba.analyse

    tags = jieba.analyse.extract_tags(text, topK=max(3 * k, 30), withWeight=True, allowPOS=_ZH_KEYWORD_POS)
    whole: dict[str, str] = {}  # lower-cased jieba fragment -> lower-cased whole token
    for m in _EN_TOKEN.finditer(text):
        tok = m.group(0).lower()
        whole.setdefault(tok, tok)
        for part in re.split(r"[-'’.]", tok):
            whole.setdefault(part, tok)
    weights: dict[str, float] = {}
    for word, weight in tags:
        if CJK_RE.search(word):
            if len(word) < 2 or word in CHINESE_STOPWORDS or not CJK_RE.fullmatch(word[0]):
                continue
            key = word
        elif not keep_latin:
            continue
        else:
            key = whole.get(word.lower(), word.lower())
            if len(key) < 2 or _NUMERIC.fullmatch(key) or key in _RAKE_STOP:
                continue
        weights[key] = max(weights.get(key, 0.0), weight)
    return weights


def _zh_phrases(text: str, weights: dict[str, float]
                ) -> tuple[Counter[str], dict[str, tuple[str, ...]], dict[str, int]]:
    """Phrases: maximal runs of adjacent candidate words ("星云"+"智能"+"音箱"), each with how often
    it occurs, its words and its first position."""
    phrase_count: Counter[str] = Counter()
    phrase_parts: dict[str, tuple[str, ...]] = {}
    run: list[str] = []
    pos = 0
    phrase_pos: dict[str, int] = {}
    run_start = 0

    def flush() -> None:
        if 2 <= len(run) <= _ZH_PHRASE_MAX_WORDS:
            phrase = "".join(run)
            if len(phrase) <= _ZH_PHRASE_MAX_CHARS:
                phrase_count[phrase] += 1
                phrase_parts.setdefault(phrase, tuple(run))
                phrase_pos.setdefault(phrase, run_start)
        run.clear()

    for word, _tag in posseg(text):
        if word in weights and CJK_RE.search(word):
            if not run:
                run_start = pos
            run.append(word)
        else:
            flush()
        pos += len(word)
    flush()
    return phrase_count, phrase_parts, phrase_pos


def keyword_terms(text: str, k: int = 10) -> str:
    """The ``k`` best keywords of ``text`` as BM25 analyzer terms, space-joined, each term once
    (in keyword rank order), ready for a keyword index queried with the same analyzer."""
    return analyzed_terms(p for p, _ in keywords(text, k))
