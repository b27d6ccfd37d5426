"""Words -> lines in reading order (columns by the gutter between them, furniture and rulers left
out) -> paragraphs: the words' and lines' types, and how their text is joined."""
from __future__ import annotations

import re
import statistics
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
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


#: a gap between two glyphs (or words) of this share of their size or more is a space: pdfplumber's
#: default of 3 points glued tightly set text together, and pdfTeX writes no space characters
WORD_GAP = 0.15
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
    if not rows:
        return rows  # no right-to-left letter on the page: nothing to move
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
            spaced = ((gap > WORD_GAP * size and w.text[0] not in CJK_PUNCT_AFTER)
                      or not _joins_without_space(out, w.text))
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

