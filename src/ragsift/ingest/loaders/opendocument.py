"""OpenDocument presentations (ODP) and spreadsheets (ODS), read natively like ODT (``odt``:
zipfile and defusedxml, no entity expansion; LibreOffice is not needed).

- ODP: each slide (``draw:page``) a section headed by its title frame (else "Slide N"), with a
  slide mark; its frames and shapes in reading order (top to bottom, left to right; groups opened):
  paragraphs, list items, tables; page numbers, dates, headers and footers left out; speaker notes
  after them. Metadata ``slide_count``.
- ODS: each sheet (``table:table``) a section headed by its name, its rows a Markdown table whose
  first row with text is the header (as XLSX: ``sheets``). A cell reads as the user sees it (the
  text the writer stored for it: formatted numbers and dates, formulas' results). Repeated rows and
  cells (``number-rows-repeated``: a sheet's trailing million empty rows) are counted, never made
  one by one; a row with values is repeated at most ``MAX_REPEAT`` times, a sheet at most
  ``MAX_COLUMNS`` wide, a file at most ``sheets.MAX_CELLS`` cells with values. Metadata ``sheets``.

The title: the document's own (``meta.xml``), else the first slide's title (ODP) or the file name."""
from __future__ import annotations

import re
import zipfile
from typing import Any

from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, OverLimit, register, structured
from ragsift.ingest.loaders.epub import xml
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.odt import OFFICE, TB, T, _block, _text, office_body
from ragsift.ingest.loaders.sheets import MAX_CELLS
from ragsift.ingest.loaders.sniff import Zip

DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
PRES = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"
OF = f"{{{OFFICE}}}"
FURNITURE = {"page-number", "footer", "header", "date-time", "page"}  # frames that are not the slide's text
MAX_REPEAT = 1000  # copies of one repeated row (or cell) with values made at most
MAX_COLUMNS = 16_384  # as Excel


def _title(z: zipfile.ZipFile) -> str:
    if "meta.xml" not in z.namelist():
        return ""
    try:
        return (xml(z.read("meta.xml")).findtext(".//{http://purl.org/dc/elements/1.1/}title") or "").strip()
    except Exception:  # a damaged meta.xml: the title comes from the content
        return ""


# ------------------------------------------------------------------ presentations
@register(".odp", signature=Zip("OpenDocument presentation", "content.xml", holds="an OpenDocument file"))
def load_odp(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    z, body = office_body(data, budget, "presentation")
    md = Markdown()
    first = ""
    slides = 0
    for n, page in enumerate(body.iter(DRAW + "page"), 1):
        budget.page()
        slides = n
        md.mark("slide", n)
        shapes = _shapes(page)
        title_el = next((s for s in shapes if s.get(PRES + "class") == "title"), None)
        title = " ".join(_text_of(title_el).split()) if title_el is not None else ""
        first = first or title
        md.heading(1, title or f"Slide {n}")
        notes: list[str] = []
        for shape in shapes:
            if shape is title_el or shape.get(PRES + "class") in FURNITURE:
                continue
            _shape(shape, md, notes, budget)
        for frame in page.iterfind(f"{PRES}notes/{DRAW}frame"):
            if frame.get(PRES + "class") == "notes":
                text = " ".join(_text_of(frame).split())
                if text:
                    budget.text(len(text))
                    md.para(f"Speaker notes: {text}")
        for note in notes:
            md.para(note)
    return structured(source, _title(z) or first, md, data, "odp", {"slide_count": slides})


def _shapes(page: Any) -> list[Any]:
    """A slide's frames and shapes in reading order (top, then left), groups opened."""
    flat, stack = [], list(reversed(list(page)))
    while stack:
        el = stack.pop()
        if el.tag == DRAW + "g":
            stack.extend(reversed(list(el)))
        elif el.tag.startswith(DRAW) and el.tag != DRAW + "page-thumbnail":
            flat.append(el)
    return sorted(flat, key=lambda el: (_length(el.get(SVG + "y")), _length(el.get(SVG + "x"))))


_LENGTH = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*(cm|mm|in|pt|pc|px)?")
_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96, None: 1.0}


def _length(v: str | None) -> float:
    m = _LENGTH.match(v or "")
    return float(m.group(1)) * _CM[m.group(2)] if m else 0.0


def _text_of(el: Any) -> str:
    """A frame's text, its paragraphs on lines of their own."""
    lines = []
    for p in el.iter():
        if p.tag in (T + "p", T + "h"):
            lines.append(_text(p, []))
    return "\n".join(lines)


def _shape(shape: Any, md: Markdown, notes: list[str], budget: Budget) -> None:
    """One frame or shape: its text box's paragraphs, lists and tables, or its own paragraphs."""
    for child in shape:
        if child.tag == DRAW + "text-box":
            for el in child:
                _block(el, md, notes, budget, 0)
        elif child.tag in (T + "p", T + "h", T + "list", TB + "table"):
            _block(child, md, notes, budget, 0)


# ------------------------------------------------------------------ spreadsheets
@register(".ods", signature=Zip("OpenDocument spreadsheet", "content.xml", holds="an OpenDocument file"))
def load_ods(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    z, body = office_body(data, budget, "spreadsheet")
    md = Markdown()
    names: list[str] = []
    cells = 0
    for sheet in body.iterfind(TB + "table"):
        budget.page()
        name = sheet.get(TB + "name") or f"Sheet {len(names) + 1}"
        names.append(name)
        rows: list[list[str]] = []
        for row in _rows(sheet):
            budget.tick()
            values = _row_values(row)
            if not values:
                continue
            repeat = min(MAX_REPEAT, _int(row.get(TB + "number-rows-repeated")))
            cells += len(values) * repeat
            if cells > MAX_CELLS:
                raise OverLimit(f"more than {MAX_CELLS} cells with values")
            budget.text(sum(len(v) for v in values) * repeat)
            budget.rows(repeat)
            rows.extend([values] * repeat)
        if rows:
            md.heading(1, name)
            md.table(rows)
    return structured(source, _title(z) or source_title(source), md, data, "ods", {"sheets": names})


def _rows(sheet: Any) -> Any:
    """A sheet's rows in order, inside header-row, row and row-group elements at any depth."""
    stack = list(reversed(list(sheet)))
    while stack:
        el = stack.pop()
        if el.tag == TB + "table-row":
            yield el
        elif el.tag in (TB + "table-header-rows", TB + "table-rows", TB + "table-row-group"):
            stack.extend(reversed(list(el)))


def _row_values(row: Any) -> list[str]:
    """A row's cells as shown, repeated cells counted (trailing empty ones dropped); at most
    ``MAX_COLUMNS`` wide."""
    values: list[str] = []
    empty = 0  # empty cells not yet written (written only when a value follows them)
    for cell in row:
        if cell.tag not in (TB + "table-cell", TB + "covered-table-cell"):
            continue
        repeat = _int(cell.get(TB + "number-columns-repeated"))
        shown = _shown(cell)
        if not shown:
            empty += repeat
            continue
        width = len(values) + empty
        if width >= MAX_COLUMNS:
            break
        values.extend([""] * empty)
        empty = 0
        values.extend([shown] * min(repeat, MAX_REPEAT, MAX_COLUMNS - width))
    return values


def _shown(cell: Any) -> str:
    """A cell's text as the writer showed it (its paragraphs), else its stored value."""
    paras = [" ".join(_text(p, []).split()) for p in cell.iterfind(T + "p")]
    text = " ".join(p for p in paras if p)
    if text:
        return text
    for attr in ("value", "date-value", "time-value", "boolean-value", "string-value"):
        v = cell.get(OF + attr)
        if v:
            return v
    return ""


def _int(v: str | None) -> int:
    try:
        return max(1, int(v or 1))
    except ValueError:
        return 1
