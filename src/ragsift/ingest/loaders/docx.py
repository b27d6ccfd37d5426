"""Word documents (DOCX, DOCM: macros are never run, only the text is read), with python-docx
(MIT): the body in order, paragraphs and tables.

- Headings: a paragraph styled ``Heading N`` (or ``Title``, or a style based on one), or with an
  outline level in its own or its style's properties; levels kept.
- Lists: paragraphs with numbering (``w:numPr``) or a list style become ``- item`` lines,
  indented by their level.
- Tables: Markdown tables (a merged cell's text once per row).
- Footnotes and endnotes: a "Notes" section at the end.
- The title: the document's core property, else its Title paragraph or first heading.
"""
from __future__ import annotations

import io
import re
from typing import Any

from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, register, structured

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
HEADING_STYLE = re.compile(r"^(?:heading|标题|überschrift|titre|título)\s*(\d)$", re.IGNORECASE)


@register(".docx", ".docm")
def load_docx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    budget = Budget(limits, packed_bytes=len(data))
    doc = docx.Document(io.BytesIO(data))
    md = Markdown()
    title = (doc.core_properties.title or "").strip()
    found_title = ""
    for block in _blocks(doc, Paragraph, Table):
        budget.tick()
        if isinstance(block, Table):
            rows = _table_rows(block._tbl, budget)
            md.table(rows)
            continue
        text = block.text
        if not text.strip():
            continue
        budget.text(len(text))
        level = _heading_level(block)
        if level is not None:
            md.heading(level, text)
            found_title = found_title or text.strip()
        elif _list_level(block) is not None:
            md.item(text, _list_level(block) or 0)
        else:
            md.para(text)
    notes = _notes(doc)
    if notes:
        md.heading(1, "Notes")
        for n in notes:
            budget.text(len(n))
            md.para(n)
    return structured(source, title or found_title, md, data, "docx")


def _blocks(doc: Any, Paragraph: Any, Table: Any) -> Any:
    """The body's paragraphs and tables in document order."""
    body = doc.element.body
    for child in body.iterchildren():
        if child.tag == W + "p":
            yield Paragraph(child, doc)
        elif child.tag == W + "tbl":
            yield Table(child, doc)


MAX_SPAN = 64  # columns a cell may span (Word allows 63): a gridSpan of a billion is read as this
MAX_STYLE_DEPTH = 16  # styles based on styles: a longer chain (or a loop) is cut here


def _table_rows(tbl: Any, budget: Budget) -> list[list[str]]:
    """A table's rows of cell texts, read from its XML in one pass: each cell once (a cell spanning
    columns is one cell), a cell merged with the one above (``vMerge``) repeats its text. Linear in
    the table (python-docx's ``row.cells`` lays out the whole grid for every row: a 5,000-row
    table took minutes, a huge ``gridSpan`` hours)."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}  # grid column -> text of the cell that starts a vertical merge there
    for tr in tbl.iterchildren(W + "tr"):
        row: list[str] = []
        col = 0
        for tc in tr.iterchildren(W + "tc"):
            pr = tc.find(W + "tcPr")
            span, merge = 1, None
            if pr is not None:
                gs, vm = pr.find(W + "gridSpan"), pr.find(W + "vMerge")
                span = max(1, min(MAX_SPAN, _int(gs.get(W + "val")) if gs is not None else 1))
                merge = None if vm is None else (vm.get(W + "val") or "continue")
            if merge == "continue":
                text = above.get(col, "")
            else:
                text = "\n".join(_p_text(p) for p in tc.iterchildren(W + "p"))
                if merge == "restart":
                    above[col] = text
            budget.text(len(text))
            row.append(text)
            col += span
        budget.tick()
        rows.append(row)
    return rows


_RUN_TEXT = {W + "t": None, W + "tab": "\t", W + "br": "\n", W + "cr": "\n", W + "noBreakHyphen": "-"}


def _p_text(p: Any) -> str:
    """A paragraph's text from its XML in one pass (python-docx's ``Paragraph.text`` runs an XPath
    query a paragraph: 20 us, a minute for an empty table of a million cells)."""
    if len(p) == 0:
        return ""
    out = []
    for el in p.iter(*_RUN_TEXT):
        fixed = _RUN_TEXT[el.tag]
        out.append(el.text or "" if fixed is None else fixed)
    return "".join(out)


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 1


def _style_chain(style: Any) -> Any:
    """A style and the styles it is based on, each once, at most ``MAX_STYLE_DEPTH`` (a style based
    on itself through another looped forever)."""
    seen: set[Any] = set()
    while style is not None and len(seen) < MAX_STYLE_DEPTH:
        key = getattr(style, "style_id", None) or id(style)
        if key in seen:
            return
        seen.add(key)
        yield style
        style = style.base_style


def _heading_level(p: Any) -> int | None:
    for style in _style_chain(p.style):
        name = (style.name or "").strip()
        if name.lower() == "title":
            return 1
        m = HEADING_STYLE.match(name)
        if m:
            return max(1, min(6, int(m.group(1))))
        level = _outline_level(style.element)
        if level is not None:
            return level
    return _outline_level(p._p)


def _outline_level(el: Any) -> int | None:
    ppr = el.find(W + "pPr")
    lvl = ppr.find(W + "outlineLvl") if ppr is not None else None
    if lvl is None:
        return None
    try:
        v = int(lvl.get(W + "val"))
    except (TypeError, ValueError):
        return None
    return v + 1 if 0 <= v < 9 else None


def _list_level(p: Any) -> int | None:
    ppr = p._p.pPr
    if ppr is not None and ppr.numPr is not None:
        ilvl = ppr.numPr.ilvl
        return max(0, min(8, int(ilvl.val))) if ilvl is not None and ilvl.val is not None else 0
    name = (p.style.name or "").lower() if p.style is not None else ""
    if "list" in name:
        return 0
    return None


def _notes(doc: Any) -> list[str]:
    """The text of the footnotes and endnotes (the separators left out)."""
    out = []
    for rel in doc.part.rels.values():
        if rel.reltype.endswith(("/footnotes", "/endnotes")) and not rel.is_external:
            from lxml import etree

            root = etree.fromstring(rel.target_part.blob, parser=etree.XMLParser(resolve_entities=False))
            for note in root.findall(f"{W}footnote") + root.findall(f"{W}endnote"):
                if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                    continue
                text = "".join(t.text or "" for t in note.iter(W + "t")).strip()
                if text:
                    out.append(text)
    return out
