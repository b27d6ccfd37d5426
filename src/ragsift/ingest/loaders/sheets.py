"""Spreadsheets: XLSX and XLSM with openpyxl (MIT; read only, cached values, macros never run)
and CSV / TSV with the standard library. A sheet (or the file) is a section headed by its name;
its rows are a Markdown table whose first row with text is the header, so the splitter keeps
rows whole and indexes every chunk of the table with its header. Empty rows and columns are
left out; at most ``MAX_CELLS`` cells with a value are read from one file. Each row with a value
counts as work for the file's CPU budget (``Budget.rows``); empty rows do not (a sheet of a million
empty rows is stopped early, a sheet of 100,000 real rows reads whole)."""
from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, OverLimit, register, structured
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.text import text_of

MAX_CELLS = 5_000_000


@register(".xlsx", ".xlsm")
def load_xlsx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    import openpyxl

    budget = Budget(limits, packed_bytes=len(data))
    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    md = Markdown()
    cells = 0
    try:
        for ws in wb.worksheets:
            budget.page()
            rows = []
            for row in ws.iter_rows(values_only=True):
                values = [_shown(v) for v in row]
                while values and not values[-1]:  # a sheet whose size says 16,384 columns: the empty ones
                    values.pop()
                budget.tick()
                if not values:
                    rows.append(values)
                    continue
                cells += len(values)
                if cells > MAX_CELLS:
                    raise OverLimit(f"more than {MAX_CELLS} cells with values")
                budget.text(sum(len(v) for v in values))
                budget.rows(1)
                rows.append(values)
            if any(any(v for v in r) for r in rows):
                md.heading(1, ws.title)
                md.table(rows)
        title = (wb.properties.title or "").strip() if wb.properties else ""
    finally:
        wb.close()
    return structured(source, title or source_title(source), md, data, "xlsx",
                      {"sheets": [ws.title for ws in wb.worksheets]})


def _shown(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


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
    md = Markdown()
    md.heading(1, source_title(source))
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
