"""Word documents (DOCX, DOCM: macros are never run, only the text is read), Transitional and
Strict OOXML, read from the package's XML (``ooxml.Package``) in document order, whole:

- Headings: a paragraph styled ``Heading N`` (or ``Title``, or a style based on one), or with an
  outline level in its own or its style's properties; levels kept.
- Lists: paragraphs with numbering (``w:numPr``, their own or their style's) or a list style
  become ``- item`` lines (``1.`` and on where the numbering counts), indented by their level.
- Tables: Markdown tables, read in one pass; a cell spanning columns once with empty cells after
  it (so every cell stays under its column), a cell merged with the one above repeats its text; a
  table nested in a cell, a list or several paragraphs in a cell written inside the cell.
- Content controls (``w:sdt``, around blocks, rows, cells or runs), text boxes (DrawingML and VML:
  ``w:txbxContent``, after the paragraph they are anchored in), the one branch of
  ``mc:AlternateContent`` that holds text (never both: they hold the same), tracked insertions
  (deletions left out), check boxes as ``[x]`` / ``[ ]``.
- Equations (OMML) as LaTeX: ``$...$`` inside a paragraph, ``$$...$$`` on their own.
- Charts: their kind and title, and their data as a table (``ooxml.chart``).
- Footnotes and endnotes: a "Notes" section at the end.
- The title: the document's core property, else its Title paragraph or first heading.

Linear in the document: every element is visited once; nesting (tables in cells, text boxes in
paragraphs, content controls) deeper than ``MAX_NESTING`` is read as its plain text; spans,
numbering levels and style chains read from the file are bounded before use.
"""
from __future__ import annotations

import re
from typing import Any

import ragsift.ingest.loaders.ooxml as ooxml
from ragsift.ingest.loaders.base import (
    MAX_LIST_LEVEL,
    Budget,
    LoadLimits,
    LoadResult,
    Markdown,
    register,
    skipped,
    structured,
)
from ragsift.ingest.loaders.docx_numbering import W, _attr, _Numbering
from ragsift.ingest.loaders.sniff import Zip

W14 = "{http://schemas.microsoft.com/office/word/2010/wordml}"
M = ooxml.M
MC = ooxml.MC
R = ooxml.R
C = ooxml.C
HEADING_STYLE = re.compile(r"^(?:heading|标题|überschrift|titre|título)\s*(\d)$", re.IGNORECASE)
MAX_SPAN = 64  # columns a cell may span (Word allows 63): a gridSpan of a billion is read as this
MAX_COLUMNS = 256  # a row's cells padded to stay under their columns only this far
MAX_STYLE_DEPTH = 16  # styles based on styles: a longer chain (or a loop) is cut here
MAX_NESTING = 24  # tables in cells, text boxes in paragraphs, content controls: deeper is plain text
SKIP = {W + "del", W + "moveFrom", W + "pPr", W + "rPr", W + "tblPr", W + "trPr", W + "tcPr", W + "sdtPr",
        W + "sdtEndPr", W + "sectPr", W + "tblGrid", W + "instrText", W + "delText", W + "fldChar",
        W + "footnoteReference", W + "endnoteReference", W + "commentReference", W + "annotationRef"}


#: a block read: ("h", level, text), ("p", text), ("li", level, text, number or None), ("table", rows)
Block = tuple


@register(".docx", ".docm", signature=Zip("Word document", "word/"))
def load_docx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    pkg = ooxml.Package(data, budget, "DOCX")
    part = pkg.main("word/document.xml")
    root = pkg.xml(part)
    if root is None:
        return skipped(source, "damaged Word document: it has no main document part")
    body = root.find(W + "body")
    if body is None:
        return skipped(source, f"not a Word document: {part} has no w:body"
                       + (" (its main part is not a WordprocessingML document)" if root.tag != W + "document" else ""))
    reader = _Reader(pkg, part, budget)
    blocks: list[Block] = []
    reader.blocks(body, blocks, 0)
    notes = reader.notes()
    md = Markdown()
    found_title = ""
    for b in blocks:
        if b[0] == "h":
            md.heading(b[1], b[2])
            found_title = found_title or " ".join(b[2].split())
        elif b[0] == "p":
            md.para(b[1])
        elif b[0] == "li":
            md.item(b[2], b[1], b[3])
        else:
            md.table(b[1])
    if notes:
        md.heading(1, "Notes")
        for n in notes:
            md.para(n)
    return structured(source, pkg.title() or found_title, md, data, "docx")


class _Reader:
    """One document's blocks, read from its XML with its styles and numbering."""

    def __init__(self, pkg: ooxml.Package, part: str, budget: Budget) -> None:
        self.pkg, self.part, self.budget = pkg, part, budget
        self.styles: dict[str, tuple[str, str | None, int | None, Any]] = {}  # id -> name, based on, outline, numPr
        self.default_style: str | None = None
        for p in pkg.related(part, "styles")[:1]:
            self._read_styles(pkg.optional(p))
        numbering = pkg.related(part, "numbering")
        self.lists = _Numbering(pkg.optional(numbering[0]) if numbering else None)
        self.charts: dict[str, Any] = {}

    # ---------------------------------------------------------------- blocks
    def blocks(self, parent: Any, out: list[Block], depth: int) -> None:
        """The blocks of a body, a cell, a text box, a note or a content control, in order."""
        if depth > MAX_NESTING:
            text = _plain(parent)
            if text.strip():
                out.append(("p", text))
            return
        for el in parent:
            tag = el.tag
            if tag == W + "p":
                self.paragraph(el, out, depth)
            elif tag == W + "tbl":
                box = _only_cell(el, depth)
                if box is not None:  # a table of one cell: a box around blocks (a layout), read as them
                    self.blocks(box, out, depth + 1)
                else:
                    out.append(("table", self.table(el, depth + 1)))
            elif tag == W + "sdt":
                self._sdt(el, lambda content: self.blocks(content, out, depth + 1))
            elif tag == MC + "AlternateContent":
                self._alternate(el, out, lambda b, o: self.blocks(b, o, depth + 1))
            elif tag in SKIP or not isinstance(tag, str):
                continue
            elif tag in (W + "customXml", W + "ins", W + "moveTo", W + "smartTag"):
                self.blocks(el, out, depth + 1)
            self.budget.tick()

    def _sdt(self, el: Any, read: Any) -> None:
        content = el.find(W + "sdtContent")
        pr = el.find(W + "sdtPr")
        if content is None or (pr is not None and pr.find(W + "showingPlcHdr") is not None):
            return  # a control showing its placeholder ("Click or tap here to enter text.")
        read(content)

    def _alternate(self, el: Any, out: list, read: Any) -> None:
        """The first branch of an ``mc:AlternateContent`` that gives anything (never two)."""
        for branch in ooxml.choose(el):
            got: list = []
            read(branch, got)
            if any(_has_text(x) for x in got):
                out += got
                return

    # ---------------------------------------------------------------- paragraphs
    def paragraph(self, p: Any, out: list[Block], depth: int) -> None:
        parts: list[str] = []
        floats: list[Block] = []
        self.inline(p, parts, floats, depth)
        if any(isinstance(x, _Eq) for x in parts) and not any(x.strip() for x in parts if not isinstance(x, _Eq)):
            for eq in parts:  # equations on their own
                if isinstance(eq, _Eq) and eq:
                    self.budget.text(len(eq))
                    out.append(("p", f"$${eq}$$"))
            out += floats
            return
        text = "".join(f"${x}$" if isinstance(x, _Eq) else x for x in parts).strip()
        if text:
            self.budget.text(len(text))
            pr = p.find(W + "pPr")
            style = _attr(pr, "pStyle") if pr is not None else None
            level = self._heading_level(pr, style)
            item = self._numbering(pr, style)
            if level is not None:
                out.append(("h", level, f"{item[1]} {text}" if item and item[1] else text))
            elif item is not None:
                lvl, label, number = item
                out.append(("li", lvl, text if number is not None or label is None else f"{label} {text}", number))
            else:
                out.append(("p", text))
        out += floats

    def inline(self, el: Any, parts: list[str], floats: list[Block], depth: int) -> None:
        """The text of a paragraph's runs into ``parts``; what is anchored in them (text boxes,
        charts) into ``floats``."""
        if depth > MAX_NESTING:
            parts.append(_plain(el))
            return
        for c in el:
            tag = c.tag
            if tag == W + "r":
                self.run(c, parts, floats, depth)
            elif tag == M + "oMath":
                parts.append(_Eq(ooxml.omml(c)))
            elif tag == M + "oMathPara":
                parts.extend(_Eq(ooxml.omml(eq)) for eq in c.iter(M + "oMath"))
            elif tag == W + "sdt":
                box = _checkbox(c)
                if box is not None:
                    parts.append(box)
                else:
                    self._sdt(c, lambda content: self.inline(content, parts, floats, depth + 1))
            elif tag == MC + "AlternateContent":
                got: list = []
                self._alternate(c, got, lambda b, o: self._inline_into(b, o, depth + 1))
                for kind, x in got:
                    (parts if kind == "t" else floats).append(x)
            elif tag in SKIP or not isinstance(tag, str):
                continue
            else:  # hyperlinks, smart tags, insertions, simple fields, custom XML, ruby ...
                self.inline(c, parts, floats, depth + 1)

    def _inline_into(self, el: Any, out: list, depth: int) -> None:
        parts: list[str] = []
        floats: list[Block] = []
        self.inline(el, parts, floats, depth)
        out += [("t", p) for p in parts] + [("f", f) for f in floats]

    def run(self, r: Any, parts: list[str], floats: list[Block], depth: int) -> None:
        for c in r:
            tag = c.tag
            if tag == W + "t":
                parts.append(c.text or "")
            elif tag in (W + "tab", W + "ptab"):
                parts.append("\t")
            elif tag in (W + "br", W + "cr"):
                parts.append("\n")
            elif tag == W + "noBreakHyphen":
                parts.append("-")
            elif tag == W + "sym":
                ch = _sym(c)
                if ch:
                    parts.append(ch)
            elif tag in (W + "drawing", W + "pict", W + "object"):
                self.drawing(c, floats, depth + 1)
            elif tag == MC + "AlternateContent":
                got: list = []
                self._alternate(c, got, lambda b, o: self._drawing_into(b, o, depth + 1))
                floats += got
            elif tag == W + "ruby":
                base = c.find(W + "rubyBase")
                if base is not None:
                    self.inline(base, parts, floats, depth + 1)

    def _drawing_into(self, el: Any, out: list, depth: int) -> None:
        self.drawing(el, out, depth)

    def drawing(self, el: Any, floats: list[Block], depth: int) -> None:
        """Text boxes and charts in a drawing (DrawingML or VML), each once, in order."""
        if depth > MAX_NESTING:
            return
        for c in el:
            tag = c.tag
            if tag == W + "txbxContent":
                self.blocks(c, floats, depth + 1)
            elif tag == C + "chart":
                self._chart(c, floats)
            elif tag == MC + "AlternateContent":
                self._alternate(c, floats, lambda b, o: self.drawing(b, o, depth + 1))
            elif isinstance(tag, str):
                self.drawing(c, floats, depth + 1)

    def _chart(self, el: Any, out: list[Block]) -> None:
        target = self.pkg.target(self.part, el.get(R + "id"))
        if target is None or target in self.charts:
            return
        root = self.pkg.optional(target)
        self.charts[target] = True
        if root is None:
            return
        lines, rows = ooxml.chart(root)
        for line in lines:
            out.append(("p", line))
        if rows:
            self.budget.text(sum(len(c) for r in rows for c in r))
            out.append(("table", rows))

    # ---------------------------------------------------------------- tables
    def table(self, tbl: Any, depth: int) -> list[list[str]]:
        """A table's rows of cell texts, read in one pass: each cell once, a cell spanning columns
        followed by empty cells (at most ``MAX_COLUMNS`` in a row), a cell merged with the one above
        (``vMerge``) repeats its text. Linear in the table."""
        rows: list[list[str]] = []
        above: dict[int, str] = {}  # grid column -> text of the cell that starts a vertical merge there
        for tr in _within(tbl, W + "tr", depth):
            row: list[str] = []
            trpr = tr.find(W + "trPr")
            before = _span(_attr(trpr, "gridBefore")) if trpr is not None and _attr(trpr, "gridBefore") else 0
            row += [""] * min(before, MAX_COLUMNS)
            col = before
            for tc in _within(tr, W + "tc", depth):
                pr = tc.find(W + "tcPr")
                span, merge = 1, None
                if pr is not None:
                    span = _span(_attr(pr, "gridSpan"))
                    vm = pr.find(W + "vMerge")
                    merge = None if vm is None else (vm.get(W + "val") or "continue")
                if merge == "continue":
                    text = above.get(col, "")
                else:
                    text = self.cell(tc, depth + 1)
                    if merge == "restart":
                        above[col] = text
                self.budget.text(len(text))
                row.append(text)
                if len(row) < MAX_COLUMNS:
                    row += [""] * min(span - 1, MAX_COLUMNS - len(row))
                col += span
            self.budget.tick()
            rows.append(row)
        return rows

    def cell(self, tc: Any, depth: int) -> str:
        """A cell's blocks as its text: paragraphs on lines of their own, list items with their
        marks, a nested table's rows with their cells between ``|``."""
        blocks: list[Block] = []
        self.blocks(tc, blocks, depth)
        return "\n".join(_lines(blocks))

    # ---------------------------------------------------------------- styles and numbering
    def _read_styles(self, root: Any) -> None:
        if root is None:
            return
        for s in root.iter(W + "style"):
            if s.get(W + "type") not in (None, "paragraph"):
                continue
            sid = s.get(W + "styleId") or ""
            name = _attr(s, "name") or sid
            pr = s.find(W + "pPr")
            outline = _outline_level(pr)
            num = pr.find(W + "numPr") if pr is not None else None
            self.styles[sid] = (name, _attr(s, "basedOn"), outline, num)
            if s.get(W + "default") in ("1", "true", "on"):
                self.default_style = sid

    def _chain(self, style: str | None) -> Any:
        """A style and the styles it is based on, each once, at most ``MAX_STYLE_DEPTH`` (a style
        based on itself through another looped forever)."""
        seen: set[str] = set()
        sid = style if style is not None else self.default_style
        while sid is not None and sid in self.styles and sid not in seen and len(seen) < MAX_STYLE_DEPTH:
            seen.add(sid)
            yield self.styles[sid]
            sid = self.styles[sid][1]

    def _heading_level(self, pr: Any, style: str | None) -> int | None:
        for name, _, outline, _ in self._chain(style):
            name = name.strip()
            if name.lower() == "title":
                return 1
            m = HEADING_STYLE.match(name)
            if m:
                return max(1, min(6, int(m.group(1))))
            if outline is not None:
                return outline
        return _outline_level(pr)

    def _numbering(self, pr: Any, style: str | None) -> tuple[int, str | None, int | None] | None:
        """A numbered or list paragraph's (level, label as shown or None for a bullet, its number
        when a Markdown ordered item can show it); None when it is not in a list. Counted in
        document order, headings too (numbered headings: "2.1 Scope")."""
        num = pr.find(W + "numPr") if pr is not None else None
        named = False
        for name, _, _, style_num in self._chain(style):
            if num is None and style_num is not None:
                num = style_num
            named = named or "list" in name.lower()
        num_id = _attr(num, "numId") if num is not None else None
        if num_id is None or num_id == "0":  # none, or numbering removed
            return (0, None, None) if named else None
        try:
            level = max(0, min(MAX_LIST_LEVEL, int(_attr(num, "ilvl") or 0)))
        except ValueError:
            level = 0
        label, number = self.lists.next(num_id, level)
        return level, label, number

    # ---------------------------------------------------------------- notes
    def notes(self) -> list[str]:
        """The text of the footnotes and endnotes (the separators left out)."""
        out = []
        for kind, tag in (("footnotes", "footnote"), ("endnotes", "endnote")):
            for part in self.pkg.related(self.part, kind)[:1]:
                root = self.pkg.optional(part)
                for note in root.iter(W + tag) if root is not None else ():
                    if note.get(W + "type") in ("separator", "continuationSeparator", "continuationNotice"):
                        continue
                    blocks: list[Block] = []
                    self.blocks(note, blocks, 1)
                    text = " ".join(_lines(blocks)).strip()
                    if text:
                        self.budget.text(len(text))
                        out.append(text)
        return out


def _within(el: Any, tag: str, depth: int) -> Any:
    """``el``'s children of ``tag``, also inside content controls and custom XML around them
    (a repeating section's rows), at most ``MAX_NESTING`` deep."""
    for c in el:
        if c.tag == tag:
            yield c
        elif c.tag in (W + "sdt", W + "customXml", W + "ins", W + "moveTo") and depth < MAX_NESTING:
            inner = c.find(W + "sdtContent") if c.tag == W + "sdt" else c
            if inner is not None:
                yield from _within(inner, tag, depth + 1)


def _only_cell(tbl: Any, depth: int) -> Any:
    """The cell of a table of one row of one cell (None for any other table)."""
    rows = _within(tbl, W + "tr", depth)
    first = next(rows, None)
    if first is None or next(rows, None) is not None:
        return None
    cells = _within(first, W + "tc", depth)
    cell = next(cells, None)
    return cell if next(cells, None) is None else None


def _span(v: str | None) -> int:
    try:
        return max(1, min(MAX_SPAN, int(v or 1)))
    except ValueError:
        return 1


def _outline_level(pr: Any) -> int | None:
    v = _attr(pr, "outlineLvl")
    try:
        n = int(v) if v is not None else -1
    except ValueError:
        return None
    return n + 1 if 0 <= n < 9 else None


def _checkbox(sdt: Any) -> str | None:
    pr = sdt.find(W + "sdtPr")
    box = pr.find(W14 + "checkbox") if pr is not None else None
    if box is None:
        return None
    checked = box.find(W14 + "checked")
    on = checked is not None and checked.get(W14 + "val") in ("1", "true", "on")
    return "[x]" if on else "[ ]"


def _sym(el: Any) -> str:
    """A ``w:sym`` character, unless it is a symbol font's private code (no meaning as text)."""
    try:
        code = int(el.get(W + "char") or "", 16)
    except ValueError:
        return ""
    if 0xF000 <= code <= 0xF0FF or not 0x20 <= code < 0x110000:
        return ""
    return chr(code)


def _plain(el: Any) -> str:
    """The text of everything under ``el`` (what is nested deeper than the reader goes)."""
    return " ".join(" ".join(t.text or "" for t in el.iter(W + "t", M + "t")).split())


def _lines(blocks: list[Block]) -> list[str]:
    """Blocks as lines of text (a cell's, a note's): list items with their marks, a table's rows
    with their cells between ``|``."""
    lines = []
    for b in blocks:
        if b[0] == "li":
            lines.append(f"{b[3]}. {b[2]}" if b[3] is not None else f"- {b[2]}")
        elif b[0] == "table":
            lines += [" | ".join(c for c in r if c) for r in b[1] if any(r)]
        else:
            lines.append(b[-1])
    return [ln for ln in lines if ln.strip()]


def _has_text(x: Any) -> bool:
    """Whether what a branch read holds any text (blocks, rows, cells, pieces of a paragraph)."""
    if isinstance(x, str):
        return bool(x.strip())
    if isinstance(x, tuple):
        return any(_has_text(y) for y in x[1:])
    if isinstance(x, list):
        return any(_has_text(y) for y in x)
    return False


class _Eq(str):
    """An equation's LaTeX among a paragraph's pieces of text."""

