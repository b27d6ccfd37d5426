"""Running heads, feet and page numbers marked; headings from the document's outline (each entry
matched to a line of its page) or from font size and weight."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from ragsift.ingest.loaders.layout.lines import (
    MARGIN,
    PAGE_NUMBER,
    SENTENCE_END,
    Line,
    _joins_without_space,
    join_lines,
)


def _norm(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def mark_margins(pages: Sequence[tuple[float, list[Line]]]) -> None:
    """Drop running heads and feet (repeating on at least half of the pages, two at least) and
    page numbers at the edges of every page; ``pages`` is (height, lines) per page."""
    edges = [(height, _edge_lines(lines, height)) for height, lines in pages]
    seen: Counter = Counter()
    for _, lines in edges:
        seen.update({_norm(ln.text) for ln in lines})
    repeated = {k for k, n in seen.items() if n >= max(2, len(pages) * 0.5)} if len(pages) >= 2 else set()
    for _, lines in edges:
        for ln in lines:
            if _norm(ln.text) in repeated or PAGE_NUMBER.match(ln.text):
                ln.drop = True


def _edge_lines(lines: Sequence[Line], height: float) -> list[Line]:
    """The lines of a page's head and foot: the rows at its top (and bottom) tenth set apart from
    the body by a gap of at least a line's height (a body line that only reaches into the top
    tenth is not one)."""
    if height <= 0:
        return []
    rows: list[list[Line]] = []
    for ln in sorted((ln for ln in lines if ln.text.strip()), key=lambda ln: ln.top):
        if rows and ln.top < max(x.bottom for x in rows[-1]) - 0.3 * ln.height:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    out: list[Line] = []
    for ordered, inside in ((rows, lambda r: max(x.bottom for x in r) <= height * MARGIN),
                            (rows[::-1], lambda r: min(x.top for x in r) >= height * (1 - MARGIN))):
        block = []
        for i, row in enumerate(ordered):
            if not inside(row):
                break
            block.append(row)
            if i + 1 < len(ordered):
                nxt = ordered[i + 1]
                gap = (min(x.top for x in nxt) - max(x.bottom for x in row) if ordered is rows
                       else min(x.top for x in row) - max(x.bottom for x in nxt))
                if gap >= max(x.height for x in row):
                    out += [ln for r in block for ln in r]
                    block = []
        if len(block) == len(ordered):  # a page of margin lines only (a near-empty page)
            out += [ln for r in block for ln in r]
    return out


def body_size(lines: Iterable[Line]) -> float:
    """The font size most of the text is set in."""
    weight: Counter = Counter()
    for ln in lines:
        if not ln.drop:
            weight[round(ln.size * 2) / 2] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else 0.0


def mark_headings_by_font(lines: list[Line]) -> None:
    """Headings where the document has no outline: larger than the body text, or bold at its
    size, short, not ending a sentence; the larger the size, the higher the level."""
    body = body_size(lines)
    if body <= 0:
        return
    cands: list[Line] = []
    for i, ln in enumerate(lines):
        text = ln.text.strip()
        if ln.drop or not text or len(text) > 150 or text.endswith(SENTENCE_END) or PAGE_NUMBER.match(text):
            continue
        if not any(c.isalpha() for c in text):
            continue
        larger = ln.size >= body * 1.15
        bold = ln.bold and ln.size >= body * 0.95 and len(text) <= 90 and not _continues(lines, i)
        if larger or bold:
            cands.append(ln)
    cands = _without_byline(lines, cands)
    sizes = sorted({round(ln.size * 2) / 2 for ln in cands if ln.size >= body * 1.15}, reverse=True)
    for ln in cands:
        s = round(ln.size * 2) / 2
        ln.heading = min(6, sizes.index(s) + 1) if s in sizes else min(6, len(sizes) + 1)
    _join_wrapped_headings(lines)


ABSTRACT = re.compile(r"^\s*(?:abstract|summary|摘\s*要|内容提要)\W*$", re.IGNORECASE)


def _without_byline(lines: list[Line], cands: list[Line]) -> list[Line]:
    """A paper's first page above its "Abstract": the title (the largest lines) is a heading, the
    authors and affiliations set bold or large below it are not (they were read as headings, each
    replacing the one before, so the by-line was lost)."""
    first = lines[0].page if lines else 0
    mark = next((ln for ln in lines if ln.page == first and ABSTRACT.match(ln.text) and not ln.drop), None)
    if mark is None:
        return cands
    above = [c for c in cands if c.page == first and c.top < mark.top]
    if not above:
        return cands
    title_size = max(c.size for c in above)
    byline = {id(c) for c in above if c.size < title_size * 0.95}
    return [c for c in cands if id(c) not in byline]


def _join_wrapped_headings(lines: list[Line]) -> None:
    """A heading wrapped over lines (a narrow column) is one heading: a line set like the heading
    just above it (size, weight, left edge or centre), a line's spacing below, joins it ("Cast
    and" / "characters (" / ")")."""
    prev: Line | None = None
    for ln in lines:
        if ln.drop or not ln.text.strip():
            continue
        if (prev is not None and prev.heading and ln.heading in (0, prev.heading) and ln.page == prev.page
                and ln.column == prev.column and ln.bold == prev.bold and abs(ln.size - prev.size) <= 0.05 * prev.size
                and 0 <= ln.top - prev.bottom <= 0.8 * prev.height and len(prev.text) + len(ln.text) <= 200
                and (abs(ln.x0 - prev.x0) <= 3 or abs((ln.x0 + ln.x1) - (prev.x0 + prev.x1)) <= 6)):
            prev.text = join_lines([prev.text, ln.text])
            prev.bottom = ln.bottom
            ln.drop = True
            continue
        prev = ln


def _continues(lines: list[Line], i: int) -> bool:
    """Whether a bold line runs on into the next one as one paragraph (bold body text, not a heading)."""
    if i + 1 >= len(lines):
        return False
    a, b = lines[i], lines[i + 1]
    return b.bold and b.column == a.column and b.page == a.page and 0 <= b.top - a.bottom <= 0.5 * a.height


def match_outline(lines: list[Line], entries: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Mark the lines an outline's entries (title, level, page) name as headings of that level;
    returns the entries no line of their page matched (a heading is then put at their page).

    A line that says the title (its section number aside: "2.1.1 Vectors" for "Vectors") is taken
    first; then one that says it across up to four lines (a long title wrapped); only then a line
    that starts with the title, one set larger or bold before one that is not: a body line that
    begins with the heading's word ("Vectors can be thought of as ...", under the heading) is no
    heading."""
    by_page: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        by_page.setdefault(ln.page, []).append(i)
    body = {page: body_size(lines[i] for i in idx) for page, idx in by_page.items()}
    keys: dict[int, tuple[str, str]] = {}  # a line's key, with and without its number (a page has many entries)
    missing = []
    for title, level, page in entries:
        want, want_bare = _key(title), _key(SECTION_NUMBER.sub("", title, count=1))
        best: tuple[int, int, int] | None = None  # (rank, line index, lines after it the heading takes)
        for i in by_page.get(page, []):
            ln = lines[i]
            if ln.drop or ln.heading:
                continue
            if i not in keys:
                keys[i] = (_key(ln.text), _key(SECTION_NUMBER.sub("", ln.text, count=1)))
            got, bare = keys[i]
            if got == want or (want_bare and bare == want_bare):
                rank, joins = 0, 0
            elif (len(bare) > 3 and want_bare.startswith(bare)
                  and (joins := _title_wraps(lines, i, want_bare))):
                rank = 1
            elif len(want) > 3 and got.startswith(want):
                rank, joins = (2 if ln.bold or ln.size > 1.05 * body[page] else 3), 0
            else:
                continue
            if best is None or rank < best[0]:
                best = (rank, i, joins)
                if rank == 0:
                    break
        if best is None:
            missing.append((title, level, page))
            continue
        ln = lines[best[1]]
        ln.heading = min(6, level)
        for nxt in lines[best[1] + 1:best[1] + 1 + best[2]]:
            ln.text = ln.text + ("" if _joins_without_space(ln.text, nxt.text) else " ") + nxt.text
            nxt.drop = True
    return missing


def mark_headings_below_outline(lines: list[Line]) -> None:
    """Headings an outline leaves out (texinfo's ``@subheading``, a manual's run-in titles): a
    line set bold at the body's size or larger, standing alone (space above it, not running on
    into bold text), short and ending no sentence, of two letters or more (an index's "A" is
    none), not in a table (tables are found first), under an outline heading; a level below it."""
    body = body_size(lines)
    level, prev = 0, None
    for i, ln in enumerate(lines):
        if ln.drop or not ln.text.strip():
            continue
        if ln.heading:
            level, prev = ln.heading, ln
            continue
        text = ln.text.strip()
        alone = (prev is None or prev.page != ln.page or prev.column != ln.column
                 or ln.top - prev.bottom > 0.6 * ln.height or bool(prev.heading))
        set_apart = ln.bold and ln.size >= body * 0.95 or ln.size >= body * 1.15
        if (level and set_apart and len(text) <= 90 and alone and not _continues(lines, i)
                and not text.endswith(SENTENCE_END) and not PAGE_NUMBER.match(text)
                and sum(c.isalpha() for c in text) >= 2 and ln.table is None):
            ln.heading = min(6, level + 1)
        prev = ln


def _title_wraps(lines: list[Line], i: int, want: str) -> int:
    """How many lines after line ``i`` (of its page, up to three) complete the title ``want``
    (keyed, without its number) that line ``i`` begins; 0 when they do not."""
    text = SECTION_NUMBER.sub("", lines[i].text, count=1)
    for k in range(i + 1, min(len(lines), i + 4)):
        nxt = lines[k]
        if nxt.drop or nxt.heading or nxt.page != lines[i].page:
            return 0
        text += nxt.text
        got = _key(text)
        if got == want:
            return k - i
        if not want.startswith(got):
            return 0
    return 0


#: a heading's section number before its words: "2.1.1 ", "A.3 ", "IV. ", "Chapter 3 ", "第3章 "
SECTION_NUMBER = re.compile(r"^\s*(?:(?:(?:chapter|appendix|section|part)\s+)?(?:\d{1,3}(?:\.\d{1,3})*\.?"
                            r"|[A-Z](?:\.\d{1,3})+\.?|[IVX]{1,5}\.)\s+|第\s*[\d一二三四五六七八九十百]+\s*[章节部分篇]\s*)",
                            re.I)


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())

