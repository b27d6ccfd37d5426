"""Split a document into parents (structure-following sections) and children (sentence-aligned).

Parents follow the document's structure: one per heading section (the text under a heading
up to the next heading of any level), or, when the document has no headings, the whole document
if it fits in one child (``child_tokens``: cut, a short entry such as an FAQ answer or a short
article loses what it says as a whole), else one per paragraph (a paragraph shorter than a
quarter of a child is merged into the next one). A part larger than ``parent_max_tokens`` is
split at sentence ends.

Children are cut from their parent's text at sentence ends, about ``child_tokens`` each,
each starting with the previous child's last sentences up to ``child_overlap_tokens``.
A child is an exact slice ``parent.text[start:end]``, so matches can be highlighted.

Tables (Markdown pipe tables, as every loader writes them) are kept whole where they can be: a
table within a child's size is one unit, never cut; a larger one is cut between rows only, and
each child of it is indexed with the table's header rows (``Child.context``). Page and slide
marks that loaders leave in the text (``page_mark``) are taken out before splitting; each parent
keeps the range they give it (``Parent.location``).
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens, token_spans
from ragsift.types import Child, Document, Parent

_HEADING_RE = re.compile(r"(#{1,6})[ \t]+(.+)")  # its trailing blanks and #s are taken off by heading_of
_MARK_RE = re.compile("\ue000(page|slide):(\\d+)\ue001\n?")
_TABLE_LINE = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*$")

# formats whose '#' lines are headings (every loader of a structured format writes them)
STRUCTURED_FORMATS = ("md", "html", "pdf", "docx", "pptx", "xlsx", "csv", "epub", "odt", "eml", "zip", "doc", "ppt",
                      "xls", "rtf", "odp", "ods", "msg", "xml")

Mark = tuple[int, str, int]  # offset in the text without marks, kind (page | slide), number


def page_mark(kind: str, number: int) -> str:
    """The mark a loader puts, on a line of its own, where page (or slide) ``number`` starts."""
    return f"\ue000{kind}:{number}\ue001\n"


@dataclass(frozen=True)
class SplitSettings:
    parent_max_tokens: int = 1500
    child_tokens: int = 200
    child_overlap_tokens: int = 40


def heading_of(line: str) -> tuple[int, str] | None:
    """A Markdown heading line's level and text (closing ``#``s and blanks taken off), or None.
    Linear in the line (a lazy ``(.+?)[ \t#]*$`` is quadratic on a long run of " #")."""
    m = _HEADING_RE.fullmatch(line)
    if m is None:
        return None
    text = m.group(2).rstrip(" \t#")
    return len(m.group(1)), text or m.group(2)[0]


def take_marks(text: str) -> tuple[str, list[Mark]]:
    """``text`` without its page and slide marks, and where each was (in the text without them)."""
    if "\ue000" not in text:
        return text, []
    marks: list[Mark] = []
    parts: list[str] = []
    pos = removed = 0
    for m in _MARK_RE.finditer(text):
        parts.append(text[pos:m.start()])
        marks.append((m.start() - removed, m.group(1), int(m.group(2))))
        removed += m.end() - m.start()
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts).replace("\ue000", "").replace("\ue001", ""), marks


def location_of(marks: list[Mark], start: int, end: int) -> tuple[str, int, int] | None:
    """The pages (or slides) a span ``[start, end)`` of the text lies on."""
    if not marks:
        return None
    i = bisect_right(marks, start, key=lambda m: m[0])  # marks[:i] lie at or before start
    first = marks[i - 1] if i else marks[0]
    last = first
    for m in reversed(marks[i:bisect_left(marks, end, key=lambda m: m[0])]):  # start < offset < end
        if m[1] == first[1]:
            last = m
            break
    return first[1], first[2], last[2]


def sections(text: str) -> list[tuple[tuple[str, ...], str, int]]:
    """(heading path, body, body's offset in ``text``) of each heading section, in document
    order; [] if the text has no headings. A heading with no text under it that the next heading
    replaces (a cover page's title and authors, each read as a heading) is not lost: the next
    section's body starts at its line (a body stays an exact slice of ``text``)."""
    out: list[tuple[tuple[str, ...], str, int]] = []
    stack: list[list] = []  # [level, heading, whether a section under it was kept, where its line begins]
    body: list[str] = []
    body_at = 0
    orphan_at: int | None = None  # where the first heading that lost its place begins
    in_fence = False
    found_heading = False
    pos = 0

    def flush() -> None:
        nonlocal orphan_at
        raw = "\n".join(body)
        b = raw.strip()
        if b:
            at = body_at + raw.index(b)
            if orphan_at is not None:
                end = at + len(b)
                at, b = orphan_at, text[orphan_at:end]
                orphan_at = None
            out.append((tuple(entry[1] for entry in stack), b, at))
            for entry in stack:
                entry[2] = True
        body.clear()

    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        h = None if in_fence else heading_of(line)
        if h:
            found_heading = True
            flush()
            level = h[0]
            while stack and stack[-1][0] >= level:
                gone = stack.pop()
                if not gone[2] and orphan_at is None:
                    orphan_at = gone[3]
            stack.append([level, h[1].strip(), False, pos])
            body_at = pos + len(line) + 1
        else:
            if not body:
                body_at = pos
            body.append(line)
        pos += len(line) + 1
    flush()
    return out if found_heading else []


def _paragraph_parts(text: str, min_tokens: int) -> list[tuple[str, int]]:
    """Paragraphs (a short one merged into the next), with their offsets in ``text``."""
    paras = [(m.group(0).strip(), m.start() + (len(m.group(0)) - len(m.group(0).lstrip())))
             for m in re.finditer(r"(?:(?!\n\s*\n)[\s\S])+", text) if m.group(0).strip()]
    out: list[tuple[str, int]] = []
    carry: tuple[str, int] | None = None
    for p, at in paras:
        cur = (f"{carry[0]}\n\n{p}", carry[1]) if carry else (p, at)
        if count_tokens(cur[0]) < min_tokens:
            carry = cur
            continue
        out.append(cur)
        carry = None
    if carry:
        if out:
            out[-1] = (f"{out[-1][0]}\n\n{carry[0]}", out[-1][1])
        else:
            out.append(carry)
    return out


def table_blocks(text: str) -> list[tuple[int, int, int]]:
    """Each Markdown table in ``text``: (start, end, end of its header rows), header rows being
    the lines down to the rule (``| --- |``); a table of 2 lines or more only."""
    out: list[tuple[int, int, int]] = []
    pos, start, header_end, n = 0, -1, -1, 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        end = pos + len(line)
        if _TABLE_LINE.match(line):
            if start < 0:
                start, header_end, n = pos, -1, 0
            n += 1
            if header_end < 0 and _TABLE_RULE.match(line):
                header_end = end
            last_end = end
        elif start >= 0:
            if n >= 2:
                out.append((start, last_end, header_end if header_end >= 0 else start))
            start = -1
        pos = end + 1
        if i == len(lines) - 1 and start >= 0 and n >= 2:
            out.append((start, last_end, header_end if header_end >= 0 else start))
    return out


def units(text: str, limit: int, tables: list[tuple[int, int, int]] | None = None) -> list[tuple[int, int]]:
    """The spans children are packed from: sentences, and in a table its rows (header rows with
    the first one), or the whole table when it fits in ``limit`` tokens (``tables``: its
    ``table_blocks``, when the caller has them)."""
    tables = table_blocks(text) if tables is None else tables
    if not tables:
        return sentence_spans(text)
    out: list[tuple[int, int]] = []
    pos = 0
    for start, end, header_end in tables:
        if start > pos:
            out += [(pos + s, pos + e) for s, e in sentence_spans(text[pos:start])]
        if count_tokens(text[start:end]) <= limit:
            out.append((start, end))
        else:
            rows = _row_spans(text, start, end)
            head = [r for r in rows if r[1] <= header_end]
            body = [r for r in rows if r[1] > header_end]
            if head and body:
                body[0] = (head[0][0], body[0][1])
            out += body or head
        pos = end
    if pos < len(text):
        out += [(pos + s, pos + e) for s, e in sentence_spans(text[pos:])]
    return out


def _row_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    rows, pos = [], start
    for line in text[start:end].split("\n"):
        rows.append((pos, pos + len(line)))
        pos += len(line) + 1
    return [r for r in rows if r[1] > r[0]]


def _pack_spans(text: str, spans: list[tuple[int, int]], limit: int, overlap: int) -> list[tuple[int, int]]:
    """Greedily pack spans (sentences, table rows) into windows of at most ``limit`` tokens.

    Spans over the limit are first cut at token boundaries. Each window after the first starts
    with trailing spans of the previous one totalling <= ``overlap`` tokens.
    """
    parts: list[tuple[int, int, int]] = []  # start, end, tokens
    for s, e in spans:
        n = count_tokens(text[s:e])
        if n <= limit:
            parts.append((s, e, n))
            continue
        toks = token_spans(text[s:e])
        for i in range(0, len(toks), limit):
            chunk = toks[i:i + limit]
            parts.append((s + chunk[0][0], s + chunk[-1][1], len(chunk)))
    windows: list[tuple[int, int]] = []
    i = 0
    while i < len(parts):
        j, total = i, 0
        while j < len(parts) and (j == i or total + parts[j][2] <= limit):
            total += parts[j][2]
            j += 1
        windows.append((parts[i][0], parts[j - 1][1]))
        if j >= len(parts):
            break
        # overlap: step back over trailing spans of this window
        back, k = 0, j
        while overlap and k - 1 > i and back + parts[k - 1][2] <= overlap:
            back += parts[k - 1][2]
            k -= 1
        i = k
    return windows


def _table_context(text: str, start: int, end: int, tables: list[tuple[int, int, int]] | None = None) -> str:
    """The header rows of the table a child ``[start, end)`` lies in, when the child does not hold
    them itself ("" otherwise). ``tables``: ``table_blocks(text)``, when the caller has them (a text
    cut into many pieces finds its tables once, not once a piece)."""
    for t_start, t_end, header_end in table_blocks(text) if tables is None else tables:
        if t_start <= start < t_end and start >= header_end > t_start:
            return text[t_start:header_end]
    return ""


def split_document(doc: Document, cfg: SplitSettings) -> tuple[list[Parent], list[Child]]:
    text, marks = take_marks(doc.text)
    secs = sections(text) if doc.format in STRUCTURED_FORMATS else []
    whole = text.strip()
    if not secs and whole and count_tokens(whole) <= cfg.child_tokens:
        # a document without headings that fits in one child is one entry: cut into paragraphs, what
        # it says as a whole would be lost (an FAQ answer, a short article, a note)
        secs = [((), whole, text.index(whole))]
    if not secs:
        secs = [((), p, at) for p, at in _paragraph_parts(text, max(1, cfg.child_tokens // 4))]
    parents: list[Parent] = []
    children: list[Child] = []
    for path, body, at in secs:
        pieces = [(body, 0)]
        if count_tokens(body) > cfg.parent_max_tokens:
            tables = table_blocks(body)
            spans = units(body, cfg.parent_max_tokens, tables)
            # a section cut inside a table: the part after the cut starts with the table's header
            pieces = []
            for s, e in _pack_spans(body, spans, cfg.parent_max_tokens, 0):
                head = _table_context(body, s, e, tables)
                pieces.append((head + ("\n" if head else "") + body[s:e], s))
        for piece, off in pieces:
            pid = f"{doc.doc_id}#p{len(parents)}"
            where = location_of(marks, at + off, at + off + len(piece))
            parent = Parent(pid, doc.doc_id, len(parents), path, piece, count_tokens(piece), where)
            parents.append(parent)
            tables = table_blocks(piece)
            spans = units(piece, cfg.child_tokens, tables)
            for ci, (s, e) in enumerate(_pack_spans(piece, spans, cfg.child_tokens, cfg.child_overlap_tokens)):
                ctext = piece[s:e]
                child = Child(f"{pid}c{ci}", pid, doc.doc_id, ci, s, e, ctext, count_tokens(ctext))
                context = _table_context(piece, s, e, tables) if "|" in ctext else ""
                children.append(replace(child, context=context) if context else child)
    return parents, children


def index_text(doc: Document, parent: Parent, child: Child, with_headings: bool) -> str:
    """The text that is embedded and BM25-indexed for a child: its context line (title and
    heading path), the header of the table it lies in (``Child.context``), then itself."""
    body = f"{child.context}\n{child.text}" if child.context else child.text
    if not with_headings:
        return body
    context = " > ".join(parent.heading_path) if parent.heading_path else doc.title
    if doc.title and parent.heading_path and doc.title not in parent.heading_path:
        context = f"{doc.title} > {context}"
    return f"{context}\n{body}" if context else body
