"""Sentence splitting for Chinese and English, returning character spans.

Spans cover the text without gaps except whitespace, so children cut from them are exact
slices of their parent and can be highlighted in it.
"""
from __future__ import annotations

import re

# A sentence ends at Chinese 。！？；… (plus closing quotes/brackets), or at English .!?;
# followed by whitespace, or at a line break that ends a paragraph or list item.
_END_RE = re.compile(
    r"""(
        [。！？；!?]+[”’"'）)\]」』]*          # CJK / bang / question enders
      | (?<!\b[A-Za-z])(?<!\.)\.++[”’"'）)\]]*+(?=\s)(?!\s++[a-z])  # a full stop before space, not after
                                          # an initial ("J. Smith"), nor before a lower-case word; a run of
                                          # dots tried from its first only (else a long run is quadratic)
      | ;(?=\s)
      | \n\s*\n                               # paragraph break
      | \n(?=\s*(?:[-*+]|\d+[.)])\s)          # before a list item
    )""",
    re.VERBOSE,
)

# Abbreviations that must not end an English sentence.
_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "Fig.", "fig.", "Figs.", "Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "Sr.", "Jr.",
           "St.", "Mt.", "No.", "Nos.", "Vol.", "vol.", "pp.", "cf.", "approx.", "et al.", "Inc.", "Ltd.", "Co.",
           "Corp.", "Jan.", "Feb.", "Mar.", "Apr.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec.", "Eq.", "Ref.",
           "Gen.", "Gov.", "Rep.", "Sen.", "Rev.", "Hon.", "ca.", "Nr.", "z.B.", "bzw.", "usw.", "M.", "Mme.")


ABBREV_TAIL = 2 * max(map(len, _ABBREV)) + 2  # what an abbreviation test reads of a piece's end


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return (start, end) spans of sentences in ``text``; leading/trailing spaces trimmed."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END_RE.finditer(text):
        end = m.end()
        # the last few characters are enough to tell an abbreviation (the whole piece since the last
        # sentence end would make "Dr. Dr. Dr. ..." quadratic)
        if m.group(0).startswith(".") and _ends_with_abbreviation(text[max(start, end - ABBREV_TAIL):end],
                                                                   end - ABBREV_TAIL <= start):
            continue
        _append_trimmed(text, start, end, spans)
        start = end
    _append_trimmed(text, start, len(text), spans)
    return spans


def _ends_with_abbreviation(piece: str, whole: bool = True) -> bool:
    """The piece ends with a whole abbreviation ("Dr.", "et al."; "IBM." does not end with "M.");
    ``whole``: the piece starts where its sentence does (else it is the end of a longer one)."""
    piece = piece.rstrip()
    if not piece.endswith(_ABBREV):  # one test in C for the usual case, a sentence's own period
        return False
    return any(piece.endswith(a) and ((whole and len(piece) == len(a))
                                      or (len(piece) > len(a) and not piece[-len(a) - 1].isalnum()))
               for a in _ABBREV)


def _append_trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))
