"""Names of documents inside text: the link index that multi-hop follows.

A knowledge base's document titles are the names it knows. ``TitleIndex`` finds them in any
text (a question, a passage found by the first search): "Kiss and Tell" in a passage about
Corliss Archer names the document titled "Kiss and Tell", so a second hop can fetch it, the
way a reader follows a link.

Matching is on whole words after NFKC and case folding: text is cut into tokens (a run of
letters and digits, or one CJK character), a title is a token sequence, and a title matches
where its tokens appear in order, leftmost-longest, without overlaps. So "Iowa" is not found in
"Iowan", and Chinese titles match inside running text ("长江三峡" in "游览长江三峡的最佳季节").

A title that ends in a bracket ("Oceans (film)", "李娜（网球运动员）") is also named without it.
Titles too short to name something (under ``MIN_LATIN_CHARS`` letters in a single word, under
``MIN_CJK_CHARS`` characters in CJK) and titles longer than ``MAX_TOKENS`` tokens are left out.
A one-word title in a cased script ("More", "Parents", "December") is a common word as often as
a name: it matches only where the text writes it with a capital, and never when it is a stopword,
a month, a day or a nationality (``wordlists``), so "more than" and "in December" name nothing.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import cache

from ragsift.text.lang import CJK_RE
from ragsift.text.wordlists import words

MIN_LATIN_CHARS = 4  # "Iowa" names a document, "Art" or "The" would name every text
MIN_CJK_CHARS = 2
MAX_TOKENS = 16
MAX_TITLE_CHARS = 1000  # a longer title is not a name (MAX_TOKENS would leave it out after reading it whole)
BRACKET_RE = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")  # a trailing "(film)", "（歌手）"
TOKEN_RE = re.compile(CJK_RE.pattern + r"|[^\W_]+")  # one CJK character, or a run of other letters and digits


def _surface(text: str) -> list[tuple[str, bool]]:
    """Tokens, case-folded, each with whether the text wrote it with a capital (titles and texts
    are cut the same way, so a title's tokens are found wherever a text writes them)."""
    return [(t.casefold(), t[:1].isupper()) for t in TOKEN_RE.findall(unicodedata.normalize("NFKC", text))]


def _tokens(text: str) -> list[str]:
    return [t for t, _ in _surface(text)]


@cache
def _common() -> frozenset[str]:
    """Case-folded words that a one-word title cannot be named by."""
    return frozenset(w.casefold() for name in ("stopwords-en", "en-weak", "en-generic") for w in words(name))


def _names_something(tokens: Sequence[str]) -> bool:
    if not tokens or len(tokens) > MAX_TOKENS:
        return False
    if all(CJK_RE.fullmatch(t) for t in tokens):
        return len(tokens) >= MIN_CJK_CHARS
    return len(tokens) > 1 or len(tokens[0]) >= MIN_LATIN_CHARS


class TitleIndex:
    """Titles (each naming one or more documents) found in text by whole-token matching."""

    def __init__(self, titles: Iterable[tuple[str, str]]) -> None:
        """``titles``: (document id, title) pairs; empty and too-short titles are skipped."""
        self._docs: dict[tuple[str, ...], list[str]] = {}
        self._form: dict[tuple[str, ...], str] = {}
        for doc_id, title in titles:
            title = " ".join((title or "").split())  # one space between words (no long runs for BRACKET_RE)
            if len(title) > MAX_TITLE_CHARS:  # a paragraph, not a name; and find() costs its length in tokens
                continue
            # "Oceans (film)" is also named by "Oceans": the bracket only tells same names apart
            short = BRACKET_RE.sub("", title)
            for name in dict.fromkeys([title, short]):
                key = tuple(_tokens(name))
                if _names_something(key) and doc_id not in self._docs.get(key, ()):
                    self._docs.setdefault(key, []).append(doc_id)
                    self._form.setdefault(key, name)
        self._lengths = sorted({len(k) for k in self._docs}, reverse=True)

    def __len__(self) -> int:
        return len(self._docs)

    @staticmethod
    def _names_alone(token: str, capital: bool) -> bool:
        """Whether one word names its title here: always in a script without case (CJK); in a
        cased one, when written with a capital and not a common word."""
        if token.lower() == token.upper():  # no case: CJK, digits
            return True
        return capital and token not in _common()

    def find(self, text: str, limit: int | None = None) -> list[tuple[str, list[str]]]:
        """The titles named in ``text`` with their documents, in order of first mention (each
        once), at most ``limit``."""
        surface = _surface(text)
        toks = [t for t, _ in surface]
        out: list[tuple[str, list[str]]] = []
        seen: set[tuple[str, ...]] = set()
        i = 0
        while i < len(toks) and (limit is None or len(out) < limit):
            for n in self._lengths:
                key = tuple(toks[i:i + n])
                if len(key) == n and key in self._docs and (n > 1 or self._names_alone(key[0], surface[i][1])):
                    if key not in seen:
                        seen.add(key)
                        out.append((self._form[key], list(self._docs[key])))
                    i += n
                    break
            else:
                i += 1
        return out

    def documents_named(self, texts: Iterable[str], exclude: Iterable[str] = (),
                        limit: int | None = None) -> list[tuple[str, list[str]]]:
        """Titles named in ``texts`` (best text first) whose documents are not all in
        ``exclude``, each once, with those documents minus ``exclude``."""
        skip = set(exclude)
        out: list[tuple[str, list[str]]] = []
        named: set[str] = set()
        for text in texts:
            for title, docs in self.find(text):
                rest = [d for d in docs if d not in skip]
                if rest and title.casefold() not in named:
                    named.add(title.casefold())
                    out.append((title, rest))
                    if limit is not None and len(out) >= limit:
                        return out
        return out

