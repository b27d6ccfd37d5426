"""Language detection good enough to pick an analyzer, a prompt and a cross-language weight:
``zh`` (Chinese), ``en`` (English) or ``other``.

- Japanese (kana) and Korean (hangul) text, and text mostly in other scripts (Cyrillic, Greek,
  Arabic, Devanagari ...), is ``other``, even when it holds Chinese characters.
- Han characters against Latin words: one character counts against one word, so
  "什么是 BERT?" is ``zh``.
- Latin-script text is ``en`` unless it has more function words of German, French, Spanish,
  Italian, Portuguese or Dutch than of English, or (with no function words at all) mostly
  words with accents (more than half): "Der Hund ist zurück" is ``other``; "BERT attention heads" is ``en``.

``other`` gets English prompts and the same Unicode analyzer; it is never mistaken for the
language of an English or Chinese chunk.

An entry (a chunk) is in its document's language unless its own text is clearly in another
(``entry_languages``): a command, a configuration file, a code sample or a line of product names
in a Chinese manual reads as English word by word, yet a term channel's match there comes from
the names it shares with the question, as anywhere else in that manual.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from ragsift.text.wordlists import words

# CJK Unified Ideographs (+ extension A, compatibility ideographs)
CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_RE = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL_RE = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z\u00c0-\u024f]+)?")
# letters of other scripts: not Latin, not CJK, kana or hangul
_OTHER_LETTER_RE = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                              r"\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uff66-\uff9f]")
_ENGLISH = words("stopwords-en")
_FOREIGN = words("function-other")

LANGUAGES = ("zh", "en", "other")


def is_cjk_char(ch: str) -> bool:
    return bool(CJK_RE.match(ch))


class Counts(NamedTuple):
    """What language detection reads from a text; counts add up, so the counts of a document's
    entries summed are the document's."""

    han: int = 0
    kana: int = 0
    hangul: int = 0
    latin: int = 0  # Latin-script words
    other_letters: int = 0  # letters of other scripts
    english: int = 0  # English function words
    foreign: int = 0  # function words of other Latin-script languages
    accented: int = 0  # Latin words with a letter outside ASCII


def counts(text: str) -> Counts:
    lower = [w.lower().replace("’", "'") for w in _LATIN_WORD_RE.findall(text)]
    return Counts(len(CJK_RE.findall(text)), len(_KANA_RE.findall(text)), len(_HANGUL_RE.findall(text)),
                  len(lower), len(_OTHER_LETTER_RE.findall(text)), sum(w in _ENGLISH for w in lower),
                  sum(w in _FOREIGN for w in lower), sum(not w.isascii() for w in lower))


def language_of(c: Counts) -> str:
    """``zh``, ``en`` or ``other`` from a text's counts (module docstring)."""
    if c.kana >= 2 and c.kana * 5 >= c.han or c.hangul >= 2 and c.hangul >= c.han:
        return "other"
    other_words = c.other_letters / 5  # about five letters a word
    if c.han and c.han >= c.latin * 0.5 and c.han >= other_words:
        return "zh"
    if other_words > c.latin:
        return "other"
    if c.foreign > c.english:
        return "other"
    if c.english == 0 and c.latin and 2 * c.accented > c.latin:
        return "other"
    return "en"


def detect_language(text: str) -> str:
    """``zh``, ``en`` or ``other`` (module docstring)."""
    return language_of(counts(text))


#: an English entry of a document in another language is English when at least this share of its
#: Latin words are English function words (prose: 5,181 of SciFact's 5,183 abstracts have this
#: much, their median 0.34; a command's output or a configuration file's keys far less) ...
PROSE_SHARE = 0.15
#: ... and its letters of other scripts are fewer than this share of its Latin words (the Chinese
#: line that introduces a code sample makes that sample part of the Chinese text)
SCRIPT_SHARE = 0.1


def _english_prose(c: Counts) -> bool:
    script = c.han + c.kana + c.hangul + c.other_letters / 5
    return bool(c.latin) and c.english >= PROSE_SHARE * c.latin and script < SCRIPT_SHARE * c.latin


def entry_languages(texts: Sequence[str], documents: Sequence[str]) -> list[str]:
    """The language of each entry ``texts[i]`` of the document ``documents[i]`` (its id): its own
    (``detect_language``), except that an entry reading as English in a document in another
    language (``language_of`` its entries' counts summed) is the document's unless it is English
    prose (``PROSE_SHARE`` of its words function words, other scripts under ``SCRIPT_SHARE`` of
    them)."""
    each = [counts(t) for t in texts]
    summed: dict[str, Counts] = {}
    for d, c in zip(documents, each):
        summed[d] = Counts(*map(sum, zip(summed.get(d, Counts()), c)))
    main = {d: language_of(c) for d, c in summed.items()}
    out = []
    for d, c in zip(documents, each):
        own = language_of(c)
        out.append(main[d] if own == "en" and main[d] != "en" and not _english_prose(c) else own)
    return out
