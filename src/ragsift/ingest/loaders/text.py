"""Text formats: Markdown (YAML front matter as metadata, the first heading as the title), HTML
(its headings kept, scripts and styles dropped) and plain text (its file name as the title)."""
from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from typing import Any

from ragsift.ingest.loaders.base import (
    MAX_LIST_LEVEL,
    LoadLimits,
    LoadResult,
    clean_metadata,
    doc_id_for,
    first_heading,
    normalize_text,
    register,
    sha256,
    skipped,
)
from ragsift.ingest.loaders.encoding import declared_in_markup, decode
from ragsift.ingest.loaders.files import source_title
from ragsift.types import Document

log = logging.getLogger(__name__)
MAX_FRONT_MATTER = 64 * 1024  # characters of YAML front matter read as metadata


def text_of(data: bytes, source: str, declared: str | None = None) -> tuple[str | None, LoadResult]:
    """A text file's text in whatever encoding it came (``encoding.decode``), or (None and) why it
    is skipped."""
    got = decode(data, declared)
    if got.text is None:
        return None, skipped(source, got.reason or "undecodable")
    return got.text, LoadResult()


def _load(fmt: str, data: bytes, source: str) -> LoadResult:
    got = decode(data, declared_in_markup(data) if fmt == "html" else None)
    if got.text is None:
        return skipped(source, got.reason or "undecodable")
    text = got.text
    meta: dict[str, Any] = {}
    if fmt == "md":
        meta, text = split_front_matter(text)
        title = first_heading(text) or source_title(source)
    elif fmt == "html":
        title, text = html_to_text(text)
        title = title or first_heading(text) or source_title(source)
    else:
        title = source_title(source)
    if not text.strip():
        return skipped(source, "no text content")
    if got.encoding not in ("utf-8", "utf_8"):
        meta = {**meta, "encoding": got.encoding}  # how it was read, when not as UTF-8 (``show`` says it)
    return LoadResult(documents=[Document(doc_id_for(source), source, title, normalize_text(text), sha256(data), fmt,
                                          meta)])


@register(".md", ".markdown")
def load_markdown(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    return _load("md", data, source)


@register(".txt", ".text")
def load_text(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    return _load("txt", data, source)


@register(".html", ".htm", ".xhtml")
def load_html(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    return _load("html", data, source)


_FRONT_RE = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (``---`` block at the top) becomes document metadata. It is read with a
    safe loader that refuses aliases (a few hundred bytes of them can expand to gigabytes) and
    at most ``MAX_FRONT_MATTER`` characters of it; front matter that is refused stays text."""
    m = _FRONT_RE.match(text.lstrip("\ufeff"))
    if not m:
        return {}, text
    if len(m.group(1)) > MAX_FRONT_MATTER:
        log.warning("front matter longer than %d characters left as text", MAX_FRONT_MATTER)
        return {}, text
    import yaml

    try:
        meta = yaml.load(m.group(1), Loader=_no_alias_loader()) or {}
    except yaml.YAMLError as e:
        log.warning("front matter not read (%s); left as text", str(e).splitlines()[0][:200])
        return {}, text
    if not isinstance(meta, dict):
        return {}, text
    try:
        return clean_metadata(meta), text[m.end():]
    except ValueError:  # front matter nested too deeply: left as text
        return {}, text


_NO_ALIAS: Any = None


def _no_alias_loader() -> Any:
    """yaml.SafeLoader that refuses aliases (``*name``), built once."""
    global _NO_ALIAS
    if _NO_ALIAS is None:
        import yaml

        class NoAliasLoader(yaml.SafeLoader):
            def compose_node(self, parent: Any, index: Any) -> Any:
                if self.check_event(yaml.AliasEvent):
                    raise yaml.composer.ComposerError(None, None, "aliases are not allowed in front matter",
                                                      self.peek_event().start_mark)
                return super().compose_node(parent, index)

        _NO_ALIAS = NoAliasLoader
    return _NO_ALIAS


# ---------------------------------------------------------------- HTML
class _HTMLText(HTMLParser):
    """HTML in the normal form: ``<h1>``..``<h6>`` as headings, lists as items (nested by level,
    ordered ones numbered), tables as Markdown tables, ``<pre>`` as code; scripts, styles, the
    head and footnote back-links left out."""

    BLOCK = {"p", "div", "br", "section", "article", "blockquote", "dd", "dt", "header", "footer", "main",
             "aside", "figcaption", "figure", "hr", "nav"}
    SKIP = {"script", "style", "noscript", "template", "svg", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.title = ""
        self.in_title = False
        self.heading: int | None = None
        self.lists: list[list[int]] = []  # per open list: [ordered (0/1), next number]
        self.tables: list[list[list[str]]] = []  # per open table: its rows
        self.cell: list[str] | None = None
        self.pre = 0
        self.anchors: list[bool] = []  # per open <a>: whether it is a footnote's back-link
        self.fresh_item = False  # a list item's marker was just written

    def _out(self, text: str) -> None:
        if self.cell is not None:
            self.cell.append(text)
        else:
            self.parts.append(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "a":
            back = "footnote-back" in (a.get("class") or "") or a.get("role") == "doc-backlink"
            self.anchors.append(back)
            self.skip += back
        elif tag in self.SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag) and self.cell is None:
            self.heading = int(tag[1])
            self.parts.append("\n\n" + "#" * self.heading + " ")
        elif tag in ("ul", "ol"):
            self._out("" if self.lists else "\n\n")
            self.lists.append([1 if tag == "ol" else 0, 1])
        elif tag == "li":
            depth = max(0, min(MAX_LIST_LEVEL, len(self.lists) - 1))  # 50,000 nested lists: no quadratic indent
            ordered = self.lists[-1] if self.lists else [0, 1]
            marker = f"{ordered[1]}." if ordered[0] else "-"
            if ordered[0]:
                ordered[1] += 1
            self._out("\n" + "  " * depth + marker + " ")
            self.fresh_item = True
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self.cell = []
        elif tag == "pre":
            self.pre += 1
            self._out("\n\n```\n")
        elif tag in self.BLOCK and not (self.fresh_item and tag == "p"):
            self._out("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            if self.anchors and self.anchors.pop():
                self.skip = max(0, self.skip - 1)
        elif tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif re.fullmatch(r"h[1-6]", tag) and self.heading is not None:
            self.heading = None
            self.parts.append("\n\n")
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._out("\n" if self.lists else "\n\n")
        elif tag in ("td", "th") and self.cell is not None:
            if self.tables and self.tables[-1]:
                self.tables[-1][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "table" and self.tables:
            rows = self.tables.pop()
            self.parts.append("\n\n" + _md_table(rows) + "\n\n")
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._out("\n```\n\n")
        elif tag in self.BLOCK and not (self.lists and tag == "p"):
            self._out("\n\n")

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.fresh_item = False
        if self.in_title:
            self.title += data
            return
        if self.skip:
            return
        if self.pre:
            self._out(data)
        elif self.heading is not None:
            self._out(" ".join(data.split()))
        else:
            self._out(re.sub(r"[ \t\r\n]+", " ", data))


def _md_table(rows: list[list[str]]) -> str:
    from ragsift.ingest.loaders.base import Markdown

    md = Markdown()
    md.table(rows)
    return md.text()


def html_to_text(html: str) -> tuple[str, str]:
    p = _HTMLText()
    p.feed(html)
    p.close()
    text = "".join(p.parts)
    lines, fence = [], False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fence = not fence
            lines.append(line.strip())
        elif fence or re.match(r"^\s*(?:[-*]|\d+\.)\s", line):  # fenced code, and a list item, keep their indent
            lines.append(line.rstrip())
        else:
            lines.append(line.strip())
    return " ".join(p.title.split()), normalize_text("\n".join(lines))
