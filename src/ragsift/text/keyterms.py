"""Entities and key terms of a text, for follow-up queries without a language model.

- English: runs of capitalised words (with inner "of", "the", "and", "de" ...) and quoted
  titles; sentence-initial function words are dropped.
- Chinese: names from jieba's part-of-speech tags (nr person, ns place, nt organisation,
  nz other proper noun), joined across "·" as in transliterated names, and titles in 《》.

``new_terms`` ranks the terms of some passages that a question does not already contain.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

_EN_CONNECT = {"of", "the", "and", "de", "da", "von", "van", "der", "del", "la", "le", "for", "in", "on", "at", "&"}
_EN_SKIP = {
    "The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "We", "I", "His", "Her", "Its", "Their",
    "This", "That", "These", "Those", "There", "After", "Before", "During", "As", "By", "For", "From", "With",
    "When", "While", "Although", "However", "Since", "But", "And", "Or", "If", "Also", "Both", "Then", "Many",
    "Most", "Some", "One", "Two", "Three", "First", "Second", "Other", "Its", "Is", "Was", "Are", "Were", "What",
    "Which", "Who", "Whom", "Where", "How", "Why", "Did", "Does", "Do", "Has", "Have", "Had", "Not", "No", "Yes",
}
# capitalised words that are rarely the entity a follow-up search needs
_EN_WEAK = {
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    "American", "British", "English", "French", "German", "Italian", "Spanish", "Canadian", "Australian",
    "European", "Irish", "Scottish", "Welsh", "Japanese", "Chinese", "Indian", "Russian", "Dutch", "Swedish",
    "Mexican", "Brazilian", "Korean", "Greek", "Polish", "Norwegian", "Danish", "Finnish", "Austrian", "Swiss",
}
_WORD = re.compile(r"[A-Za-z][\w'’\-.]*|\d{4}|&")
_QUOTED = re.compile(r"[\"“]([^\"”]{3,60})[\"”]")
_ZH_TITLE = re.compile(r"《([^》]{1,40})》")
_ZH_NAME_TAGS = {"nr", "ns", "nt", "nz", "nrt", "nrfg"}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def english_terms(text: str) -> list[str]:
    out: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    words = list(_WORD.finditer(text))
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].lower() in _EN_CONNECT:
            run.pop()
        if run:
            out.append(" ".join(run))
        run.clear()

    prev_end = -1
    for m in words:
        w = m.group(0).rstrip(".")
        gap = text[prev_end:m.start()] if prev_end >= 0 else " "
        if run and gap.strip():  # punctuation between words ends a name
            flush()
        prev_end = m.end()
        if w.isdigit():  # numbers end a name and are not terms themselves
            flush()
            continue
        if w[:1].isupper():
            if not run and w in _EN_SKIP:
                continue
            run.append(w)
        elif run and w.lower() in _EN_CONNECT:
            run.append(w)
        else:
            flush()
    flush()
    return [t for t in out if t and t not in _EN_SKIP and t not in _EN_WEAK]


def chinese_terms(text: str) -> list[str]:
    import jieba.posseg as pseg

    out = [m.group(1) for m in _ZH_TITLE.finditer(text)]
    run: list[str] = []
    for w, tag in pseg.lcut(text):
        if tag in _ZH_NAME_TAGS and len(w) > 1 or (run and w == "·") or (run and tag in _ZH_NAME_TAGS):
            run.append(w)
            continue
        if run:
            out.append("".join(run).strip("·"))
            run = []
    if run:
        out.append("".join(run).strip("·"))
    return [t for t in out if len(t) > 1]


def terms(text: str) -> list[str]:
    """Entities and key terms in order of appearance (repeats kept)."""
    found = english_terms(text)
    if _CJK.search(text):
        found += chinese_terms(text)
    return found


def _contained(term: str, question: str) -> bool:
    q = question.lower()
    if term.lower() in q:
        return True
    words = [w for w in re.findall(r"\w+", term.lower()) if w not in _EN_CONNECT]
    return bool(words) and all(re.search(r"\b" + re.escape(w) + r"\b", q) for w in words)


def new_terms(question: str, passages: Sequence[str], limit: int = 3) -> list[str]:
    """Terms of ``passages`` (best first) that ``question`` does not contain, best first: a term
    scores by how many passages name it, with earlier passages and earlier mentions counting more."""
    score: Counter[str] = Counter()
    form: dict[str, str] = {}
    for rank, text in enumerate(passages):
        seen: set[str] = set()
        for pos, t in enumerate(terms(text)):
            key = t.lower()
            if key in seen or _contained(t, question):
                continue
            seen.add(key)
            form.setdefault(key, t)
            multiword = 0.25 if (" " in t or "·" in t) else 0.0
            score[key] += 1.0 / (1 + rank) + 0.5 / (1 + pos) + multiword
    # a term inside a longer term that is also there adds nothing
    ranked = [k for k, _ in score.most_common()]
    out: list[str] = []
    for k in ranked:
        if any(k in o.lower() or o.lower() in k for o in out):
            continue
        out.append(form[k])
        if len(out) == limit:
            break
    return out


def residual_words(question: str, passages: Sequence[str]) -> list[str]:
    """The question's content words that none of ``passages`` contains: the part of the
    question that what was found does not yet cover."""
    from ragsift.text.analyzer import CHINESE_STOPWORDS, ENGLISH_STOPWORDS

    seen = " ".join(passages).lower()
    out: list[str] = []
    if _CJK.search(question):
        import jieba

        words = jieba.lcut(question)
    else:
        words = re.findall(r"[\w'’\-]+", question)
    for w in words:
        lw = w.lower()
        if len(lw) < 2 or lw in ENGLISH_STOPWORDS or w in CHINESE_STOPWORDS or not re.search(r"\w", lw):
            continue
        found = lw in seen if _CJK.search(w) else re.search(r"\b" + re.escape(lw) + r"\b", seen)
        if not found and lw not in (o.lower() for o in out):
            out.append(w)
    return out
