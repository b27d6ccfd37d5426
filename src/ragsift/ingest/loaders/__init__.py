"""Loaders: file -> Documents, one module per format, each registered in ``LOADERS`` by suffix
(``base.register``); every one writes the same normal form (``base.Markdown``: headings, lists,
tables, code, page and slide marks), which the splitter turns into parents and children.

| format | module | structure kept |
|---|---|---|
| Markdown, text, HTML | ``text`` | headings (Markdown, ``<h1>``..``<h6>``); YAML front matter as metadata |
| JSONL, JSON | ``records`` | one document a row (BEIR corpus rows; a JSON array of such records); other JSON as
  text, each value after its key path |
| XML | ``xmltext`` | as text: elements with text as paragraphs, short values as ``name: value``; entities never
  expanded |
| PDF | ``pdf`` | headings (outline, else font and weight), pages, two columns, tables; running heads and
  page numbers removed; scanned pages by OCR |
| DOCX, ODT | ``docx``, ``odt`` | headings (styles, outline levels), lists, tables, footnotes; DOCX also text
  boxes, content controls, nested tables, equations, charts, Strict OOXML (``ooxml``) |
| PPTX, ODP | ``pptx``, ``opendocument`` | slide titles as headings, every shape (groups opened), tables, charts,
  speaker notes, comments; slide numbers |
| XLSX, ODS, CSV, TSV | ``sheets``, ``opendocument`` | a sheet (or file) a section, rows as a table whose header
  every chunk carries; cells as shown (``numfmt``), merged cells, charts, comments |
| DOC, XLS, PPT | ``legacy`` (``convert``) | converted by LibreOffice to DOCX, XLSX, PPTX and read as those; without
  LibreOffice skipped, saying what to install |
| RTF | ``legacy``, ``rtf`` | by LibreOffice as DOCX when installed, else our own reader: headings, lists, tables,
  notes |
| EPUB | ``epub`` | its chapters and table of contents as headings |
| EML, MSG | ``mail``, ``msg`` | headers as metadata, the body, attachments read with these loaders |
| PNG, JPEG, TIFF, BMP, WebP (HEIC) | ``image`` | text by OCR (``pip install 'ragsift[ocr]'``; HEIC with ``pi-heif``) |
| ZIP | ``archive`` | every member read with these loaders, within limits |

Text in any encoding (``encoding``): byte order marks, UTF-16/32 without one, UTF-8, a declared
charset, a legacy encoding detected (GB18030, Big5, Shift-JIS, Windows-1252, ...).

A file whose content is not what its suffix says, an encrypted or damaged file, and a file that
would unpack past its limits (``LoadLimits``: bytes, pages, characters made, CPU time, memory) are
skipped with their reason; they never abort the rest of an ingest. An ingest reads every file in a
reading process of its own (``isolation.read_file``), where those limits hold whatever the file
holds; ``load_file`` and ``load_bytes`` read in the calling process.
"""
from __future__ import annotations

# importing a format's module registers its loader
from ragsift.ingest.loaders import (  # noqa: F401
    archive,
    docx,
    epub,
    image,
    legacy,
    mail,
    msg,
    odt,
    opendocument,
    pdf,
    pptx,
    records,
    sheets,
    text,  # noqa: F401
    xmltext,
)
from ragsift.ingest.loaders.base import (
    LOADERS,
    MAX_FILE_BYTES,
    Budget,
    LoadLimits,
    LoadResult,
    OverLimit,
    doc_id_for,
)
from ragsift.ingest.loaders.dispatch import load_bytes, load_file
from ragsift.ingest.loaders.files import iter_files, source_title
from ragsift.ingest.loaders.isolation import read_file
from ragsift.ingest.loaders.records import as_record, load_jsonl, record_document
from ragsift.ingest.loaders.text import html_to_text, split_front_matter

__all__ = ["LOADERS", "MAX_FILE_BYTES", "Budget", "LoadLimits", "LoadResult", "OverLimit", "as_record", "doc_id_for",
           "html_to_text", "iter_files", "load_bytes", "load_file", "load_jsonl", "read_file", "record_document",
           "source_title", "split_front_matter"]
