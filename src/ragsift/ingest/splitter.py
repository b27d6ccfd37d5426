"""Split a document into parents (structure-following sections) and children (sentence-aligned).

Parents follow the document's structure: one per heading section (the text under a heading
up to the next heading of any level), or one per paragraph when the document has no headings
(a paragraph shorter than a quarter of a child is merged into the next one). A part larger
than ``parent_max_tokens`` is split at sentence ends.

Children are cut from their parent's text at sentence ends, about ``child_tokens`` each,
each starting with the previous child's last sentences up to ``child_overlap_tokens``.
A child is an exact slice ``parent.text[start:end]``, so matches can be highlighted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens, token_spans
from ragsift.types import Child, Document, Parent

_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


STRUCTURED_FORMATS = ("md", "html")  # formats whose '#' lines are headings


@dataclass(frozen=True)
class SplitSettings:
    parent_max_tokens: int = 1500
    child_tokens: int = 200
    child_overlap_tokens: int = 40


def sections(text: str) -> list[tuple[tuple[str, ...], str]]:
    """(heading path, body) for each heading section, in document order; None if no headings."""
    out: list[tuple[tuple[str, ...], str]] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False
    found_heading = False

    def flush() -> None:
        b = "\n".join(body).strip()
        if b:
            out.append((tuple(h for _, h in stack), b))
        body.clear()

    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        m = None if in_fence else _HEADING_RE.match(line)
        if m:
            found_heading = True
            flush()
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group(2).strip()))
        else:
            body.append(line)
    flush()
    return out if found_heading else []


def _paragraph_parts(text: str, min_tokens: int) -> list[str]:
    paras = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out: list[str] = []
    carry = ""
    for p in paras:
        cur = f"{carry}\n\n{p}" if carry else p
        if count_tokens(cur) < min_tokens:
            carry = cur
            continue
        out.append(cur)
        carry = ""
    if carry:
        if out:
            out[-1] = f"{out[-1]}\n\n{carry}"
        else:
            out.append(carry)
    return out


def _pack_spans(text: str, spans: list[tuple[int, int]], limit: int, overlap: int) -> list[tuple[int, int]]:
    """Greedily pack sentence spans into windows of at most ``limit`` tokens.

    Sentences over the limit are first cut at token boundaries. Each window after the
    first starts with trailing sentences of the previous one totalling <= ``overlap`` tokens.
    """
    units: list[tuple[int, int, int]] = []  # start, end, tokens
    for s, e in spans:
        n = count_tokens(text[s:e])
        if n <= limit:
            units.append((s, e, n))
            continue
        toks = token_spans(text[s:e])
        for i in range(0, len(toks), limit):
            chunk = toks[i:i + limit]
            units.append((s + chunk[0][0], s + chunk[-1][1], len(chunk)))
    windows: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j, total = i, 0
        while j < len(units) and (j == i or total + units[j][2] <= limit):
            total += units[j][2]
            j += 1
        windows.append((units[i][0], units[j - 1][1]))
        if j >= len(units):
            break
        # overlap: step back over trailing sentences of this window
        back, k = 0, j
        while overlap and k - 1 > i and back + units[k - 1][2] <= overlap:
            back += units[k - 1][2]
            k -= 1
        i = k
    return windows


def split_document(doc: Document, cfg: SplitSettings) -> tuple[list[Parent], list[Child]]:
    secs = sections(doc.text) if doc.format in STRUCTURED_FORMATS else []
    if not secs:
        secs = [((), p) for p in _paragraph_parts(doc.text, max(1, cfg.child_tokens // 4))]
    parents: list[Parent] = []
    children: list[Child] = []
    for path, body in secs:
        pieces = [body]
        if count_tokens(body) > cfg.parent_max_tokens:
            spans = sentence_spans(body)
            pieces = [body[s:e] for s, e in _pack_spans(body, spans, cfg.parent_max_tokens, 0)]
        for piece in pieces:
            pid = f"{doc.doc_id}#p{len(parents)}"
            parent = Parent(pid, doc.doc_id, len(parents), path, piece, count_tokens(piece))
            parents.append(parent)
            spans = sentence_spans(piece)
            for ci, (s, e) in enumerate(_pack_spans(piece, spans, cfg.child_tokens, cfg.child_overlap_tokens)):
                ctext = piece[s:e]
                children.append(Child(f"{pid}c{ci}", pid, doc.doc_id, ci, s, e, ctext, count_tokens(ctext)))
    return parents, children


def index_text(doc: Document, parent: Parent, child: Child, with_headings: bool) -> str:
    """The text that is embedded and BM25-indexed for a child: its context line plus itself."""
    if not with_headings:
        return child.text
    context = " > ".join(parent.heading_path) if parent.heading_path else doc.title
    if doc.title and parent.heading_path and doc.title not in parent.heading_path:
        context = f"{doc.title} > {context}"
    return f"{context}\n{child.text}" if context else child.text
