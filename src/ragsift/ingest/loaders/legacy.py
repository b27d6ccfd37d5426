"""Legacy Office files and RTF: Word 97-2003 (``.doc``), Excel 97-2003 (``.xls``) and PowerPoint
97-2003 (``.ppt``) are converted by LibreOffice (``convert``, within the file's limits) to DOCX,
XLSX or PPTX and read by those readers, so they keep the same structure (headings, lists, tables,
slides, sheets); without LibreOffice they are skipped with what to install. RTF is converted the
same way when LibreOffice is installed, else read by this package's own RTF reader (``rtf``:
headings, lists, tables, notes). A ``.doc`` that is really RTF (Word saves such files) is read as
RTF. The document keeps its own format (``doc``, ``xls``, ``ppt``, ``rtf``) and the hash of its own
bytes, so a file converted again is not a changed file."""
from __future__ import annotations

from dataclasses import replace

from ragsift.ingest.loaders.base import (
    Budget,
    LoadLimits,
    LoadResult,
    register,
    sha256,
    skipped,
    structured,
)
from ragsift.ingest.loaders.convert import Failed, Unavailable, convert, soffice
from ragsift.ingest.loaders.files import source_title
from ragsift.ingest.loaders.sniff import Magic, Ole
from ragsift.ingest.loaders.text import html_to_text


@register(".doc", signature=Ole("Word 97-2003 document", "worddocument", also=("RTF", "a Word 2 document"),
                                   holds="a Word document"))
def load_doc(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    if data.lstrip()[:5] == b"{\\rtf":
        return load_rtf(data, source, limits)
    return _converted(data, source, limits, ".doc", "docx")


@register(".xls", signature=Ole("Excel 97-2003 workbook", "workbook", "book", also=("an Excel 2-4 worksheet",),
                                   holds="an Excel workbook"))
def load_xls(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    return _converted(data, source, limits, ".xls", "xlsx")


@register(".ppt", signature=Ole("PowerPoint 97-2003 deck", "powerpoint document", holds="a PowerPoint deck"))
def load_ppt(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    return _converted(data, source, limits, ".ppt", "pptx")


@register(".rtf", signature=Magic("RTF document", "RTF"))
def load_rtf(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    if soffice() is not None:
        res = _converted(data, source, limits, ".rtf", "docx", fmt="rtf")
        if res.documents or not any(s.reason.startswith("LibreOffice could not") for s in res.skipped):
            return res
    from ragsift.ingest.loaders.rtf import read_rtf

    budget = Budget(limits, packed_bytes=len(data))
    got = read_rtf(data, budget)
    md = got.md
    if got.html is not None:  # an RTF that wraps HTML
        title, text = html_to_text(got.html)
        md.markdown(text)
        got.title = got.title or title
    budget.text(len(md.text()))
    return structured(source, got.title or source_title(source), md, data, "rtf")


def _converted(data: bytes, source: str, limits: LoadLimits, suffix: str, target: str, fmt: str = "") -> LoadResult:
    """``data`` converted by LibreOffice to ``target`` and read by that format's reader, as ``fmt``."""
    from ragsift.ingest.loaders.dispatch import load_bytes

    budget = Budget(limits, packed_bytes=len(data))
    try:
        made = convert(data, suffix, target, budget)
    except (Unavailable, Failed) as e:
        return skipped(source, str(e))
    got = load_bytes(made, "." + target, source, limits)
    fmt = fmt or suffix.lstrip(".")
    got.documents = [replace(d, content_hash=sha256(data), format=fmt,
                             metadata={**d.metadata, "converted_by": "LibreOffice"}) for d in got.documents]
    return got
