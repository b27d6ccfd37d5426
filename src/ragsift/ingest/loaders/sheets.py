"""Spreadsheets: XLSX and XLSM with openpyxl (MIT; read only, macros never run) and CSV / TSV
with the standard library. A sheet (or the file) is a section headed by its name; its rows are a
Markdown table whose first row with text is the header, so the splitter keeps rows whole and
indexes every chunk of the table with its header. Every cell is written as the sheet shows it: a
formula by its cached value, a number or date in its number format (``numfmt.shown``: 2024-03-05,
5-Mar-24, 25.6%, $1,234.50), booleans as TRUE / FALSE; a cell merged with the ones below it
repeats its value in each row that has values of its own (the cells merged to its right are left
empty, as in Word tables). After a sheet's rows: its charts (kind, title, data, ``ooxml.chart``),
the text of its drawings' shapes, its comments (threaded and notes) with their cell and author; a
chart sheet is a section of its chart. Empty rows and columns are left out; at most ``MAX_CELLS``
cells with a value are read from one file. Each row with a value counts as work for the file's
CPU budget (``Budget.rows``); empty rows do not (a sheet of a million empty rows is stopped
early, a sheet of 100,000 real rows reads whole)."""
from __future__ import annotations

import bisect
import csv
import io
import re
import zipfile
import zlib
from collections import Counter
from typing import Any

import ragsift.ingest.loaders.ooxml as ooxml
from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, OverLimit, register, structured
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.numfmt import shown
from ragsift.ingest.loaders.sniff import Zip
from ragsift.ingest.loaders.text import text_of

MAX_CELLS = 5_000_000
MAX_AREA = 20_000_000  # rows x columns laid out as one table; a sparser sheet is written row by row
MAX_MERGES = 100_000  # merged ranges read from one sheet
MAX_COMMENTS = 100_000
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
TC = "{http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments}"
XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
MERGE = re.compile(rb"<(?:[A-Za-z_][\w.-]{0,30}:)?mergeCell\s[^>]{0,200}?"  # attributes bounded: linear
                   rb"ref=\"([A-Z]{1,3})(\d{1,7}):([A-Z]{1,3})(\d{1,7})\"")
CHUNK = 1 << 20


@register(".xlsx", ".xlsm", signature=Zip("Excel workbook", "xl/"))
def load_xlsx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    import openpyxl

    budget = Budget(limits, packed_bytes=len(data))
    pkg = ooxml.Package(data, budget, "XLSX")
    book = _Book(pkg)
    strict = pkg.transitional(book.part)  # Strict OOXML, which openpyxl reads as empty
    wb = openpyxl.load_workbook(io.BytesIO(strict or data), read_only=True, data_only=True)
    md = Markdown()
    cells = [0]
    names = []
    try:
        sheets = book.sheets or [(ws.title, getattr(ws, "_worksheet_path", ""), True) for ws in wb.worksheets]
        for name, part, is_worksheet in sheets:
            budget.page()
            names.append(name)
            rows: list[list[str]] = []
            if is_worksheet and name in wb.sheetnames:
                ws = wb[name]
                if hasattr(ws, "iter_rows"):
                    rows = _rows(ws, pkg, part, budget, cells)
            section = Markdown()
            if any(any(v for v in r) for r in rows):
                section.table(rows)
            book.drawings(part, section)
            book.comments(part, section)
            if section.parts:
                md.heading(1, name)
                md.parts += section.parts
        title = (wb.properties.title or "").strip() if wb.properties else ""
    finally:
        wb.close()
    return structured(source, title or pkg.title() or source_title(source), md, data, "xlsx", {"sheets": names})


def _rows(ws: Any, pkg: ooxml.Package, part: str, budget: Budget, cells: list[int]) -> list[list[str]]:
    """A worksheet's rows with values, each cell as shown, laid out by column (the columns with
    no value left out), merged cells repeated down."""
    sparse: list[tuple[int, list[tuple[int, str]]]] = []  # (row number, [(column, text)])
    used: set[int] = set()
    for row in ws.iter_rows():
        budget.tick()
        values = []
        number = 0
        for c in row:
            v = c.value
            if v is None:
                continue
            text = shown(v, getattr(c, "number_format", None))
            if text:
                values.append((c.column, text))
                number = c.row
        if not values:
            continue
        cells[0] += len(values)
        if cells[0] > MAX_CELLS:
            raise OverLimit(f"more than {MAX_CELLS} cells with values")
        budget.text(sum(len(t) for _, t in values))
        budget.rows(1)
        used.update(col for col, _ in values)
        sparse.append((number, values))
    if not sparse:
        return []
    _merge_down(sparse, _merges(pkg, part, budget), cells)
    used.update(col for _, vals in sparse for col, _ in vals)
    columns = {col: i for i, col in enumerate(sorted(used))}
    if len(sparse) * len(columns) > MAX_AREA:  # too sparse to lay out: each row's values in order
        return [[t for _, t in vals] for _, vals in sparse]
    out = []
    for _, vals in sparse:
        row = [""] * len(columns)
        for col, t in vals:
            row[columns[col]] = t
        out.append(row)
    return out


def _merges(pkg: ooxml.Package, part: str, budget: Budget) -> list[tuple[int, int, int, int]]:
    """A sheet's merged ranges that span rows (first row, column, last row), read from its part in
    chunks without parsing it again (``mergeCell`` elements come after the cells); at most
    ``MAX_MERGES``."""
    info = pkg.names.get(part)
    if info is None:
        return []
    out: list[tuple[int, int, int, int]] = []
    try:
        _scan_merges(pkg, info, budget, out)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error):  # a damaged part: its cells were read
        pass
    return out


def _scan_merges(pkg: ooxml.Package, info: Any, budget: Budget, out: list[tuple[int, int, int, int]]) -> None:
    tail = b""
    with pkg.zip.open(info) as f:
        while len(out) < MAX_MERGES:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            budget.unpacked(len(chunk))
            budget.tick()
            buf = tail + chunk
            end = 0
            for m in MERGE.finditer(buf):
                c1, r1, c2, r2 = _col(m.group(1)), int(m.group(2)), _col(m.group(3)), int(m.group(4))
                if r2 > r1 and len(out) < MAX_MERGES:
                    out.append((r1, c1, r2, c2))
                end = m.end()
            tail = buf[max(end, len(buf) - 300):]


def _col(letters: bytes) -> int:
    n = 0
    for b in letters:
        n = n * 26 + b - 64
    return n


def _merge_down(sparse: list[tuple[int, list[tuple[int, str]]]], merges: list[tuple[int, int, int, int]],
                cells: list[int]) -> None:
    """A merged range's value written into its first column in every later row of the range that
    has values of its own. Each range visits only the rows with values inside it, and every cell
    written counts against ``MAX_CELLS`` (ranges never overlap, so this is linear in the cells)."""
    numbers = [n for n, _ in sparse]
    at = {n: i for i, n in enumerate(numbers)}
    columns = [{c for c, _ in vals} for _, vals in sparse]
    touched: set[int] = set()
    for r1, c1, r2, _ in merges:
        first = at.get(r1)
        value = next((t for c, t in sparse[first][1] if c == c1), "") if first is not None else ""
        if not value:
            continue
        for i in range(bisect.bisect_right(numbers, r1), bisect.bisect_right(numbers, r2)):
            if c1 not in columns[i]:
                sparse[i][1].append((c1, value))
                columns[i].add(c1)
                touched.add(i)
                cells[0] += 1
                if cells[0] > MAX_CELLS:
                    raise OverLimit(f"more than {MAX_CELLS} cells with values")
    for i in touched:
        sparse[i][1].sort()


class _Book:
    """The workbook's parts beside its cells: its sheets in order, their drawings and comments."""

    def __init__(self, pkg: ooxml.Package) -> None:
        self.pkg = pkg
        self.part = pkg.main("xl/workbook.xml")
        root = pkg.optional(self.part)
        self.sheets: list[tuple[str, str, bool]] = []  # name, part, a worksheet (not a chart sheet)
        for sh in root.iter(S + "sheet") if root is not None else ():
            rel = pkg.rels(self.part).get(sh.get(ooxml.R + "id") or "")
            if rel is None or rel[2]:
                continue
            self.sheets.append((sh.get("name") or "", rel[1], rel[0] == "worksheet"))
        self._people: dict[str, str] | None = None

    def drawings(self, sheet: str, md: Markdown) -> None:
        """A sheet's charts (kind, title, data) and the text of its shapes, in the drawing's order."""
        for drawing in self.pkg.related(sheet, "drawing"):
            root = self.pkg.optional(drawing)
            for el in root.iter(ooxml.C + "chart", XDR + "sp") if root is not None else ():
                if el.tag == XDR + "sp":
                    for t in ooxml.drawing_text(el):
                        self.pkg.budget.text(len(t))
                        md.para(t)
                    continue
                target = self.pkg.target(drawing, el.get(ooxml.R + "id"))
                chart = self.pkg.optional(target) if target else None
                if chart is not None:
                    lines, rows = ooxml.chart(chart)
                    for line in lines:
                        md.para(line)
                    self.pkg.budget.text(sum(len(c) for r in rows for c in r))
                    md.table(rows)

    def comments(self, sheet: str, md: Markdown) -> None:
        """A sheet's comments: threaded ones with their author, then notes (legacy comments) on
        cells without a threaded one (Excel keeps a copy of each threaded comment as a note)."""
        seen: set[str] = set()
        n = 0
        for part in self.pkg.related(sheet, "threadedComment"):
            root = self.pkg.optional(part)
            for c in root.iter(TC + "threadedComment") if root is not None else ():
                text = " ".join((c.findtext(TC + "text") or "").split())
                ref = c.get("ref") or ""
                if text and n < MAX_COMMENTS:
                    n += 1
                    seen.add(ref)
                    who = self.people().get(c.get("personId") or "", "")
                    self.pkg.budget.text(len(text))
                    md.para(f"Comment on {ref}{f' ({who})' if who else ''}: {text}")
        for part in self.pkg.related(sheet, "comments"):
            root = self.pkg.optional(part)
            if root is None:
                continue
            authors = [a.text or "" for a in root.iter(S + "author")]
            for c in root.iter(S + "comment"):
                ref = c.get("ref") or ""
                body = c.find(S + "text")
                text = " ".join("".join(t.text or "" for t in body.iter(S + "t")).split()) if body is not None else ""
                if not text or ref in seen or n >= MAX_COMMENTS:
                    continue
                n += 1
                i = int(c.get("authorId") or -1) if (c.get("authorId") or "").isdigit() else -1
                who = authors[i] if 0 <= i < len(authors) else ""
                if who and text.startswith(who + ":"):
                    text = text[len(who) + 1:].strip()
                self.pkg.budget.text(len(text))
                md.para(f"Comment on {ref}{f' ({who})' if who else ''}: {text}")

    def people(self) -> dict[str, str]:
        if self._people is None:
            self._people = {}
            for part in self.pkg.related(self.part, "person"):
                root = self.pkg.optional(part)
                for p in root.iter(TC + "person") if root is not None else ():
                    self._people[p.get("id") or ""] = p.get("displayName") or ""
        return self._people


@register(".csv", ".tsv")
def load_csv(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    text, res = text_of(data, source)
    if text is None:
        return res
    budget = Budget(limits)
    delimiter = "\t" if source.lower().endswith(".tsv") else _delimiter(text)
    rows = []
    cells = 0
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        cells += len(row)
        if cells > MAX_CELLS:
            raise OverLimit(f"more than {MAX_CELLS} cells")
        budget.text(sum(len(c) for c in row))
        budget.rows(1)
        rows.append(row)
    md = Markdown()  # no heading: the title (the file's name) heads its entries, and a renamed file is the same text
    md.table(rows)
    return structured(source, source_title(source), md, data, "csv")


DELIMITERS = ",;\t|"
SNIFF_LINES = 50


def _delimiter(text: str) -> str:
    """The delimiter of a CSV file: of ``DELIMITERS``, the one that the most of its first lines hold
    the same number of times outside quotes (ties: the first in ``DELIMITERS``). One pass over
    those lines (the standard library's ``csv.Sniffer`` runs regular expressions that are
    quadratic in what they read)."""
    lines = [ln for ln in text[:1 << 16].split("\n", SNIFF_LINES)[:SNIFF_LINES] if ln.strip()]
    best, best_score = ",", (0, 0)
    for d in DELIMITERS:
        counts = [n for n in (_outside_quotes(ln, d) for ln in lines) if n]
        if not counts:
            continue
        _, agree = Counter(counts).most_common(1)[0]
        if (agree, len(counts)) > best_score:
            best, best_score = d, (agree, len(counts))
    return best


def _outside_quotes(line: str, delimiter: str) -> int:
    """How often ``delimiter`` occurs in ``line`` outside double quotes."""
    return sum(part.count(delimiter) for part in line.split('"')[::2])
