"""Loaders: file -> Documents, one module per format, each registered in ``LOADERS`` by suffix
(``base.register``); every one writes the same normal form (``base.Markdown``: headings, lists,
tables, code, page and slide marks), which the splitter turns into parents and children.

| format | module | structure kept |
|---|---|---|
| Markdown, text, HTML | ``text`` | headings (Markdown, ``<h1>``..``<h6>``); YAML front matter as metadata |
| JSONL | ``records`` | one document a row (BEIR corpus rows) |
| PDF | ``pdf`` | headings (outline, else font and weight), pages, two columns, tables; running heads and
  page numbers removed; scanned pages by OCR |
| DOCX, ODT | ``docx``, ``odt`` | headings (styles, outline levels), lists, tables, footnotes |
| PPTX | ``pptx`` | slide titles as headings, body, tables, speaker notes; slide numbers |
| XLSX, CSV, TSV | ``sheets`` | a sheet (or file) a section, rows as a table whose header every chunk carries |
| EPUB | ``epub`` | its chapters and table of contents as headings |
| EML | ``mail`` | headers as metadata, the body, attachments read with these loaders |
| PNG, JPEG, TIFF | ``image`` | text by OCR (``pip install 'ragsift[ocr]'``) |
| ZIP | ``archive`` | every member read with these loaders, within limits |

A file whose content is not what its suffix says, an encrypted or damaged file, and a file that
would unpack past its limits (``LoadLimits``: bytes, pages, characters made, time) are skipped
with their reason; they never abort the rest of an ingest.
"""
from __future__ import annotations

from pathlib import Path

# importing a format's module registers its loader
from ragsift.ingest.loaders import (  # noqa: F401
    archive,
    docx,
    epub,
    image,
    mail,
    odt,
    pdf,
    pptx,
    records,
    sheets,
    text,  # noqa: F401
)
from ragsift.ingest.loaders.base import (
    LOADERS,
    MAX_FILE_BYTES,
    Budget,
    LoadLimits,
    LoadResult,
    OverLimit,
    doc_id_for,
    skipped,
)
from ragsift.ingest.loaders.files import iter_files, source_title
from ragsift.ingest.loaders.records import as_record, load_jsonl, record_document
from ragsift.ingest.loaders.sniff import mismatch
from ragsift.ingest.loaders.text import html_to_text, split_front_matter

__all__ = ["LOADERS", "MAX_FILE_BYTES", "Budget", "LoadLimits", "LoadResult", "OverLimit", "as_record", "doc_id_for",
           "html_to_text", "iter_files", "load_bytes", "load_file", "load_jsonl", "record_document", "source_title",
           "split_front_matter"]


def load_file(path: Path, source: str, limits: LoadLimits | int = MAX_FILE_BYTES) -> LoadResult:
    """Load one file with the loader ``LOADERS`` registers for its suffix; ``source`` is its stable
    name (path relative to the ingest root). ``limits``: what reading it may cost (an int: the most
    bytes, other limits their defaults)."""
    if isinstance(limits, int):
        limits = LoadLimits(max_bytes=limits)
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        return skipped(source, f"unsupported file type {path.suffix or '(none)'!r}; "
                               f"supported: {', '.join(sorted(LOADERS.names()))}")
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            return skipped(source, f"file too large ({size} bytes; limit {limits.max_bytes}, setting max_file_mb)")
        data = path.read_bytes()
    except OSError as e:
        return skipped(source, f"cannot read file: {e.strerror or e}")
    return load_bytes(data, suffix, source, limits)


def load_bytes(data: bytes, suffix: str, source: str, limits: LoadLimits) -> LoadResult:
    """Load a file's bytes by its suffix (what an archive or a mail's attachment is read with):
    an empty file, one whose content is not what the suffix says, one over its limits and a
    damaged one are skipped with their reason."""
    if suffix not in LOADERS:
        return skipped(source, f"unsupported file type {suffix or '(none)'!r}")
    if not data.strip():
        return skipped(source, "empty file")
    wrong = mismatch(data, suffix)
    if wrong:
        return skipped(source, wrong)
    try:
        return LOADERS.make(suffix, data, source, limits)
    except OverLimit as e:
        return skipped(source, f"{suffix.lstrip('.').upper()} {e}; skipped")
    except (MemoryError, RecursionError) as e:
        return skipped(source, f"unreadable {suffix.lstrip('.').upper()}: {type(e).__name__}")
    except Exception as e:  # a damaged file: each reader raises its own kinds
        text = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        return skipped(source, f"unreadable {suffix.lstrip('.').upper()} ({type(e).__name__}): {text}")
