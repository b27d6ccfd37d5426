"""OpenDocument text (ODT), read with zipfile and defusedxml (no entity expansion): ``text:h``
with its outline level is a heading, ``text:p`` a paragraph, ``text:list`` items by nesting,
``table:table`` a Markdown table, notes (``text:note``) gathered in a "Notes" section at the end.
The title: the document's own (``meta.xml``), else its first heading."""
from __future__ import annotations

import io
import zipfile
from typing import Any

from ragsift.ingest.loaders.base import (
    MAX_LIST_LEVEL,
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    OverLimit,
    register,
    structured,
)
from ragsift.ingest.loaders.epub import xml
from ragsift.ingest.loaders.sniff import Zip

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
T, TB = f"{{{TEXT}}}", f"{{{TABLE}}}"


def office_body(data: bytes, budget: Budget, body: str, kind: str = "") -> tuple[zipfile.ZipFile, Any]:
    """An OpenDocument file's archive and its ``office:body/office:<body>`` element (text,
    presentation, spreadsheet), content.xml's size counted against ``budget``; ``kind`` names
    the file in the error when it has none."""
    z = zipfile.ZipFile(io.BytesIO(data))
    info = z.getinfo("content.xml")
    budget.text(info.file_size // 4)
    el = xml(z.read(info)).find(f"{{{OFFICE}}}body/{{{OFFICE}}}{body}")
    if el is None:
        raise OverLimit(f"{kind or f'not an OpenDocument {body}'}: content.xml has no office:{body}")
    return z, el


@register(".odt", signature=Zip("OpenDocument text", "content.xml", holds="an OpenDocument file"))
def load_odt(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    z, body = office_body(data, budget, "text", "damaged ODT")
    md = Markdown()
    notes: list[str] = []
    first = ""
    for el in body:
        first = _block(el, md, notes, budget, 0) or first
    if notes:
        md.heading(1, "Notes")
        for n in notes:
            md.para(n)
    title = ""
    if "meta.xml" in z.namelist():
        try:
            title = (xml(z.read("meta.xml")).findtext(".//{http://purl.org/dc/elements/1.1/}title") or "").strip()
        except Exception:  # a damaged meta.xml: the first heading is the title
            title = ""
    return structured(source, title or first, md, data, "odt")


def _text(el: Any, notes: list[str]) -> str:
    """An element's text: spaces (``text:s``), tabs and line breaks kept; notes taken out."""
    parts: list[str] = [el.text or ""]
    for child in el:
        tag = child.tag
        if tag == T + "note":
            body = child.find(T + "note-body")
            if body is not None:
                notes.append(" ".join("".join(body.itertext()).split()))
        elif tag == T + "s":  # c spaces: bounded before they are made (a count of a billion needed 2 GB)
            parts.append(" " * _count(child.get(T + "c", "1")))
        elif tag == T + "tab":
            parts.append("\t")
        elif tag == T + "line-break":
            parts.append("\n")
        else:
            parts.append(_text(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)


MAX_SPACES = 1000  # spaces one text:s element makes at most


def _level(v: str) -> int:
    try:
        return max(1, min(6, int(v)))
    except ValueError:
        return 1


def _count(v: str) -> int:
    try:
        return max(0, min(MAX_SPACES, int(v)))
    except ValueError:
        return 1


def _block(el: Any, md: Markdown, notes: list[str], budget: Budget, depth: int) -> str:
    """Write one body element; returns a heading's text (for the title)."""
    budget.tick()
    tag = el.tag
    if tag == T + "h":
        text = _text(el, notes)
        budget.text(len(text))
        md.heading(_level(el.get(T + "outline-level", "1")), text)
        return text.strip()
    if tag == T + "p":
        text = _text(el, notes)
        budget.text(len(text))
        if (el.get(T + "style-name") or "").lower() == "title":
            md.heading(1, text)
            return text.strip()
        md.para(text)
    elif tag == T + "list":
        for item in el:
            if item.tag == T + "list-header":  # a list's paragraphs without a bullet (Impress writes text so)
                for sub in item:
                    _block(sub, md, notes, budget, depth)
                continue
            if item.tag != T + "list-item":
                continue
            for sub in item:
                if sub.tag == T + "list":
                    _block(sub, md, notes, budget, min(depth + 1, MAX_LIST_LEVEL))
                else:
                    text = _text(sub, notes)
                    budget.text(len(text))
                    md.item(text, depth)
    elif tag == TB + "table":
        rows = []
        for row in el.iter(TB + "table-row"):
            rows.append([" ".join(_text(c, notes).split()) for c in row if c.tag == TB + "table-cell"])
        budget.text(sum(len(c) for r in rows for c in r))
        md.table(rows)
    elif tag == T + "section":
        for sub in el:
            _block(sub, md, notes, budget, depth)
    return ""
