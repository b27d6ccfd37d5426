"""Page layout: words (or OCR lines) with their boxes -> lines in reading order -> paragraphs,
headings, list items, and the lines to drop (running heads and feet, page numbers).

- **Columns.** A page whose words leave an empty vertical band near the middle, with enough
  text on each side, is read as two columns: the left one, then the right one, between the
  lines that span both (titles, full-width figures and tables).
- **Paragraphs.** Lines follow each other in a paragraph when the gap between them is about a
  line's spacing and their size is the same; a hyphen at a line's end before a lower-case word
  is removed; lines of Chinese (or Japanese) join without a space.
- **Headings.** From the document's outline where it has one (each entry matched to a line of
  its page), else from font size and weight: lines clearly larger than the body text, or bold
  at its size, short and not ending a sentence; sizes give the levels.
- **Running heads, feet and page numbers.** Lines in the top or bottom tenth of the page, set
  apart from the body by at least a line's height, that repeat on at least half of the pages
  (digits aside), and lines there that are only a page number ("12", "Page 3 of 9", "- 4 -",
  "第 5 页"), are dropped.
"""
from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragsift.text.lang import is_cjk_char

BULLET = re.compile(r"^\s*(?:[•●◦▪■□‣⁃∙·\-–*]|\(?\d{1,2}[.)、]|\(?[a-z][.)]|[（(]\d{1,2}[)）])\s+")
PAGE_NUMBER = re.compile(r"^\s*(?:(?:page|p\.|seite|pagina)\s*)?\d{1,4}(?:\s*(?:of|/|von)\s*\d{1,4})?\s*$"
                         r"|^\s*[-–—]\s*\d{1,4}\s*[-–—]\s*$|^\s*第\s*\d{1,4}\s*页(?:\s*[,，/]?\s*共\s*\d{1,4}\s*页)?\s*$"
                         r"|^\s*[ivxlc]{1,6}\s*$", re.IGNORECASE)
SENTENCE_END = ("。", "！", "？", ".", "!", "?", ";", "；", "，", ",")
HYPHENS = ("-", "\u2010", "\u00ad")  # hyphen-minus, hyphen (Chromium's), soft hyphen
MARGIN = 0.1  # the top and bottom tenth of a page, where running heads and feet live


@dataclass
class Word:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float = 0.0
    bold: bool = False


@dataclass
class Line:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    column: int = 0  # 0 one column (or both: a line spanning two), 1 left, 2 right
    page: int = 0
    heading: int = 0  # 1..6 once found to be a heading
    drop: bool = False  # a running head or foot, a page number
    words: list[Word] = field(default_factory=list, repr=False)
    table: list[list[str]] | None = None  # the first line of a table found in the text: its rows

    @property
    def height(self) -> float:
        return max(1.0, self.bottom - self.top)


def is_bold(fontname: str) -> bool:
    name = fontname.lower()
    return any(w in name for w in ("bold", "black", "heavy", "semibold", "demi"))


CJK_PUNCT_AFTER = set("。，、；：！？）」』】》〉”’%")
CJK_PUNCT_BEFORE = set("（「『【《〈“‘")


def _joins_without_space(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (is_cjk_char(a[-1]) or is_cjk_char(b[0]) or b[0] in CJK_PUNCT_AFTER
                                     or a[-1] in CJK_PUNCT_BEFORE)


def join_words(words: Sequence[Word]) -> str:
    """A line's words left to right: a space where the gap between two is a space's width (or
    where neither side is Chinese or Japanese); none inside a run of CJK characters."""
    out = ""
    prev: Word | None = None
    for w in words:
        if prev is None:
            out = w.text
        else:
            gap = w.x0 - prev.x1
            size = max(1.0, w.size or (w.bottom - w.top))
            spaced = (gap > 0.15 * size and w.text[0] not in CJK_PUNCT_AFTER) or not _joins_without_space(out, w.text)
            out += (" " if spaced else "") + w.text
        prev = w
    return out


# CJK fonts often map a character to its Kangxi-radical or compatibility code point (⼿ U+2F3F
# for 手 U+624B): text extracted from them reads the same but matches nothing. NFKC maps them back.
_CJK_COMPAT = {c: unicodedata.normalize("NFKC", chr(c)) for r in ((0x2E80, 0x2EFF), (0x2F00, 0x2FDF), (0xF900, 0xFAFF))
               for c in range(*r) if unicodedata.normalize("NFKC", chr(c)) != chr(c)}


def cjk_unified(text: str) -> str:
    """``text`` with Kangxi radicals and CJK compatibility ideographs as the ideographs they stand for."""
    return text.translate(_CJK_COMPAT)


def gutter(words: Sequence[Word], width: float, height: float = 0.0) -> float | None:
    """The x of the empty band between two columns, or None for one column. With the page's
    ``height``, running heads and feet (centred across the gutter) are left out."""
    if height > 0:
        words = [w for w in words if w.top > MARGIN * height and w.bottom < (1 - MARGIN) * height] or list(words)
    if len(words) < 20 or width <= 0:
        return None
    bins = 60
    cover = [0] * bins
    for w in words:
        a, b = max(0, int(w.x0 / width * bins)), min(bins - 1, int(w.x1 / width * bins))
        for i in range(a, b + 1):
            cover[i] += 1
    lo, hi = int(bins * 0.3), int(bins * 0.7)
    best = min(range(lo, hi), key=lambda i: (cover[i], abs(i - bins // 2)))
    if cover[best] > max(1, len(words) * 0.01):
        return None
    x = (best + 0.5) / bins * width
    left = sum(1 for w in words if w.x1 <= x)
    right = sum(1 for w in words if w.x0 >= x)
    if min(left, right) < 0.2 * len(words):
        return None
    return x


def lines_of(words: Sequence[Word], width: float, page: int, height: float = 0.0) -> list[Line]:
    """The page's words in lines, in reading order (columns one after the other)."""
    g = gutter(words, width, height)
    groups: dict[int, list[Word]] = {0: [], 1: [], 2: []}
    for w in words:
        col = 0 if g is None or (w.x0 < g < w.x1) else (1 if w.x1 <= g else 2)
        groups[col].append(w)
    lines: list[Line] = []
    for col, ws in groups.items():
        for row in _rows(ws):
            row.sort(key=lambda w: w.x0)
            sizes = [w.size for w in row if w.size]
            lines.append(Line(join_words(row), min(w.x0 for w in row), min(w.top for w in row),
                              max(w.x1 for w in row), max(w.bottom for w in row),
                              statistics.median(sizes) if sizes else max(1.0, row[0].bottom - row[0].top),
                              all(w.bold for w in row), col, page, words=row))
    if g is None:
        return sorted(lines, key=lambda ln: (ln.top, ln.x0))
    # bands between the lines that span both columns: left column, then right, in each
    spans = sorted((ln for ln in lines if ln.column == 0), key=lambda ln: ln.top)
    cuts = [ln.top for ln in spans]

    def band(ln: Line) -> int:
        return sum(1 for c in cuts if c <= ln.top)
    return sorted(lines, key=lambda ln: (band(ln), 0 if ln.column == 0 else ln.column, ln.top, ln.x0))


def _rows(words: Sequence[Word]) -> list[list[Word]]:
    """Words on the same line, top to bottom: a word whose middle lies within a line's height
    joins it (a superscript or a smaller word included)."""
    rows: list[list[Word]] = []
    extent: list[tuple[float, float]] = []
    for w in sorted(words, key=lambda w: (w.top, w.x0)):
        mid = (w.top + w.bottom) / 2
        for k in range(max(0, len(rows) - 3), len(rows)):
            top, bottom = extent[k]
            if top - 0.1 * (bottom - top) <= mid <= bottom + 0.1 * (bottom - top):
                rows[k].append(w)
                if w.bottom - w.top > bottom - top:  # the larger word sets the line
                    extent[k] = (w.top, w.bottom)
                break
        else:
            rows.append([w])
            extent.append((w.top, w.bottom))
    return rows


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
    sizes = sorted({round(ln.size * 2) / 2 for ln in cands if ln.size >= body * 1.15}, reverse=True)
    for ln in cands:
        s = round(ln.size * 2) / 2
        ln.heading = min(6, sizes.index(s) + 1) if s in sizes else min(6, len(sizes) + 1)
    _join_wrapped_headings(lines)


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
    returns the entries no line of their page matched (a heading is then put at their page)."""
    by_page: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        by_page.setdefault(ln.page, []).append(i)
    missing = []
    for title, level, page in entries:
        want = _key(title)
        found = False
        for i in by_page.get(page, []):
            ln = lines[i]
            if ln.drop or ln.heading:
                continue
            got = _key(ln.text)
            if got == want or (len(want) > 3 and got.startswith(want)):
                ln.heading, found = min(6, level), True
                break
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if nxt is not None and len(got) > 3 and want.startswith(got) and _key(ln.text + nxt.text) == want:
                ln.heading, found = min(6, level), True
                ln.text = ln.text + ("" if _joins_without_space(ln.text, nxt.text) else " ") + nxt.text
                nxt.drop = True
                break
        if not found:
            missing.append((title, level, page))
    return missing


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _cells(ln: Line) -> list[list[Word]]:
    """A line's words in cells: a gap of a character's width or more between two words parts them."""
    out: list[list[Word]] = []
    for w in ln.words:
        if out and w.x0 - out[-1][-1].x1 < 1.0 * max(1.0, ln.size):
            out[-1].append(w)
        else:
            out.append([w])
    return out


def mark_text_tables(lines: list[Line]) -> None:
    """Tables set without rules (their columns aligned by space alone): three lines or more in a
    row, on one page and column, each of two cells or more whose left edges line up with the
    first line's; header lines just above them (two cells or more, within the table's width) go
    with them. Where the lines are spaced two ways, the closer ones are a cell's text wrapped
    onto a second line and join the row above. The first line carries the table's rows; the
    others are dropped."""
    i = 0
    while i < len(lines):
        head = lines[i]
        cells = _cells(head) if not (head.drop or head.heading) else []
        if len(cells) < 2:
            i += 1
            continue
        starts = [c[0].x0 for c in cells]
        run = [head]
        j = i + 1
        while j < len(lines):
            ln, prev = lines[j], run[-1]
            if ln.drop or ln.heading or ln.page != head.page or ln.column != head.column:
                break
            if ln.top - prev.bottom > 1.5 * prev.height:
                break
            mine = [c[0].x0 for c in _cells(ln)]
            if sum(1 for x in mine if any(abs(x - s) <= 4 for s in starts)) < min(2, len(mine)) or len(mine) < 2:
                break
            run.append(ln)
            j += 1
        if len(run) < 3:
            i += 1
            continue
        header = _table_header(lines, i, starts)
        for ln in header:
            for c in _cells(ln):  # a header's columns may be empty in every row below
                if not any(abs(c[0].x0 - x) <= 4 for x in starts):
                    starts = sorted(starts + [c[0].x0])
        run = header + run
        wrapped = set(_wrapped(run))
        rows: list[list[str]] = []
        for n, ln in enumerate(run):
            row = _table_row(ln, starts)
            if n in wrapped and rows:
                rows[-1] = [join_lines([a, b]) if a and b else a or b for a, b in zip(rows[-1], row)]
            else:
                rows.append(row)
        run[0].table = rows
        for ln in run[1:]:
            ln.drop = True
        i = j
    return None


def _table_row(ln: Line, starts: list[float]) -> list[str]:
    row = [""] * len(starts)
    for c in _cells(ln):
        k = min(range(len(starts)), key=lambda n: abs(starts[n] - c[0].x0))
        row[k] = (row[k] + " " + join_words(c)).strip()
    return row


def _table_header(lines: Sequence[Line], first: int, starts: list[float]) -> list[Line]:
    """The header lines of the table whose first row is ``lines[first]`` (columns at ``starts``):
    up to six short-celled lines just above it (not list items), one at least of two cells or more
    sharing a column with the table; a line of one cell (a header cell's text wrapped) only on a
    column's start or under a header cell's."""
    block: list[Line] = []
    m = first
    while m > 0 and len(block) < 6:
        ln, below = lines[m - 1], lines[m]
        if (ln.drop or ln.heading or ln.table is not None or ln.page != below.page or ln.column != below.column
                or below.top - ln.bottom > 1.5 * ln.height):
            break
        cells = _cells(ln)
        if BULLET.match(ln.text) or any(len(join_words(c)) > 40 for c in cells):
            break  # a list item or a sentence, not a header
        if len(cells) >= 2 and not any(abs(c[0].x0 - x) <= 4 for c in cells for x in starts):
            break  # cells that share no column with the table
        block.insert(0, ln)
        m -= 1
    xs = starts + [c[0].x0 for ln in block if len(_cells(ln)) >= 2 for c in _cells(ln)]

    def fits(ln: Line) -> bool:
        cells = _cells(ln)
        return len(cells) >= 2 or any(abs(cells[0][0].x0 - x) <= 4 for x in xs)

    while block and not fits(block[0]):
        block.pop(0)
    if not all(fits(ln) for ln in block) or not any(len(_cells(ln)) >= 2 for ln in block):
        return []
    return block


def _wrapped(run: Sequence[Line]) -> list[int]:
    """The lines of a table that carry on the row above (a cell's text wrapped): closer to it than
    rows are to each other, where the gaps come in two sizes."""
    gaps = [b.top - a.top for a, b in zip(run, run[1:])]
    if len(gaps) < 2 or max(gaps) < 1.25 * min(gaps):
        return []
    cut = (max(gaps) + min(gaps)) / 2
    return [n + 1 for n, g in enumerate(gaps) if g < cut]


def paragraphs(lines: Sequence[Line]) -> list[tuple[str, Line]]:
    """Paragraphs in reading order, each with its first line ("heading", "item" or "para" is
    told by the line: ``heading`` set, or a bullet or number first)."""
    out: list[tuple[str, Line]] = []
    cur: list[Line] = []

    def flush() -> None:
        if cur:
            out.append((join_lines([ln.text for ln in cur]), cur[0]))
            cur.clear()

    for ln in lines:
        if ln.drop or not ln.text.strip():
            continue
        if ln.heading or ln.table is not None:
            flush()
            out.append((ln.text.strip(), ln))
            continue
        if cur and (BULLET.match(ln.text) or not _same_paragraph(cur[-1], ln)):
            flush()
        cur.append(ln)
    flush()
    return out


def _same_paragraph(a: Line, b: Line) -> bool:
    if a.heading:
        return False
    if a.page != b.page or a.column != b.column:  # runs on into the next column or page
        ended = a.text.rstrip().endswith(SENTENCE_END + (":", "："))
        return (not ended and abs(a.size - b.size) <= 0.05 * max(a.size, 1.0)
                and (b.page != a.page or b.column == a.column + 1) and b.text[:1].strip() != "")
    gap = b.top - a.bottom
    return -0.3 * a.height <= gap <= 0.8 * a.height and abs(a.size - b.size) <= 0.15 * max(a.size, 1.0)


def join_lines(texts: Sequence[str]) -> str:
    """Wrapped lines as one text: hyphenation undone, CJK lines joined without a space."""
    out = ""
    for t in texts:
        t = t.strip()
        if not out:
            out = t
        elif out.endswith(HYPHENS) and len(out) > 1 and out[-2].isalpha() and t[:1].islower():
            out = out[:-1] + t  # a word hyphenated at the line's end
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha():
            out += t  # a compound's own hyphen ("North-East")
        elif _joins_without_space(out, t):
            out += t
        else:
            out += " " + t
    return out


def bullet_text(text: str) -> str:
    return BULLET.sub("", text, count=1).strip()


