"""PDF, read for structure: pdfplumber (on pdfminer.six, MIT) gives every word with its font,
size and box, and the tables ruled on a page; pypdf gives the outline (bookmarks).

- Headings from the outline where the file has one, else from font size and weight
  (``layout.mark_headings_by_font``); two-column pages read column by column; running heads,
  feet and page numbers dropped; hyphenation and Chinese line breaks joined (``layout``).
- Tables ruled with lines become Markdown tables, in their place; their words are not read
  twice.
- Every page starts with a page mark: each parent keeps its page range.
- A page without a text layer (a scan) is read by OCR when ``ragsift[ocr]`` is installed, turned
  upright first (``ocr``); the document's metadata lists the pages read (``ocr_pages``), those
  found turned and by how much (``ocr_rotated``: degrees counterclockwise by page) and those
  that gave no text (``ocr_empty``). Without OCR, the page is left out and named in
  ``ocr_missing``.
- The title: the document's own (its metadata) when it is a real one, else its largest line on
  the first page, else its first heading, else the file name.
- Limits: the content streams are measured before any is interpreted (a small file whose pages
  all draw one huge stream is skipped in seconds), then pages, characters and time as read.
- An encrypted PDF that needs a password is skipped, saying so.
"""
from __future__ import annotations

import io
import logging
import re
from typing import Any

import ragsift.ingest.loaders.layout as layout
import ragsift.ingest.loaders.ocr as ocr
from ragsift.ingest.loaders.base import (
    OCR_PAGE,
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    OverLimit,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.layout import Line, Word
from ragsift.ingest.loaders.sniff import Magic
from ragsift.text.lang import is_cjk_char

log = logging.getLogger(__name__)
OCR_DPI = 150
UNMAPPED_SHARE = 0.3  # a page whose glyphs map to no character this often is read by OCR
STREAM_FACTOR = 4  # content streams may hold this many bytes per character the file may make
JUNK_TITLES = re.compile(r"^(untitled|microsoft word|document\d*|slide \d+|\s*)$|\.(docx?|pdf|odt|pptx?|tex)$",
                         re.IGNORECASE)


@register(".pdf", signature=Magic("PDF", "a PDF"))
def load_pdf(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    outline, meta_title, why = _outline(data, budget)
    if why:
        return skipped(source, why)
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    try:
        pdf = pdfplumber.open(io.BytesIO(data))
    except (PDFPasswordIncorrect, PDFEncryptionError) as e:
        return skipped(source, f"encrypted PDF (it needs a password): {type(e).__name__}")
    with pdf:
        pages, scans = _read_pages(pdf, limits, budget)
    every, missing = _find_structure(pages, outline)
    title = _title(meta_title, pages, every)
    md = Markdown()
    _write_pages(md, pages, missing)
    metadata: dict[str, Any] = {"page_count": len(pages), **{k: v for k, v in scans.items() if v}}
    if not md.has_text():
        if scans["ocr_missing"]:
            return skipped(source, f"scanned PDF ({len(scans['ocr_missing'])} page(s) without a text layer): "
                                   "reading them needs OCR: pip install 'ragsift[ocr]'")
        if scans["ocr_empty"]:
            return skipped(source, f"scanned PDF: OCR found no text on its {len(scans['ocr_empty'])} scanned page(s)")
        return skipped(source, "PDF has no text")
    return structured(source, title, md, data, "pdf", metadata)


Page = tuple[float, list[Line], list[tuple[float, list[list[str]]]]]  # height, lines, tables (top, rows)


def _read_pages(pdf: Any, limits: LoadLimits, budget: Budget) -> tuple[list[Page], dict[str, Any]]:
    """Every page's lines and tables, a scanned one (or one whose font maps no characters) read by
    OCR when it is installed; and the pages OCR read (``ocr_pages``), could not read for want of
    it (``ocr_missing``), found turned (``ocr_rotated``: degrees counterclockwise) or found empty
    (``ocr_empty``)."""
    n = len(pdf.pages)
    if n > limits.max_pages:
        raise OverLimit(f"has {n} pages; the limit is {limits.max_pages} (setting max_file_pages)")
    pages: list[Page] = []
    scans: dict[str, Any] = {"ocr_pages": [], "ocr_missing": [], "ocr_rotated": {}, "ocr_empty": []}
    for i, page in enumerate(pdf.pages, 1):
        budget.page()
        height = float(page.height)
        lines, tables, unmapped = _read_page(page, i, budget)
        if (not lines and not tables and page.images) or unmapped:  # a scan, or a font without a map
            if limits.ocr and ocr.available():
                (lines, height, turned), tables = _ocr_page(page, i, budget), []
                scans["ocr_pages"].append(i)
                if turned:
                    scans["ocr_rotated"][str(i)] = turned
                if not lines:
                    scans["ocr_empty"].append(i)
            else:
                scans["ocr_missing"].append(i)
        pages.append((height, lines, tables))
        page.close()  # its characters and layout objects: kept, a 1,000-page book needed 2 GB
    return pages, scans


def _find_structure(pages: list[Page], outline: list[tuple[str, int, int]]
                    ) -> tuple[list[Line], list[tuple[str, int, int]]]:
    """Running heads and feet, headings (the outline's, else by font) and tables set as text marked
    on the pages' lines; every line, and the outline's entries no line matched."""
    layout.mark_margins([(h, lines) for h, lines, _ in pages])
    every = [ln for _, lines, _ in pages for ln in lines]
    missing = layout.match_outline(every, outline) if outline else []
    if not outline:
        layout.mark_headings_by_font(every)
    layout.mark_text_tables(every)
    if outline:  # after the tables: a table's bold header row is no heading
        layout.mark_headings_below_outline(every)
    return every, missing


def _outline(data: bytes, budget: Budget) -> tuple[list[tuple[str, int, int]], str, str | None]:
    """The outline as (title, level, page), the document's own title, and why the file cannot be
    read (encrypted, or content streams that would unpack past the limits), or None."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return [], "", "encrypted PDF (it needs a password)"
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as e:
        return [], "", f"unreadable PDF: {e}"
    if len(reader.pages) > budget.limits.max_pages:
        raise OverLimit(f"has {len(reader.pages)} pages; the limit is {budget.limits.max_pages} "
                        "(setting max_file_pages)")
    _measure_streams(reader, budget)
    entries: list[tuple[str, int, int]] = []

    def walk(items: Any, level: int) -> None:
        for it in items:
            if isinstance(it, list):
                walk(it, level + 1)
                continue
            try:
                number = reader.get_destination_page_number(it)
                title = str(it.title or "").strip()
                if number is None:
                    continue
                page = number + 1
            except Exception:  # a broken destination: that entry is left out
                continue
            if title:
                entries.append((" ".join(title.split()), level, page))
    try:
        walk(reader.outline, 1)
    except Exception as e:  # a broken outline: read as one without
        log.info("PDF outline not read: %s", e)
        entries = []
    try:
        meta = reader.metadata
        meta_title = str(meta.get("/Title") or "").strip() if meta is not None else ""
    except Exception:
        meta_title = ""
    return entries, meta_title, None


def _measure_streams(reader: Any, budget: Budget) -> None:
    """The content streams every page draws, unpacked once each and counted per page, against
    what the file may make: a bomb is stopped before a single page is interpreted."""
    from pypdf.generic import ArrayObject, IndirectObject

    allowed = STREAM_FACTOR * budget.max_chars
    sizes: dict[int, int] = {}
    total = 0
    for page in reader.pages:
        contents = page.get("/Contents")
        refs = contents if isinstance(contents, ArrayObject) else [contents] if contents is not None else []
        for ref in refs:
            key = ref.idnum if isinstance(ref, IndirectObject) else id(ref)
            if key not in sizes:
                try:
                    sizes[key] = len(ref.get_object().get_data())
                except Exception:  # unreadable stream: pdfminer will say more
                    sizes[key] = 0
            total += sizes[key]
            if total > allowed:
                raise OverLimit(f"its pages draw {total} bytes of content streams (unpacked from {budget.packed_bytes} "
                                "bytes), more than the text it may make allows (a decompression bomb?)")
        budget.tick()


def _read_page(page: Any, number: int, budget: Budget) -> tuple[list[Line], list[tuple[float, list[list[str]]]], bool]:
    """The page's lines in reading order, its ruled tables (top, rows), and whether most of its
    glyphs map to no character (a font without a Unicode map: the text layer is unusable)."""
    tables: list[tuple[float, list[list[str]]]] = []
    boxes = []
    try:
        for t in page.find_tables():
            cells = [[layout.cjk_unified(layout.CID.sub("", c or "")).split("\n") for c in row]
                     for row in t.extract(x_tolerance_ratio=layout.WORD_GAP)]
            rows = [[layout.join_lines(c) for c in row] for row in layout.unstacked_rows(cells)]
            if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
                tables.append((float(t.bbox[1]), rows))
                boxes.append(t.bbox)
    except Exception as e:  # table finding is best effort
        log.info("page %d: tables not read (%s)", number, e)
    words = []
    # a gap of layout.WORD_GAP of the font's size parts two words ("Recentadvancesin..." before)
    gaps = layout.rtl_word_gaps(page.chars)
    raw = page.extract_words(extra_attrs=["size", "fontname", "upright"], keep_blank_chars=False,
                             use_text_flow=False, x_tolerance_ratio=layout.WORD_GAP, return_chars=True)
    raw = [part for w in raw for part in layout.split_joined_script(w, gaps)]
    glyphs = unmapped = 0
    for w in layout.without_furniture(raw, float(page.width)):
        chars = [c["text"] for c in w.pop("chars", ())]
        glyphs += len(chars)
        unmapped += sum(1 for c in chars if layout.CID.fullmatch(c))
        w["text"] = layout.logical_word(chars) if chars else w["text"]
        if not w["text"]:
            continue
        cx, cy = (w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2
        if any(b[0] <= cx <= b[2] and b[1] <= cy <= b[3] for b in boxes):
            continue
        budget.text(len(w["text"]) + 1)
        words.append(Word(layout.cjk_unified(w["text"]), w["x0"], w["top"], w["x1"], w["bottom"],
                          float(w.get("size") or 0), layout.is_bold(str(w.get("fontname") or ""))))
    budget.tick()
    lines = layout.lines_of(words, float(page.width), number, float(page.height))
    return lines, tables, glyphs > 20 and unmapped >= UNMAPPED_SHARE * glyphs


def _ocr_page(page: Any, number: int, budget: Budget) -> tuple[list[Line], float, int]:
    """A scanned page's lines by OCR (rendered at ``OCR_DPI``, turned upright; positions in PDF
    points of the upright page), the upright page's height and how far it stood turned
    (degrees counterclockwise). A line can be larger than the body text (a title, a heading)
    only when it reads surely as words (``OCR_TITLE_SCORE``, three letters or two Chinese
    characters): a smudge or a stamp read as "ee" is not a title."""
    budget.earn(OCR_PAGE - 1)  # a page read by OCR is work of OCR_PAGE pages (its page() counted one)
    image = page.to_image(resolution=OCR_DPI).original
    scale = 72.0 / OCR_DPI
    read = ocr.read_image(image, budget.earn)
    found = read.lines
    # a line's box is as tall as its letters reach (and padded), so body lines' boxes differ by a
    # fifth or so: those near the page's typical height take it, and only clearly larger lines
    # can be headings by size
    heights = sorted(ln.bottom - ln.top for ln in found)
    typical = heights[len(heights) // 2] if heights else 0.0
    words = []
    for ln in found:
        budget.text(len(ln.text) + 1)
        h = ln.bottom - ln.top
        h = typical if abs(h - typical) <= 0.25 * typical or not _reads_as_words(ln) else h
        words.append(Word(ln.text, ln.x0 * scale, ln.top * scale, ln.x1 * scale, ln.bottom * scale, h * scale * 0.8))
    budget.tick()
    width, height = read.width * scale, read.height * scale
    return layout.lines_of(words, width, number, height), height, read.rotation


OCR_TITLE_SCORE = 0.9


def _reads_as_words(ln: ocr.OcrLine) -> bool:
    letters = sum(1 for c in ln.text if c.isalpha())
    han = sum(1 for c in ln.text if is_cjk_char(c))
    return ln.score >= OCR_TITLE_SCORE and (han >= 2 or letters - han >= 3)


def _title(meta_title: str, pages: list[Any], lines: list[Line]) -> str:
    if meta_title and not JUNK_TITLES.search(meta_title):
        return meta_title
    first = [ln for ln in lines if ln.page == 1 and not ln.drop and _could_be_title(ln, pages[0][0] if pages else 0)]
    body = layout.body_size(lines)
    if first and body:
        big = max(first, key=lambda ln: (ln.size, -ln.top))
        if big.size >= body * 1.3 and len(big.text) <= 200:
            return big.text.strip()
    heading = next((ln for ln in lines if ln.heading), None)
    return heading.text.strip() if heading else ""


TITLE_NOT = re.compile(r"^\s*[☐☑☒□■▢✓✔✗✘]|\s\d{1,4}\s*$")  # a check box's line, a running head's page number


def _could_be_title(ln: Line, height: float) -> bool:
    """A first-page line a title may be: words (mostly letters), not a check box's line, not a line
    ending in a page number, not in the page's head or foot band."""
    text = ln.text.strip()
    letters = sum(ch.isalpha() for ch in text)
    in_margin = height > 0 and (ln.bottom <= height * layout.MARGIN or ln.top >= height * (1 - layout.MARGIN))
    return bool(text) and letters >= 0.5 * len(text.replace(" ", "")) and not TITLE_NOT.search(text) and not in_margin


def _write_pages(md: Markdown, pages: list[tuple[float, list[Line], list[tuple[float, list[list[str]]]]]],
                 missing: list[tuple[str, int, int]]) -> None:
    """The pages' paragraphs, headings, list items and tables, each page after its mark, tables
    placed by their top, headings of the outline that match no line at the top of their page. A
    paragraph that runs on into the next column or page is one paragraph (it stays with the page
    it starts on)."""
    pending: list[tuple[int, float, list[list[str]]]] = []
    done = 0

    def start(page: int) -> None:
        nonlocal done
        while done < page:
            for _, _, rows in pending:
                md.table(rows)
            pending.clear()
            done += 1
            md.mark("page", done)
            for t, level, _ in (m for m in missing if m[2] == done):
                md.heading(level, t)
            pending.extend(sorted(((done, top, rows) for top, rows in pages[done - 1][2]), key=lambda t: t[1]))

    every = [ln for _, lines, _ in pages for ln in lines]
    for text, first in layout.paragraphs(every):
        start(first.page)
        while pending and pending[0][1] < first.top and first.column != 2:
            md.table(pending.pop(0)[2])
        if first.table is not None:
            md.table(first.table)
        elif first.heading:
            md.heading(first.heading, text)
        elif layout.BULLET.match(text):
            md.item(layout.bullet_text(text))
        else:
            md.para(text)
    start(len(pages))
    for _, _, rows in pending:
        md.table(rows)
