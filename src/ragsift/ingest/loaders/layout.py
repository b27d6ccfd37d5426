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
from bisect import bisect_right
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


#: TeX's bold fonts by their short names (Computer Modern's CMBX12, the EC fonts' SFBX1200, Latin
#: Modern's LMBX10, CMSSBX10), after a subset's "ABCDEF+" prefix
TEX_BOLD = re.compile(r"^(?:[a-z]{6}\+)?(?:cm|sf|ec|lm)(?:ss|tt)?(?:bx|b\d)")


def is_bold(fontname: str) -> bool:
    name = fontname.lower()
    # URW's Type 1 fonts that pdfTeX embeds for Times and Helvetica name their bold "Medi"
    # (NimbusRomNo9L-Medi); other families call a medium weight bold too rarely to matter
    return any(w in name for w in ("bold", "black", "heavy", "semibold", "demi", "-medi")) or bool(TEX_BOLD.match(name))


CJK_PUNCT_AFTER = set("。，、；：！？）」』】》〉”’%")
CJK_PUNCT_BEFORE = set("（「『【《〈“‘")


def _joins_without_space(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (is_cjk_char(a[-1]) or is_cjk_char(b[0]) or b[0] in CJK_PUNCT_AFTER
                                     or a[-1] in CJK_PUNCT_BEFORE)


def _is_rtl(ch: str) -> bool:
    return unicodedata.bidirectional(ch) in ("R", "AL")


def is_rtl_line(words: Sequence[Word]) -> bool:
    """Whether a line is written right to left: more of its letters are Hebrew or Arabic (and the
    like) than of a left-to-right script."""
    rtl = ltr = 0
    for w in words:
        for ch in w.text:
            if _is_rtl(ch):
                rtl += 1
            elif ch.isalpha():
                ltr += 1
    return rtl > ltr


CID = re.compile(r"\(cid:\d+\)")  # pdfminer's text for a glyph its font maps to no character
LEADERS = re.compile(r"(?:\s?[.·…⋯]){4,}")  # a table of contents' dot leaders (words are one space apart)


def logical_word(glyphs: Sequence[str]) -> str:
    """A word's text in reading order from its glyphs' texts as drawn, left to right: a word of a
    right-to-left script is read from its last glyph (a glyph's own text, such as the lam-alef
    ligature's two letters, stays in its order), its presentation forms made letters again."""
    glyphs = [g for g in glyphs if not CID.fullmatch(g)]  # an unmapped glyph is no text (the page may be OCR'd)
    text = "".join(glyphs)
    if not any(_is_rtl(ch) for ch in text):
        return text
    return unicodedata.normalize("NFKC", "".join(reversed(glyphs)))


#: the least gap between two glyphs of a right-to-left script that may part two words, as a share of
#: their size: Arabic letters join and Hebrew ones abut, so a word's own glyphs touch or overlap but
#: after a letter that joins nothing on its left (ا د ر ز و), where some fonts leave a gap
RTL_WORD_GAP = 0.1


def rtl_word_gaps(chars: list[dict]) -> dict[int, float]:
    """Per line of right-to-left glyphs (by its rounded top), the gap that parts two words: most of
    a justified line's gaps are its word spaces, all alike, squeezed well below ``WORD_GAP`` in
    places (0.13 of the size in a Persian book); a gap under 0.7 of the commonest one is inside a
    word (after a letter that joins nothing on its left, 0.08 of the size in another font).
    Blanks drawn over the letters are moved first (``place_blanks``)."""
    rows = place_blanks(chars)
    out = {}
    for key, row in rows.items():
        gaps = [round(c["x0"] - a["x1"], 1) for a, c in zip(row, row[1:])
                if c["x0"] - a["x1"] >= RTL_WORD_GAP * max(1.0, float(c.get("size") or 0))]
        if gaps:
            common = Counter(gaps).most_common(1)[0][0]
            size = max(1.0, statistics.median(float(c.get("size") or 0) for c in row))
            out[key] = max(RTL_WORD_GAP * size, 0.7 * common)
    return out


def split_joined_script(word: dict, gaps: dict[int, float]) -> list[dict]:
    """A word of pdfplumber's (with its ``chars``) split where its right-to-left glyphs stand apart
    by its line's word gap (``rtl_word_gaps``) or more; any other word as it is."""
    chars = word.get("chars") or []
    if len(chars) < 2 or not any(_is_rtl(c["text"][:1]) for c in chars if c["text"]):
        return [word]
    least = gaps.get(round(chars[0]["top"]))
    if least is None:
        return [word]
    parts: list[list[dict]] = [[chars[0]]]
    for prev, c in zip(chars, chars[1:]):
        if c["x0"] - prev["x1"] >= least:
            parts.append([c])
        else:
            parts[-1].append(c)
    if len(parts) == 1:
        return [word]
    return [{**word, "text": "".join(c["text"] for c in p), "x0": p[0]["x0"], "x1": max(c["x1"] for c in p),
             "top": min(c["top"] for c in p), "bottom": max(c["bottom"] for c in p), "chars": p} for p in parts]


def place_blanks(chars: list[dict]) -> dict[int, list[dict]]:
    """Blank glyphs drawn over the letters of a right-to-left line (XeTeX draws a Persian zero-width
    non-joiner as a space that starts where the break is and runs over the next letter) made
    zero-width blanks just left of the letter after that break: their left edge, a hair right of
    that letter's own, sorted them after it ("می‌کند" read "م یکند"). Other blanks
    (a left-to-right line's spaces, a blank over nothing) stay where they are. Returns the lines'
    right-to-left glyphs, by rounded top, left to right."""
    rows: dict[int, list[dict]] = {}
    for c in chars:
        if c.get("text") and not c["text"].isspace() and _is_rtl(c["text"][0]):
            rows.setdefault(round(c["top"]), []).append(c)
    starts: dict[int, list[float]] = {}
    for key, row in rows.items():
        row.sort(key=lambda c: c["x0"])
        starts[key] = [c["x0"] for c in row]
    for b in chars:
        key = round(b["top"])
        line = rows.get(key) if b.get("text", "x").isspace() else None
        if not line or len(line) < 2:
            continue
        i = bisect_right(starts[key], b["x0"])
        near = line[max(0, i - 3):i + 3]  # the letters about the blank (a bounded look: linear in the page)
        mid = (b["x0"] + b["x1"]) / 2
        if not any(c["x0"] < mid < c["x1"] for c in near):
            continue  # a blank between letters, over none: a space where it is
        # how far the blank's left edge is from the boundary of each two letters next to each
        # other (from the gap between them, where there is one), with the letter on the right
        edges = []
        for x, c in zip(near, near[1:]):
            lo, hi = (x["x1"], c["x0"]) if c["x0"] > x["x1"] else (c["x0"], c["x0"])
            edges.append((max(0.0, lo - b["x0"], b["x0"] - hi), c))
        far, right = min(edges, key=lambda e: e[0])
        if far < 2 * (b["x1"] - b["x0"]) + 1:
            b["x0"] = b["x1"] = right["x0"] - 0.01
    return rows


def join_words(words: Sequence[Word]) -> str:
    """A line's words left to right: a space where the gap between two is a space's width (or
    where neither side is Chinese or Japanese); none inside a run of CJK characters. A line of a
    right-to-left script is read from the right (``logical``)."""
    if is_rtl_line(words):  # its words (in reading order each: logical_word) read from the right
        return " ".join(w.text for w in sorted(words, key=lambda w: -w.x1))
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


_NUMBER = re.compile(r"\d{1,4}")
RULER = 5  # numbers in a margin that make a ruler of line numbers
RULER_GAP = 4.0  # points between the text and a ruler's numbers, at least


def without_furniture(words: list[dict], width: float) -> list[dict]:
    """A page's words (pdfplumber's) without what sits beside the text: text set sideways in a
    margin (an arXiv stamp, a vertical running title) and columns of line numbers (a review copy's
    rulers, a legal document's numbered lines) outside the band the text fills."""
    body = [w for w in words if w.get("upright", True) and not _NUMBER.fullmatch(w["text"])]
    if len(body) < 20:
        return [w for w in words if w.get("upright", True) or _sideways_inside(w, width)]
    xs0 = sorted(w["x0"] for w in body)
    xs1 = sorted(w["x1"] for w in body)
    left, right = xs0[len(xs0) // 50], xs1[len(xs1) - 1 - len(xs1) // 50]  # the band, 2% of words aside
    # a ruler: at least RULER numbers on one side, each set apart from the text by a margin (a table of
    # contents' page numbers follow their leaders closely, and stay)
    outside_left = [w for w in words if _NUMBER.fullmatch(w["text"]) and w["x1"] < left - RULER_GAP]
    outside_right = [w for w in words if _NUMBER.fullmatch(w["text"]) and w["x0"] > right + RULER_GAP]
    ruler = {id(w) for side in (outside_left, outside_right) if len(side) >= RULER for w in side}
    return [w for w in words if id(w) not in ruler and (w.get("upright", True) or _sideways_inside(w, width))]


def _sideways_inside(w: dict, width: float) -> bool:
    """Sideways text well inside the page (a rotated table's header), not in a margin."""
    return 0.12 * width < (w["x0"] + w["x1"]) / 2 < 0.88 * width


def gutter(words: Sequence[Word], width: float, height: float = 0.0) -> float | None:
    """The x of the empty band between two columns, or None for one column (``gutter_band``)."""
    band = gutter_band(words, width, height)
    return None if band is None else band[0]


def gutter_band(words: Sequence[Word], width: float, height: float = 0.0) -> tuple[float, float] | None:
    """The x of the empty band between two columns and its width, or None for one column. With the page's
    ``height``, running heads and feet (centred across the gutter) are left out. The band is
    looked for point by point in the middle two fifths of the page: a journal's gutter is a
    fortieth of the page wide (a coarser grid found none), and a few words may cross it (a
    title, a full-width line)."""
    if height > 0:
        words = [w for w in words if w.top > MARGIN * height and w.bottom < (1 - MARGIN) * height] or list(words)
    if len(words) < 20 or width <= 0:
        return None
    n = max(1, min(2000, int(width)))
    scale = n / width
    cover = [0] * (n + 1)
    for w in words:  # a difference array: each word adds one over its span
        a, b = min(n, max(0, int(w.x0 * scale))), min(n, max(0, int(w.x1 * scale) + 1))  # words off the page too
        if a < b:
            cover[a] += 1
            cover[b] -= 1
    for i in range(1, n + 1):
        cover[i] += cover[i - 1]
    allowed = max(1, int(len(words) * 0.01))
    lo, hi = int(n * 0.3), int(n * 0.7)
    sizes = sorted(w.bottom - w.top for w in words)
    least = max(2.0, 0.4 * sizes[len(sizes) // 2]) * scale  # narrower than this is a space, not a gutter
    best: tuple[float, int, int] | None = None
    i = lo
    while i < hi:
        if cover[i] > allowed:
            i += 1
            continue
        j = i
        while j < hi and cover[j] <= allowed:
            j += 1
        if j - i >= least and (best is None or (j - i, -abs((i + j) / 2 - n / 2)) > (best[0], -abs(best[1] - n / 2))):
            best = (j - i, (i + j) // 2, i)
        i = j
    if best is None:
        return None
    x = best[1] / scale
    left = sum(1 for w in words if w.x1 <= x)
    right = sum(1 for w in words if w.x0 >= x)
    if min(left, right) < 0.2 * len(words):
        return None
    return x, best[0] / scale


def lines_of(words: Sequence[Word], width: float, page: int, height: float = 0.0) -> list[Line]:
    """The page's words in lines, in reading order (columns one after the other). A row whose words
    run across the gutter without a gap as wide as it (a title, a full-width line) spans both."""
    found = gutter_band(words, width, height)
    lines: list[Line] = []
    if found is None:
        for row in _rows(words):
            lines.append(_line(row, 0, page))
        return sorted(lines, key=lambda ln: (ln.top, ln.x0))
    g, band_width = found
    for row in _rows(words):
        row.sort(key=lambda w: w.x0)
        left = [w for w in row if w.x1 <= g]
        right = [w for w in row if w.x0 >= g]
        across = len(left) + len(right) < len(row)
        if across or (left and right and right[0].x0 - left[-1].x1 < 0.6 * band_width):
            lines.append(_line(row, 0, page))
        else:
            lines += [_line(part, col, page) for col, part in ((1, left), (2, right)) if part]
    # bands between the lines that span both columns: left column, then right, in each
    cuts = sorted(ln.top for ln in lines if ln.column == 0)
    return sorted(lines, key=lambda ln: (bisect_right(cuts, ln.top), 0 if ln.column == 0 else ln.column, ln.top,
                                         ln.x0))


def _line(row: list[Word], column: int, page: int) -> Line:
    row = sorted(row, key=lambda w: w.x0)
    sizes = [w.size for w in row if w.size]
    text = join_words(row)
    if "..." in text or ". ." in text or "…" in text or "·" in text:
        text = LEADERS.sub(" ", text).strip() or text
    return Line(text, min(w.x0 for w in row), min(w.top for w in row), max(w.x1 for w in row),
                max(w.bottom for w in row), statistics.median(sizes) if sizes else max(1.0, row[0].bottom - row[0].top),
                all(w.bold for w in row), column, page, words=row)


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


def unstacked_rows(rows: list[list[list[str]]]) -> list[list[list[str]]]:
    """A ruled table's rows (each cell its lines), a row whose every filled cell holds the same
    number of lines (two or more) made that many rows: a table ruled only at its top and bottom
    comes out as one row of stacked cells ("paper title / author names" beside "15pt / 12pt")."""
    out: list[list[list[str]]] = []
    for row in rows:
        filled = [c for c in row if any(x.strip() for x in c)]
        counts = {len([x for x in c if x.strip()]) for c in filled}
        if len(filled) >= 2 and len(counts) == 1 and (n := counts.pop()) >= 2:
            lines = [[x for x in c if x.strip()] for c in row]
            out += [[[c[i]] if c else [""] for c in lines] for i in range(n)]
        else:
            out.append(row)
    return out


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
        starts = _empty_first_columns(run, starts)
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


def _empty_first_columns(run: Sequence[Line], starts: list[float]) -> list[float]:
    """Columns the table's first line leaves empty (a header over a column of row names): a cell
    whose left edge no column has, shared by another line of the table or ending before the first
    column begins, starts a column of its own instead of joining the nearest one."""
    loose = [c for ln in run for c in _cells(ln) if not any(abs(c[0].x0 - s) <= 4 for s in starts)]
    for c in loose:
        x = c[0].x0
        if any(abs(x - s) <= 4 for s in starts):
            continue
        if sum(1 for d in loose if abs(d[0].x0 - x) <= 4) >= 2 or c[-1].x1 < min(starts):
            starts = sorted([*starts, x])
    return starts


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


