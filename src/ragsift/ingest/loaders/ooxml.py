"""What Word, PowerPoint and Excel files (Office Open XML) share: the package (a ZIP of XML parts
joined by relationships), read within the file's limits, in either dialect (Transitional, and
Strict ISO 29500, whose namespaces are read as Transitional's); charts (DrawingML ``c:chartSpace``:
title, axis titles, categories and series values as a table); DrawingML text (``a:p``).

Every part is parsed by lxml without entities or DTDs (a part that declares a DTD is refused),
counted as work before it is unpacked (``Budget.unpacked``), at most ``MAX_PART_BYTES`` (an empty
Word table compresses 300 to 1, so no ratio is asked; the reading process's memory limit holds
the rest). A part beside the main one (styles, notes, charts, comments) that is damaged is left
out and the rest read (``Package.optional``). Counts read from a file are bounded before anything is allocated from
them: a chart's series (``MAX_SERIES``) and points (``MAX_POINTS``), which are also read in one pass.
"""
from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Callable
from typing import Any

from ragsift.ingest.loaders.base import Budget, OverLimit

MAX_PART_BYTES = 256 << 20  # one part unpacked (what it declares, which zipfile holds it to)
MAX_SERIES = 64  # a chart's series read (the rest left out)
MAX_POINTS = 2000  # points of a chart's series read (the rest left out)

#: Strict OOXML's namespaces (ISO/IEC 29500 Strict, "purl.oclc.org") -> Transitional's, rewritten in
#: a part's bytes before it is parsed, so one reader reads both. The relationship namespace is a
#: prefix of Strict's relationship types too (``.../relationships/officeDocument``).
STRICT = [(f"http://purl.oclc.org/ooxml/{s}".encode(), f"http://schemas.openxmlformats.org/{t}".encode()) for s, t in (
    ("wordprocessingml/main", "wordprocessingml/2006/main"),
    ("officeDocument/relationships", "officeDocument/2006/relationships"),
    ("officeDocument/math", "officeDocument/2006/math"),
    ("officeDocument/sharedTypes", "officeDocument/2006/sharedTypes"),
    ("officeDocument/extendedProperties", "officeDocument/2006/extended-properties"),
    ("drawingml/main", "drawingml/2006/main"),
    ("drawingml/wordprocessingDrawing", "drawingml/2006/wordprocessingDrawing"),
    ("drawingml/spreadsheetDrawing", "drawingml/2006/spreadsheetDrawing"),
    ("drawingml/chart", "drawingml/2006/chart"),
    ("drawingml/picture", "drawingml/2006/picture"),
    ("drawingml/diagram", "drawingml/2006/diagram"),
    ("presentationml/main", "presentationml/2006/main"),
    ("spreadsheetml/main", "spreadsheetml/2006/main"),
)]

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
DC_TITLE = "{http://purl.org/dc/elements/1.1/}title"


class Package:
    """An OOXML file's parts, each read (and parsed) once within the file's limits."""

    def __init__(self, data: bytes, budget: Budget, kind: str) -> None:
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        self.names = {i.filename: i for i in self.zip.infolist()}
        self.budget, self.kind = budget, kind
        self._rels: dict[str, dict[str, tuple[str, str, bool]]] = {}
        self.strict = False

    def has(self, name: str) -> bool:
        return name in self.names

    def read(self, name: str) -> bytes | None:
        """A part's bytes (None when the package has no such part)."""
        info = self.names.get(name)
        if info is None:
            return None
        if info.file_size > MAX_PART_BYTES:
            raise OverLimit(f"part {name} would unpack to {info.file_size} bytes (more than {MAX_PART_BYTES}: "
                            "a decompression bomb?)")
        self.budget.unpacked(info.file_size)
        self.budget.tick()
        return self.zip.read(info)

    def xml(self, name: str) -> Any:
        """A part parsed (its Strict namespaces read as Transitional's), or None when missing."""
        data = self.read(name)
        return None if data is None else self.parse(data, name)

    def transitional(self, main: str) -> bytes | None:
        """The package with its Strict namespaces rewritten as Transitional's, for a reader that
        knows only those (openpyxl); None when its main part is not Strict. Parts are stored
        unpacked (no time spent packing them again), each read within the limits."""
        head = self.read(main)
        if head is None or b"purl.oclc.org/ooxml/" not in head:
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            for name in self.names:
                data = self.read(name) or b""
                if name.endswith((".xml", ".rels")):
                    for strict, transitional in STRICT:
                        data = data.replace(strict, transitional)
                z.writestr(name, data)
        return out.getvalue()

    def optional(self, name: str) -> Any:
        """A part beside the main one (styles, notes, a chart, comments) parsed, or None when it is
        missing or damaged: what it adds is left out, the rest is read. Limits still stop the file."""
        try:
            return self.xml(name)
        except (OverLimit, MemoryError):
            raise
        except Exception:  # a damaged part (bad XML, a bad CRC, a DTD): left out
            return None

    def parse(self, data: bytes, name: str) -> Any:
        from lxml import etree

        if b"purl.oclc.org/ooxml/" in data:
            self.strict = True
            for strict, transitional in STRICT:
                data = data.replace(strict, transitional)
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                                 remove_pis=True)
        root = etree.fromstring(data, parser=parser)
        if root.getroottree().docinfo.internalDTD is not None:
            raise ValueError(f"{name} declares a DTD (entities), which an Office file never does; not read")
        return root

    def rels(self, part: str) -> dict[str, tuple[str, str, bool]]:
        """A part's relationships: id -> (type's last segment, target part or URL, external)."""
        if part in self._rels:
            return self._rels[part]
        folder, base = posixpath.split(part)
        root = self.optional(posixpath.join(folder, "_rels", base + ".rels"))
        out: dict[str, tuple[str, str, bool]] = {}
        for rel in root if root is not None else ():
            if rel.tag != PR + "Relationship":
                continue
            target = rel.get("Target") or ""
            external = rel.get("TargetMode") == "External"
            if not external:
                target = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
                    posixpath.join(folder, target))
            out[rel.get("Id") or ""] = ((rel.get("Type") or "").rsplit("/", 1)[-1], target, external)
        self._rels[part] = out
        return out

    def related(self, part: str, kind: str) -> list[str]:
        """The parts ``part`` relates to by relationships of ``kind`` (a type's last segment)."""
        return [t for k, t, ext in self.rels(part).values() if k == kind and not ext and t in self.names]

    def target(self, part: str, rid: str | None) -> str | None:
        """The part a relationship id of ``part`` points at (None when external or missing)."""
        kind_target = self.rels(part).get(rid or "")
        if kind_target is None or kind_target[2] or kind_target[1] not in self.names:
            return None
        return kind_target[1]

    def main(self, default: str) -> str:
        """The package's main part (the officeDocument relationship), else ``default``."""
        found = self.related("", "officeDocument")
        return found[0] if found else default

    def title(self) -> str:
        """The document's title property (docProps/core.xml), or ''."""
        for part in self.related("", "core-properties") or ["docProps/core.xml"]:
            root = self.optional(part)  # a damaged core part: the title comes from the text
            if root is not None:
                return " ".join((root.findtext(DC_TITLE) or "").split())
        return ""


def choose(alternate: Any) -> list[Any]:
    """The branches of an ``mc:AlternateContent`` in the order to try them: its choices, then
    its fallback. A reader takes the first that gives text, and never two (they hold the same)."""
    return [b for b in alternate if b.tag in (MC + "Choice", MC + "Fallback")]


def drawing_text(el: Any) -> list[str]:
    """The paragraphs of DrawingML text under ``el`` (``a:p``) that hold any text."""
    return [t for t in (paragraph_text(p) for p in el.iter(A + "p")) if t.strip()]


def paragraph_text(p: Any) -> str:
    """A DrawingML paragraph's text: its runs, fields and breaks, its equations (``a14:m``, OMML)
    as LaTeX between ``$``; of an ``mc:AlternateContent``, the first branch with text."""
    parts = []
    for r in p:
        tag = r.tag
        if tag in (A + "r", A + "fld"):
            parts.append(r.findtext(A + "t") or "")
        elif tag == A + "br":
            parts.append("\n")
        elif tag == MC + "AlternateContent":
            for branch in choose(r):
                eqs = [omml(m) for m in branch.iter(M + "oMath")]
                text = " ".join(f"${e}$" for e in eqs if e) if eqs else "".join(
                    t.text or "" for t in branch.iter(A + "t"))
                if text.strip():
                    parts.append(text)
                    break
    return "".join(parts)


CHART_KINDS = {"bar": "Bar", "line": "Line", "pie": "Pie", "doughnut": "Doughnut", "ofPie": "Pie", "area": "Area",
               "scatter": "Scatter", "bubble": "Bubble", "radar": "Radar", "stock": "Stock", "surface": "Surface"}


def chart(root: Any) -> tuple[list[str], list[list[str]]]:
    """A chart (``c:chartSpace``) as lines of text (its kind and title, its axes' titles) and a
    table: a header row (the category axis' title, then each series' name) and a row per category
    with each series' value. Series and points beyond ``MAX_SERIES`` and ``MAX_POINTS`` left out."""
    ch = root.find(C + "chart") if root.tag == C + "chartSpace" else root
    if ch is None:
        return [], []
    title = _title(ch.find(C + "title"))
    plot = ch.find(C + "plotArea")
    kind = ""
    series: list[tuple[str, dict[int, str], dict[int, str]]] = []
    axes: list[str] = []
    for group in plot if plot is not None else ():
        tag = group.tag[len(C):] if isinstance(group.tag, str) and group.tag.startswith(C) else ""
        if tag.endswith("Chart"):
            kind = kind or CHART_KINDS.get(tag[:-len("Chart")].replace("3D", ""), "")
            for ser in group.iter(C + "ser"):
                if len(series) >= MAX_SERIES:
                    break
                name = " ".join(_cached(ser.find(C + "tx")).get(0, "").split())
                cats = _cached(ser.find(C + "cat")) or _cached(ser.find(C + "xVal"))
                vals = _cached(ser.find(C + "val")) or _cached(ser.find(C + "yVal"))
                series.append((name or f"Series {len(series) + 1}", cats, vals))
        elif tag.endswith("Ax"):
            t = _title(group.find(C + "title"))
            if t:
                axes.append(t)
    lines = [f"{kind + ' chart' if kind else 'Chart'}{': ' + title if title else ''}"]
    if axes:
        lines.append("Axes: " + "; ".join(axes))
    if not series:
        return lines, []
    cats = next((c for _, c, _ in series if c), {})
    idx = sorted(set(cats) | {i for _, _, v in series for i in v})[:MAX_POINTS]
    rows = [[""] + [name for name, _, _ in series]]
    for i in idx:
        rows.append([cats.get(i, str(i + 1))] + [v.get(i, "") for _, _, v in series])
    return lines, rows


def _title(t: Any) -> str:
    if t is None:
        return ""
    text = " ".join(drawing_text(t)) or " ".join(_cached(t.find(C + "tx")).values())
    return " ".join(text.split())


def _cached(el: Any) -> dict[int, str]:
    """The values a chart caches for a reference or literal (``c:pt`` by ``idx``), in one pass;
    at most ``MAX_POINTS`` of them, numbers written shortest."""
    out: dict[int, str] = {}
    if el is None:
        return out
    direct = el.find(C + "v")
    if direct is not None:
        return {0: direct.text or ""}
    for pt in el.iter(C + "pt"):
        if len(out) >= MAX_POINTS:
            break
        try:
            i = int(pt.get("idx") or "")
        except ValueError:
            continue
        if i < 0 or i in out:  # a multi-level category's outer levels: the innermost is kept
            continue
        out[i] = _number(pt.findtext(C + "v") or "")
    return out


def _number(v: str) -> str:
    try:
        f = float(v)
    except ValueError:
        return v.strip()
    if f != f or f in (float("inf"), float("-inf")):
        return v.strip()
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else f"{f:.15g}"


# ------------------------------------------------------------------ equations (OMML) as LaTeX
M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MAX_MATH_DEPTH = 48  # an equation nested deeper is read as its text
NARY = {"∑": "\\sum", "∏": "\\prod", "∐": "\\coprod", "∫": "\\int", "∬": "\\iint", "∭": "\\iiint", "∮": "\\oint",
        "∯": "\\oiint", "∰": "\\oiiint", "⋃": "\\bigcup", "⋂": "\\bigcap", "⋁": "\\bigvee", "⋀": "\\bigwedge"}
ACCENTS = {"\u0302": "\\hat", "\u0303": "\\tilde", "\u0304": "\\bar", "\u0305": "\\overline", "\u0307": "\\dot",
           "\u0308": "\\ddot", "\u20d7": "\\vec", "\u0301": "\\acute", "\u0300": "\\grave", "\u030c": "\\check",
           "\u0306": "\\breve"}
FUNCTIONS = {"sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth", "arcsin", "arccos", "arctan",
             "log", "ln", "lg", "exp", "lim", "max", "min", "sup", "inf", "det", "dim", "ker", "deg", "gcd", "arg",
             "Pr", "liminf", "limsup"}
DELIMITERS = {"{": "\\{", "}": "\\}", "〈": "\\langle", "〉": "\\rangle", "⌊": "\\lfloor", "⌋": "\\rfloor",
              "⌈": "\\lceil", "⌉": "\\rceil", "‖": "\\|"}


def omml(el: Any) -> str:
    """An equation (``m:oMath``) as LaTeX, in one pass over its elements: fractions, scripts,
    radicals, n-ary operators, delimiters, functions, accents, bars, arrays and matrices; its
    text runs as they are (Unicode symbols kept)."""
    return " ".join(_math(el, 0).split())


def _math(el: Any, depth: int) -> str:
    if depth > MAX_MATH_DEPTH:
        return "".join(t.text or "" for t in el.iter(M + "t", W + "t"))
    parts = []
    for c in el:
        tag = c.tag
        if not isinstance(tag, str) or tag.endswith("Pr"):  # properties (m:rPr, m:fPr, w:rPr ...)
            continue
        parts.append(_math_el(c, tag, depth + 1))
    return "".join(parts)


def _arg(el: Any, name: str, depth: int) -> str:
    sub = el.find(M + name)
    return "" if sub is None else _math(sub, depth)


def _val(el: Any, prop: str, name: str, default: str | None = None) -> str | None:
    pr = el.find(M + prop)
    v = pr.find(M + name) if pr is not None else None
    if v is None:
        return default
    return v.get(M + "val", default if default is not None else "")


def _g(s: str) -> str:
    return "{" + s + "}"


def _math_el(c: Any, tag: str, d: int) -> str:
    """One element of an equation as LaTeX: a run's text, or the element's own case (``MATH``);
    any other (e, num, den, box, borderBox, oMath ...) is its content."""
    name = tag[len(M):] if tag.startswith(M) else ""
    if name == "r" or tag == W + "r":
        return "".join(t.text or "" for t in c if t.tag in (M + "t", W + "t"))
    case = MATH.get(name)
    return case(c, name, d) if case is not None else _math(c, d)


def _on(v: str | None) -> bool:
    return v in ("1", "on", "true")


def _fraction(c: Any, name: str, d: int) -> str:
    num, den = _arg(c, "num", d), _arg(c, "den", d)
    kind = _val(c, "fPr", "type", "bar")
    if kind == "lin":
        return f"{num}/{den}"
    if kind == "noBar":
        return f"\\genfrac{{}}{{}}{{0pt}}{{}}{_g(num)}{_g(den)}"
    return f"\\frac{_g(num)}{_g(den)}"


def _script(c: Any, name: str, d: int) -> str:
    base = _arg(c, "e", d)
    base = _g(base) if len(base) > 1 else base
    sub = f"_{_g(_arg(c, 'sub', d))}" if name != "sSup" else ""
    sup = f"^{_g(_arg(c, 'sup', d))}" if name != "sSub" else ""
    return base + sub + sup


def _pre_script(c: Any, name: str, d: int) -> str:
    return f"{{}}_{_g(_arg(c, 'sub', d))}^{_g(_arg(c, 'sup', d))}{_arg(c, 'e', d)}"


def _radical(c: Any, name: str, d: int) -> str:
    deg = "" if _on(_val(c, "radPr", "degHide", "0")) else _arg(c, "deg", d)
    return f"\\sqrt[{deg}]{_g(_arg(c, 'e', d))}" if deg else f"\\sqrt{_g(_arg(c, 'e', d))}"


def _nary(c: Any, name: str, d: int) -> str:
    ch = _val(c, "naryPr", "chr", "∫") or "∫"
    op = NARY.get(ch, ch)
    sub = "" if _on(_val(c, "naryPr", "subHide", "0")) else _arg(c, "sub", d)
    sup = "" if _on(_val(c, "naryPr", "supHide", "0")) else _arg(c, "sup", d)
    return op + (f"_{_g(sub)}" if sub else "") + (f"^{_g(sup)}" if sup else "") + " " + _arg(c, "e", d)


def _delimited(c: Any, name: str, d: int) -> str:
    beg = _val(c, "dPr", "begChr", "(")
    end = _val(c, "dPr", "endChr", ")")
    sep = _val(c, "dPr", "sepChr", "|") or "|"
    inner = sep.join(_math(e, d) for e in c.findall(M + "e"))
    return f"\\left{DELIMITERS.get(beg or '', beg) or '.'}{inner}\\right{DELIMITERS.get(end or '', end) or '.'}"


def _function(c: Any, name: str, d: int) -> str:
    fname = _arg(c, "fName", d).strip()
    arg = _arg(c, "e", d)
    head = "\\" + fname if fname in FUNCTIONS else fname
    return f"{head}{arg}" if arg.startswith(("(", "\\left", "{")) else f"{head} {arg}"


def _accent(c: Any, name: str, d: int) -> str:
    ch = _val(c, "accPr", "chr", "\u0302") or "\u0302"
    return f"{ACCENTS.get(ch, '')}{_g(_arg(c, 'e', d))}" if ch in ACCENTS else _arg(c, "e", d) + ch


def _bar(c: Any, name: str, d: int) -> str:
    pos = _val(c, "barPr", "pos", "bot")
    return ("\\overline" if pos == "top" else "\\underline") + _g(_arg(c, "e", d))


def _group_char(c: Any, name: str, d: int) -> str:
    pos = _val(c, "groupChrPr", "pos", "bot")
    return ("\\overbrace" if pos == "top" else "\\underbrace") + _g(_arg(c, "e", d))


def _limit(c: Any, name: str, d: int) -> str:
    base, lim = _arg(c, "e", d).strip(), _arg(c, "lim", d)
    base = "\\" + base if base in FUNCTIONS else base
    return f"{base}{'_' if name == 'limLow' else '^'}{_g(lim)}"


def _equation_array(c: Any, name: str, d: int) -> str:
    rows = [_math(e, d) for e in c.findall(M + "e")]
    return rows[0] if len(rows) == 1 else "\\begin{array}{l}" + " \\\\ ".join(rows) + "\\end{array}"


def _matrix(c: Any, name: str, d: int) -> str:
    rows = [" & ".join(_math(e, d) for e in mr.findall(M + "e")) for mr in c.findall(M + "mr")]
    return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"


def _phantom(c: Any, name: str, d: int) -> str:
    return "" if _val(c, "phantPr", "show", "1") in ("0", "off", "false") else _arg(c, "e", d)


#: OMML elements by name: how each is written in LaTeX
MATH: dict[str, Callable[[Any, str, int], str]] = {
    "f": _fraction, "sSup": _script, "sSub": _script, "sSubSup": _script, "sPre": _pre_script, "rad": _radical,
    "nary": _nary, "d": _delimited, "func": _function, "acc": _accent, "bar": _bar, "groupChr": _group_char,
    "limLow": _limit, "limUpp": _limit, "eqArr": _equation_array, "m": _matrix, "phant": _phantom}
