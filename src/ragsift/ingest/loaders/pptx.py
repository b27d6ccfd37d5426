"""PowerPoint decks (PPTX, PPTM: macros are never run), Transitional and Strict OOXML, read from
the package's XML (``ooxml.Package``): each slide a section headed by its title (or "Slide N"),
under the title of the last section-header slide where the deck has them (PowerPoint's "Section
Header" layout, as pandoc writes a heading above its slide level); then every shape with text in
reading order (top to bottom, left to right, by where it is on the slide, a placeholder where its
layout puts it), groups opened at any depth (``MAX_GROUP_DEPTH``) with their own coordinates: text
frames as paragraphs and list items by indent level (numbered where PowerPoint numbers them; a bold
line of its own a heading under the slide's), tables as Markdown tables (a cell merged with the one
above repeats its text), charts as their kind, title and data (``ooxml.chart``), SmartArt as its
nodes' text, equations as LaTeX; the speaker notes and the comments (with their authors) after
them; a slide mark where each slide starts, so every parent keeps its slide number. The deck's
title: its core property, else the first slide's title."""
from __future__ import annotations

from typing import Any

import ragsift.ingest.loaders.ooxml as ooxml
from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, register, skipped, structured
from ragsift.ingest.loaders.sniff import Zip

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
A, C, R, MC = ooxml.A, ooxml.C, ooxml.R, ooxml.MC
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
P188 = "{http://schemas.microsoft.com/office/powerpoint/2018/8/main}"  # modern (threaded) comments
MAX_GROUP_DEPTH = 32  # groups in groups: deeper shapes are left out
MAX_COLUMNS = 256
TITLES = ("title", "ctrTitle")
ENDS = (".", "。", "!", "！", "?", "？", ":", "：")

#: a placement's affine map from a group's child coordinates to the slide's: x' = ax * x + bx, y' = ay * y + by
Place = tuple[float, float, float, float]
IDENTITY: Place = (1.0, 0.0, 1.0, 0.0)


@register(".pptx", ".pptm", signature=Zip("PowerPoint deck", "ppt/"))
def load_pptx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    budget = Budget(limits, packed_bytes=len(data))
    pkg = ooxml.Package(data, budget, "PPTX")
    part = pkg.main("ppt/presentation.xml")
    pres = pkg.xml(part)
    if pres is None or pres.tag != P + "presentation":
        return skipped(source, "damaged PowerPoint deck: it has no presentation part")
    deck = _Deck(pkg, budget, part)
    slides = [t for t in (pkg.target(part, s.get(R + "id")) for s in pres.iter(P + "sldId")) if t]
    md = Markdown()
    first_title = ""
    in_section = False  # after a section-header slide, slide titles are headings under its title
    for n, slide in enumerate(slides, 1):
        budget.page()
        md.mark("slide", n)
        title = deck.slide(slide, md, n, in_section)
        first_title = first_title or title
        layout = deck.layout_name(slide).lower()
        section = "section" in layout
        in_section = section or (in_section and n > 1 and "title slide" not in layout)
    return structured(source, pkg.title() or first_title, md, data, "pptx", {"slide_count": len(slides)})


class _Deck:
    def __init__(self, pkg: ooxml.Package, budget: Budget, part: str) -> None:
        self.pkg, self.budget, self.part = pkg, budget, part
        self._layouts: dict[str, tuple[str, dict[tuple[str, str], tuple[float, float]]]] = {}
        self._authors: dict[str, str] | None = None

    def layout_name(self, slide: str) -> str:
        return self._layout(slide)[0]

    def _layout(self, slide: str) -> tuple[str, dict[tuple[str, str], tuple[float, float]]]:
        """The slide's layout: its name, and where its placeholders (and its master's) are."""
        found = self.pkg.related(slide, "slideLayout")
        if not found:
            return "", {}
        part = found[0]
        if part not in self._layouts:
            root = self.pkg.optional(part)
            csld = root.find(P + "cSld") if root is not None else None
            name = (csld.get("name") or "") if csld is not None else ""
            places: dict[tuple[str, str], tuple[float, float]] = {}
            for p in [part] + self.pkg.related(part, "slideMaster")[:1]:
                r = root if p == part else self.pkg.optional(p)
                for sp in r.iter(P + "sp") if r is not None else ():
                    ph, xy = _ph(sp), _offset(sp.find(P + "spPr"))
                    if ph is not None and xy is not None:
                        places.setdefault(("idx", ph.get("idx") or "0"), xy)
                        places.setdefault(("type", ph.get("type") or "obj"), xy)
            self._layouts[part] = (name, places)
        return self._layouts[part]

    # ---------------------------------------------------------------- a slide
    def slide(self, part: str, md: Markdown, n: int, in_section: bool) -> str:
        root = self.pkg.optional(part)  # a damaged slide: its heading and mark, the other slides read
        tree = root.find(f"{P}cSld/{P}spTree") if root is not None else None
        shapes: list[tuple[float, float, int, Any]] = []
        if tree is not None:
            self._collect(tree, IDENTITY, 0, shapes, self._layout(part)[1])
        shapes.sort(key=lambda s: (s[0], s[1], s[2]))
        title_el = next((el for _, _, _, el in shapes if el.tag == P + "sp" and _ph_type(el) in TITLES), None)
        title = " ".join(" ".join(ooxml.drawing_text(title_el)).split()) if title_el is not None else ""
        section = "section" in self.layout_name(part).lower()
        level = 2 if in_section and not section else 1
        md.heading(level, title or f"Slide {n}")
        for _, _, _, el in shapes:
            self.budget.tick()
            if el is title_el:
                continue
            if el.tag == P + "sp":
                self._frame(md, el, level + 1)
            else:
                self._graphic(md, el, part)
        self._notes(md, part)
        self._comments(md, part)
        return title

    def _collect(self, tree: Any, place: Place, depth: int, out: list, places: dict) -> None:
        """The shapes under ``tree`` with their place on the slide, groups opened."""
        for el in tree:
            tag = el.tag
            if tag == P + "sp":
                xy = _offset(el.find(P + "spPr"))
                if xy is None:
                    ph = _ph(el)
                    xy = None if ph is None else places.get(("idx", ph.get("idx") or "0")) or places.get(
                        ("type", ph.get("type") or "obj"))
                x, y = xy or (0.0, 0.0)
                out.append((place[2] * y + place[3], place[0] * x + place[1], len(out), el))
            elif tag == P + "graphicFrame":
                x, y = _offset(el) or (0.0, 0.0)
                out.append((place[2] * y + place[3], place[0] * x + place[1], len(out), el))
            elif tag == P + "grpSp" and depth < MAX_GROUP_DEPTH:
                self._collect(el, _compose(place, el.find(P + "grpSpPr")), depth + 1, out, places)
            elif tag == MC + "AlternateContent":
                for branch in ooxml.choose(el):
                    got: list = []
                    self._collect(branch, place, depth + 1, got, places)
                    if got:
                        out += [(y, x, len(out) + i, e) for i, (y, x, _, e) in enumerate(got)]
                        break

    # ---------------------------------------------------------------- text frames
    def _frame(self, md: Markdown, sp: Any, heading_level: int) -> None:
        body = sp.find(P + "txBody")
        if body is None:
            return
        ph = _ph(sp)
        bulleted = ph is not None and (ph.get("type") or "obj") in ("obj", "body")  # bullets from the master
        paras = []
        for p in body.iter(A + "p"):
            text = ooxml.paragraph_text(p).strip()
            if not text:
                continue
            pr = p.find(A + "pPr")
            lvl = _int(pr.get("lvl") if pr is not None else None, 0, 8)
            bullet = "inherit"
            if pr is not None:
                if pr.find(A + "buNone") is not None:
                    bullet = "none"
                elif pr.find(A + "buAutoNum") is not None:
                    bullet = "number"
                elif pr.find(A + "buChar") is not None or pr.find(A + "buBlip") is not None:
                    bullet = "char"
            paras.append((lvl, text, _bold(p), bullet, pr))
        if not paras:
            return
        self.budget.text(sum(len(t) for _, t, _, _, _ in paras))
        if len(paras) == 1 and paras[0][0] == 0 and paras[0][3] in ("inherit", "none"):
            md.para(paras[0][1])
            return
        counters: dict[int, int] = {}
        for lvl, text, bold, bullet, pr in paras:
            listed = bullet in ("number", "char") or (bullet == "inherit" and bulleted)
            if bullet != "number":
                counters.pop(lvl, None)
            if bold and lvl == 0 and bullet != "number" and len(text) <= 90 and not text.endswith(ENDS):
                md.heading(heading_level, text)  # a heading inside the slide: bold, on its own
            elif bullet == "number":
                auto = pr.find(A + "buAutoNum")
                counters[lvl] = counters.get(lvl, _int(auto.get("startAt"), 1, 1 << 30) - 1) + 1
                for deeper in [k for k in counters if k > lvl]:
                    counters.pop(deeper)
                md.item(text, lvl, counters[lvl])
            elif listed:
                md.item(text, lvl)
            else:
                md.para(text)

    # ---------------------------------------------------------------- tables, charts, SmartArt
    def _graphic(self, md: Markdown, frame: Any, part: str) -> None:
        data = frame.find(f"{A}graphic/{A}graphicData")
        if data is None:
            return
        for el in data:
            if el.tag == A + "tbl":
                rows = _table(el)
                self.budget.text(sum(len(c) for r in rows for c in r))
                md.table(rows)
            elif el.tag == C + "chart":
                target = self.pkg.target(part, el.get(R + "id"))
                root = self.pkg.optional(target) if target else None
                if root is not None:
                    lines, rows = ooxml.chart(root)
                    for line in lines:
                        md.para(line)
                    self.budget.text(sum(len(c) for r in rows for c in r))
                    md.table(rows)
            elif el.tag == DGM + "relIds":
                target = self.pkg.target(part, el.get(R + "dm"))
                root = self.pkg.optional(target) if target else None
                for t in ooxml.drawing_text(root) if root is not None else ():
                    self.budget.text(len(t))
                    md.item(t)

    def _notes(self, md: Markdown, part: str) -> None:
        for notes in self.pkg.related(part, "notesSlide")[:1]:
            root = self.pkg.optional(notes)
            texts = []
            for sp in root.iter(P + "sp") if root is not None else ():
                if _ph_type(sp) == "body":
                    texts += ooxml.drawing_text(sp)
            text = "\n".join(t.strip() for t in texts if t.strip())
            if text:
                self.budget.text(len(text))
                md.para(f"Speaker notes: {text}")


    def _comments(self, md: Markdown, part: str) -> None:
        """The slide's comments with their authors (PowerPoint's comments and their replies, and
        the older kind)."""
        for target in self.pkg.related(part, "comments"):
            root = self.pkg.optional(target)
            for cm in root.iter(P + "cm", P188 + "cm", P188 + "reply") if root is not None else ():
                text = (cm.findtext(P + "text") or "") if cm.tag == P + "cm" else "\n".join(
                    ooxml.drawing_text(cm.find(P188 + "txBody")) if cm.find(P188 + "txBody") is not None else [])
                text = " ".join(text.split())
                if text:
                    who = self.authors().get(cm.get("authorId") or "", "")
                    self.budget.text(len(text))
                    md.para(f"Comment{f' ({who})' if who else ''}: {text}")

    def authors(self) -> dict[str, str]:
        if self._authors is None:
            self._authors = {}
            for kind in ("commentAuthors", "authors"):
                for target in self.pkg.related(self.part, kind):
                    root = self.pkg.optional(target)
                    for a in root.iter(P + "cmAuthor", P188 + "author") if root is not None else ():
                        self._authors[a.get("id") or ""] = a.get("name") or ""
        return self._authors


def _table(tbl: Any) -> list[list[str]]:
    """A table's rows, in one pass: a cell spanned from its left empty, one spanned from above
    repeating its text (at most ``MAX_COLUMNS`` cells a row)."""
    rows: list[list[str]] = []
    above: dict[int, str] = {}
    for tr in tbl:
        if tr.tag != A + "tr":
            continue
        row: list[str] = []
        for tc in tr:
            if tc.tag != A + "tc":
                continue
            if len(row) >= MAX_COLUMNS:
                break
            col = len(row)
            if tc.get("vMerge") in ("1", "true"):
                text = above.get(col, "")
            elif tc.get("hMerge") in ("1", "true"):
                text = ""
            else:
                body = tc.find(A + "txBody")
                text = "\n".join(ooxml.drawing_text(body)) if body is not None else ""
                if _int(tc.get("rowSpan"), 1, 1 << 30) > 1:
                    above[col] = text
            row.append(text)
        rows.append(row)
    return rows


def _ph(sp: Any) -> Any:
    nv = sp.find(P + "nvSpPr")
    nvpr = nv.find(P + "nvPr") if nv is not None else None
    return nvpr.find(P + "ph") if nvpr is not None else None


def _ph_type(sp: Any) -> str | None:
    ph = _ph(sp)
    return None if ph is None else ph.get("type") or "obj"


def _offset(pr: Any) -> tuple[float, float] | None:
    """Where a shape's properties (or a graphic frame) put it: its offset (x, y)."""
    if pr is None:
        return None
    xfrm = pr.find(A + "xfrm")
    if xfrm is None:
        xfrm = pr.find(P + "xfrm")
    off = xfrm.find(A + "off") if xfrm is not None else None
    if off is None:
        return None
    return float(_int(off.get("x"), 0, 1 << 40)), float(_int(off.get("y"), 0, 1 << 40))


def _compose(place: Place, pr: Any) -> Place:
    """The placement of a group's children: its child coordinates mapped to its place, then to the slide."""
    xfrm = pr.find(A + "xfrm") if pr is not None else None
    if xfrm is None:
        return place

    def pair(tag: str, a: str, b: str) -> tuple[float, float]:
        el = xfrm.find(A + tag)
        return (0.0, 0.0) if el is None else (float(_int(el.get(a), 0, 1 << 40)), float(_int(el.get(b), 0, 1 << 40)))

    (ox, oy), (cx, cy) = pair("off", "x", "y"), pair("ext", "cx", "cy")
    (chx, chy), (chcx, chcy) = pair("chOff", "x", "y"), pair("chExt", "cx", "cy")
    sx = cx / chcx if chcx else 1.0
    sy = cy / chcy if chcy else 1.0
    ax, bx, ay, by = place  # the group's own map, then the parent's
    return ax * sx, ax * (ox - chx * sx) + bx, ay * sy, ay * (oy - chy * sy) + by


def _bold(p: Any) -> bool:
    runs = [r for r in p.iter(A + "r") if (r.findtext(A + "t") or "").strip()]
    if not runs:
        return False
    return all((r.find(A + "rPr") is not None and r.find(A + "rPr").get("b") in ("1", "true")) for r in runs)


def _int(v: str | None, default: int, most: int) -> int:
    try:
        return max(-most, min(most, int(v))) if v is not None else default
    except ValueError:
        return default
