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
"""
from __future__ import annotations

import re

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


def detect_language(text: str) -> str:
    """``zh``, ``en`` or ``other`` (module docstring)."""
    han = len(CJK_RE.findall(text))
    kana = len(_KANA_RE.findall(text))
    hangul = len(_HANGUL_RE.findall(text))
    if kana >= 2 and kana * 5 >= han or hangul >= 2 and hangul >= han:
        return "other"
    latin = _LATIN_WORD_RE.findall(text)
    other_words = len(_OTHER_LETTER_RE.findall(text)) / 5  # about five letters a word
    if han and han >= len(latin) * 0.5 and han >= other_words:
        return "zh"
    if other_words > len(latin):
        return "other"
    lower = [w.lower().replace("’", "'") for w in latin]
    english = sum(w in _ENGLISH for w in lower)
    foreign = sum(w in _FOREIGN for w in lower)
    if foreign > english:
        return "other"
    if english == 0 and lower and 2 * sum(not w.isascii() for w in lower) > len(lower):
        return "other"
    return "en"
