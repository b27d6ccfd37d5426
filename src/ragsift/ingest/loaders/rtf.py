"""RTF read in one pass (this package's own reader, linear in the file: the permissive readers on
PyPI run regular expressions that are quadratic on some inputs): paragraphs, headings (an outline
level, or a style named "heading N"), list items by level, tables (``\\cell``, ``\\row``) as
Markdown tables, footnotes in a "Notes" section, the ``\\info`` title; text in the code page of its
font (``\\fcharset``) or the document (``\\ansicpg``), Unicode escapes (``\\uN``) with their
fallbacks skipped; pictures, objects, fields' instructions, headers and footers left out.

An RTF body that wraps HTML (``\\fromhtml1``, what Outlook stores) is given back as that HTML,
read by the HTML reader. ``legacy`` reads .rtf with LibreOffice when it is installed, else here;
``msg`` reads an Outlook message's compressed RTF body here."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ragsift.ingest.loaders.base import MAX_LIST_LEVEL, Budget, Markdown
from ragsift.ingest.loaders.encoding import codec_name

TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+",
                   re.S)
#: groups whose text is not the document's (fonts, styles, pictures, fields' code, headers, ...)
SKIP = frozenset({
    "fonttbl", "colortbl", "stylesheet", "info", "pict", "object", "objdata", "header", "headerl", "headerr",
    "headerf", "footer", "footerl", "footerr", "footerf", "fldinst", "themedata", "colorschememapping",
    "datastore", "latentstyles", "listtable", "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "filetbl",
    "revtbl", "pntext", "pntxta", "pntxtb", "listtext", "bkmkstart", "bkmkend", "shpinst", "nonshppict",
    "mmathPr", "pgdsctbl", "private", "userprops", "docvar", "template", "wgrffmtfilter", "listpicture",
    "defchp", "defpap", "xmlopen", "xmlclose", "atnid", "atnauthor", "annotation", "fchars", "lchars",
    "blipuid", "factoidname", "passwordhash", "protusertbl", "tc", "xe", "sp", "sn", "sv"})
#: ignorable destinations (``{\*\name ...}``) whose text is read: footnotes, a title's Unicode form
STARRED = frozenset({"footnote", "ud", "upr"})
#: Windows character sets (``\\fcharset``) by their code page
CHARSETS = {0: "cp1252", 2: "cp1252", 77: "mac_roman", 128: "cp932", 129: "cp949", 130: "johab", 134: "gb18030",
            136: "cp950", 161: "cp1253", 162: "cp1254", 163: "cp1258", 177: "cp1255", 178: "cp1256", 186: "cp1257",
            204: "cp1251", 222: "cp874", 238: "cp1250", 254: "cp437"}
HEADING_STYLE = re.compile(r"^(?:heading|标题|überschrift|titre|título)\s*(\d)$", re.I)
TICK_EVERY = 4096  # tokens between checks of the budget


@dataclass
class _Group:
    skip: bool = False
    uc: int = 1
    font: str | None = None
    dest: str = ""  # the destination this group is: "fonttbl", "stylesheet", "title", "footnote", "htmltag"
    htmlrtf: bool = False  # RTF-only text of an RTF that wraps HTML


@dataclass
class _Doc:
    md: Markdown = field(default_factory=Markdown)
    para: list[str] = field(default_factory=list)
    cell_parts: list[str] = field(default_factory=list)
    row: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    note: list[str] | None = None
    title: list[str] = field(default_factory=list)
    html: list[str] = field(default_factory=list)
    heading: int | None = None
    list_level: int | None = None
    in_table: bool = False


class RTF:
    """What reading an RTF file gave: its Markdown (``md``), or the HTML it wraps (``html``), and its title."""

    def __init__(self, md: Markdown, html: str | None, title: str) -> None:
        self.md, self.html, self.title = md, html, title


#: control words that stand for a character
CHARACTERS = {"line": "\n", "tab": "\t", "emdash": "\u2014", "endash": "\u2013", "lquote": "\u2018",
              "rquote": "\u2019", "ldblquote": "\u201c", "rdblquote": "\u201d", "bullet": "\u2022"}


def read_rtf(data: bytes, budget: Budget | None = None) -> RTF:
    """Read ``data`` (RTF) in one pass; ``budget`` checked as it goes."""
    return _Reader(data, budget).read()


class _Reader:
    """One pass over an RTF file's tokens: the groups open, the code pages, fonts and styles read so
    far, and the document being written (``_Doc``). One method a kind of token: text, a brace, a
    control symbol, a control word (the font table's and style sheet's, the document's, a
    paragraph's)."""

    def __init__(self, data: bytes, budget: Budget | None) -> None:
        self.data, self.budget = data, budget
        self.doc = _Doc()
        self.stack: list[_Group] = []
        self.g = _Group()
        self.codepage = "cp1252"
        self.fonts: dict[str, str] = {}
        self.styles: dict[str, str] = {}
        self.font_def: str | None = None
        self.style_def: str | None = None
        self.style_name: list[str] = []
        self.para_style: str | None = None
        self.from_html = False
        self.pending = bytearray()  # bytes of the current code page not yet decoded
        self.skip_chars = 0  # fallback characters still to skip after a \uN
        self.starred = False  # the last token was ``\*``
        self.pos = 0

    def read(self) -> RTF:
        data, n, tokens = self.data, len(self.data), 0
        while self.pos < n:
            m = TOKEN.match(data, self.pos)
            if m is None:  # a lone backslash at the very end
                break
            self.pos = m.end()
            tokens += 1
            if self.budget is not None and tokens % TICK_EVERY == 0:
                self.budget.tick()
            word, arg, hexbyte, sym, brace, run = m.groups()
            if run is not None or hexbyte is not None:
                self.text(bytes.fromhex(hexbyte.decode()) if hexbyte is not None else run)
            elif brace is not None:
                self.brace(brace)
            elif sym is not None:
                self.symbol(sym)
            elif word is not None:  # else a line break of the file: not text
                self.word(word.decode("ascii"), arg)
        return self.end()

    def end(self) -> RTF:
        doc = self.doc
        self.flush()
        _par(doc, self.from_html, self.g)
        _table(doc)
        if doc.notes:
            doc.md.heading(1, "Notes")
            for note in doc.notes:
                doc.md.para(note)
        title = " ".join("".join(doc.title).split())
        if self.from_html:
            return RTF(doc.md, _pairs("".join(doc.html)), title)
        return RTF(doc.md, None, title)

    def flush(self) -> None:
        if self.pending:
            g = self.g
            enc = self.fonts.get(g.font or "", self.codepage) if g.font is not None else self.codepage
            self.emit(self.pending.decode(enc, errors="replace"))
            self.pending.clear()

    def emit(self, text: str) -> None:
        g, doc = self.g, self.doc
        if g.dest == "title":
            doc.title.append(text)
        elif g.dest == "stylesheet":
            self.style_name.append(text)
        elif g.skip or g.htmlrtf:
            return
        elif self.from_html:
            doc.html.append(text)
        elif doc.note is not None and g.dest == "footnote":
            doc.note.append(text)
        else:
            doc.para.append(text)

    def text(self, raw: bytes) -> None:
        if self.skip_chars:
            take = min(self.skip_chars, len(raw))
            self.skip_chars -= take
            raw = raw[take:]
        g = self.g
        if g.dest == "fonttbl" or g.dest == "stylesheet" and raw.endswith(b";"):
            if g.dest == "stylesheet":
                self.pending += raw[:-1]
                self.flush()
                if self.style_def is not None:
                    self.styles[self.style_def] = "".join(self.style_name).strip()
                self.style_name.clear()
            return
        self.pending += raw

    def brace(self, brace: bytes) -> None:
        self.flush()
        self.skip_chars, self.starred = 0, False
        g, doc = self.g, self.doc
        if brace == b"{":
            self.stack.append(g)
            self.g = _Group(g.skip, g.uc, g.font, g.dest if g.dest in ("fonttbl", "stylesheet", "footnote") else "",
                            g.htmlrtf)
            return
        if g.dest == "footnote" and (not self.stack or self.stack[-1].dest != "footnote") and doc.note is not None:
            text = " ".join("".join(doc.note).split())
            if text:
                doc.notes.append(text)
            doc.note = None
        self.g = self.stack.pop() if self.stack else _Group()

    def symbol(self, sym: bytes) -> None:
        s = sym.decode("latin-1")
        if s == "*":  # an ignorable destination: skipped unless one of those read (``STARRED``)
            self.starred = True
        elif s in "\\{}":
            self.pending += sym
        elif s in ("\n", "\r"):
            self.flush()
            _par(self.doc, self.from_html, self.g)
        elif s == "~":
            self.pending += b" "
        elif s == "_":
            self.pending += b"-"

    def word(self, w: str, arg: bytes | None) -> None:
        g = self.g
        if self.starred:
            self.starred = False
            if w not in STARRED and not (self.from_html and w == "htmltag"):
                g.skip = True
                return
        if self.skip_chars and w not in ("u",):
            self.skip_chars = 0
        if w == "bin":  # binary data of the given length: skipped
            self.pos += max(0, min(int(arg or 0), len(self.data) - self.pos))
            return
        self.flush()
        if self.from_html and w == "htmltag":
            g.skip, g.dest = (self.stack[-1].skip if self.stack else False), "htmltag"
        elif g.dest == "fonttbl":
            self.font_word(w, arg)
        elif g.dest == "stylesheet":
            if w in ("s", "cs", "ds", "ts"):
                self.style_def = (arg or b"0").decode() if w == "s" else None
        elif w == "fonttbl" or w == "stylesheet":
            g.dest, g.skip = w, True
        elif w in SKIP or (g.skip and w != "title" and g.dest != "title"):
            g.skip = True
        else:
            if not self.document_word(w, arg):
                self.paragraph_word(w, arg)
            if self.budget is not None and len(self.doc.para) > 10_000:
                self.budget.tick()

    def font_word(self, w: str, arg: bytes | None) -> None:
        """A control word of the font table: a font's number, character set or code page."""
        if w == "f":
            self.font_def = (arg or b"0").decode()
        elif w == "fcharset" and self.font_def is not None:
            self.fonts[self.font_def] = CHARSETS.get(int(arg or 0), self.codepage)
        elif w == "cpg" and self.font_def is not None:
            self.fonts[self.font_def] = codec_name(f"cp{int(arg or 0)}") or self.fonts.get(self.font_def,
                                                                                            self.codepage)

    def document_word(self, w: str, arg: bytes | None) -> bool:
        """A control word of the document or its text (code pages, Unicode, fonts, footnotes,
        characters); False when it is none of those."""
        g, doc = self.g, self.doc
        if w == "title":  # the last one read is kept: {\upr{\title ANSI}{\*\ud{\title Unicode}}}
            g.dest, g.skip = "title", True
            doc.title = []
        elif w == "ansicpg":
            self.codepage = codec_name(f"cp{int(arg or 1252)}") or self.codepage
        elif w == "fromhtml":
            self.from_html = True
        elif w == "htmlrtf":
            g.htmlrtf = arg != b"0"
        elif w == "uc":
            g.uc = max(0, min(int(arg or 1), 8))
        elif w == "u":
            c = int(arg or 0)
            self.emit(chr(c + 65536 if c < 0 else c) if -32768 <= c <= 0x10FFFF else "\ufffd")
            self.skip_chars = g.uc
        elif w == "f":
            g.font = (arg or b"0").decode()
        elif w == "footnote":
            g.dest = "footnote"
            doc.note = []
        elif w in ("par", "sect", "page"):
            _par(doc, self.from_html, g)
        elif w in CHARACTERS:
            self.emit(CHARACTERS[w])
        else:
            return False
        return True

    def paragraph_word(self, w: str, arg: bytes | None) -> None:
        """A control word of a paragraph's properties (headings, lists, tables) or of a table's cells and rows."""
        doc = self.doc
        if w == "pard":
            doc.heading, doc.list_level, doc.in_table, self.para_style = None, None, False, None
        elif w == "outlinelevel":
            level = int(arg or 0)
            doc.heading = level + 1 if 0 <= level < 6 else None
        elif w == "s":
            self.para_style = (arg or b"0").decode()
            hm = HEADING_STYLE.match(self.styles.get(self.para_style, ""))
            if hm:
                doc.heading = max(1, min(6, int(hm.group(1))))
            elif self.styles.get(self.para_style, "").lower() == "title":
                doc.heading = 1
        elif w in ("ls", "ilvl"):
            level = int(arg or 0) if w == "ilvl" else (doc.list_level or 0)
            doc.list_level = max(0, min(MAX_LIST_LEVEL, level))
        elif w == "intbl":
            doc.in_table = True
        elif w in ("cell", "nestcell"):
            doc.cell_parts.append(_para_text(doc))
            doc.row.append(" ".join(" ".join(doc.cell_parts).split()))
            doc.cell_parts = []
        elif w in ("row", "nestrow") and doc.row:
            doc.rows.append(doc.row)
            doc.row = []
        elif w in ("row", "nestrow"):
            doc.row = []


def _para_text(doc: _Doc) -> str:
    text = _pairs("".join(doc.para))
    doc.para = []
    return text


def _par(doc: _Doc, from_html: bool, g: _Group) -> None:
    """The end of a paragraph (``\\par``)."""
    if from_html:
        if not (g.skip or g.htmlrtf):
            doc.html.append("\n")
        return
    if doc.note is not None and g.dest == "footnote":
        doc.note.append(" ")
        return
    if doc.in_table:
        doc.cell_parts.append(_para_text(doc))
        return
    text = _para_text(doc)
    if not text.strip():
        return
    _table(doc)
    if doc.heading is not None:
        doc.md.heading(doc.heading, text)
    elif doc.list_level is not None:
        doc.md.item(text.lstrip("\u2022\u00b7-\t "), doc.list_level)
    else:
        doc.md.para(text)


def _table(doc: _Doc) -> None:
    """A table whose rows were read, written before what follows it."""
    if doc.rows:
        doc.md.table(doc.rows)
        doc.rows = []


def _pairs(text: str) -> str:
    """Surrogate pairs written as two ``\\uN`` joined into their character."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
