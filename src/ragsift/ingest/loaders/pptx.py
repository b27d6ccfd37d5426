"""PowerPoint decks (PPTX, PPTM: macros are never run), with python-pptx (MIT): each slide a
section headed by its title (or "Slide N"), under the title of the last section-header slide
where the deck has them (PowerPoint's "Section Header" layout, as pandoc writes a heading above
its slide level); its text frames as paragraphs and list items by indent level (a bold line of
its own a heading under the slide's), its tables as Markdown tables, its speaker notes after
them; a slide mark where each slide starts, so every parent keeps its slide number. The deck's
title: its core property, else the first slide's title."""
from __future__ import annotations

import io
from typing import Any

from ragsift.ingest.loaders.base import Budget, LoadLimits, LoadResult, Markdown, register, structured


@register(".pptx", ".pptm")
def load_pptx(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from pptx import Presentation

    budget = Budget(limits, packed_bytes=len(data))
    deck = Presentation(io.BytesIO(data))
    md = Markdown()
    first_title = ""
    in_section = False  # after a section-header slide, slide titles are headings under its title
    for n, slide in enumerate(deck.slides, 1):
        budget.page()
        md.mark("slide", n)
        title_shape = slide.shapes.title
        title = (title_shape.text_frame.text if title_shape is not None and title_shape.has_text_frame else "").strip()
        first_title = first_title or title
        section = "section" in (slide.slide_layout.name or "").lower()
        in_section = section or (in_section and n > 1 and "title slide" not in (slide.slide_layout.name or "").lower())
        level = 2 if in_section and not section else 1
        md.heading(level, title or f"Slide {n}")
        title_id = title_shape.shape_id if title_shape is not None else None
        for shape in _shapes(slide.shapes):
            if title_id is not None and shape.shape_id == title_id:
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = [[c.text for c in row.cells] for row in shape.table.rows]
                budget.text(sum(len(c) for r in rows for c in r))
                md.table(rows)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                _frame(md, shape.text_frame, budget, level + 1)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip() if slide.notes_slide.notes_text_frame else ""
            if notes:
                budget.text(len(notes))
                md.para(f"Speaker notes: {notes}")
    title = (deck.core_properties.title or "").strip() or first_title
    return structured(source, title, md, data, "pptx", {"slide_count": len(deck.slides)})


def _shapes(shapes: Any) -> Any:
    """The slide's shapes in reading order (top to bottom, left to right), groups opened."""
    flat = []
    for s in shapes:
        if getattr(s, "shape_type", None) is not None and s.shape_type == 6:  # a group
            flat += list(_shapes(s.shapes))
        else:
            flat.append(s)
    return sorted(flat, key=lambda s: ((s.top or 0), (s.left or 0)))


def _frame(md: Markdown, frame: Any, budget: Budget, heading_level: int) -> None:
    paras = [(p.level, "".join(r.text for r in p.runs) or p.text, _bold(p)) for p in frame.paragraphs]
    paras = [(lvl, t.strip(), bold) for lvl, t, bold in paras if t and t.strip()]
    if not paras:
        return
    budget.text(sum(len(t) for _, t, _ in paras))
    if len(paras) == 1 and paras[0][0] == 0:
        md.para(paras[0][1])
        return
    for lvl, t, bold in paras:
        if bold and lvl == 0 and len(t) <= 90 and not t.endswith((".", "。", "!", "！", "?", "？", ":", "：")):
            md.heading(heading_level, t)  # a heading inside the slide: bold, on its own
        else:
            md.item(t, lvl)


def _bold(paragraph: Any) -> bool:
    runs = [r for r in paragraph.runs if r.text.strip()]
    return bool(runs) and all(r.font.bold for r in runs)
