"""Loaders: file -> Documents. Markdown, plain text, HTML, PDF and JSONL (BEIR corpus rows).

Every loader returns text in one normal form: paragraphs separated by blank lines, and for
Markdown and HTML (whose ``<h1>``..``<h6>`` become them) ``#`` heading lines that carry the
structure. Plain text, PDF and JSONL have no headings: a line starting with ``#`` there is text.
Files that cannot be read (binary, empty, not UTF-8, broken PDF, bad JSONL line) are
reported as ``Skipped`` with a reason; they never abort the rest of an ingest.
"""
from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, cast

from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.text.clean import clean_str
from ragsift.types import Document, Skipped

log = logging.getLogger(__name__)

#: loaders by suffix: ``loader(data, source, limits) -> LoadResult`` (registered at the end of the module)
LOADERS: Registry[LoadResult] = Registry("file type", ConfigError)

MAX_FILE_BYTES = 50 * 1024 * 1024  # the default of the setting max_file_mb
MAX_FRONT_MATTER = 64 * 1024  # characters of YAML front matter read as metadata


@dataclass(frozen=True)
class LoadLimits:
    """What reading one file may cost (the ``ingest`` settings): bytes read, and for formats
    that unpack (PDF and other compressed files) the pages and text they make and the time."""

    max_bytes: int = MAX_FILE_BYTES
    max_pages: int = 5000
    max_chars: int = 20_000_000
    max_seconds: float = 60.0


class OverLimit(Exception):
    """Reading a file passed one of its limits; the message says which (the file is skipped)."""


#: a packed file (PDF, Office, EPUB, archive) may make at most this many characters of text per
#: byte read, beyond a first ``TEXT_FLOOR``: plain text packs about 4:1 and a real document holds
#: fonts and images besides, so more than 20 characters a byte is a file built to unpack (a bomb)
TEXT_PER_BYTE = 20
TEXT_FLOOR = 1_000_000


class Budget:
    """What one file has made so far against its limits; each check raises OverLimit. A packed
    file of ``packed_bytes`` may also make at most ``TEXT_FLOOR + TEXT_PER_BYTE * packed_bytes``
    characters (within ``max_chars``)."""

    def __init__(self, limits: LoadLimits, packed_bytes: int | None = None) -> None:
        self.limits = limits
        self.t0 = time.monotonic()
        self.chars = 0
        self.pages = 0
        self.max_chars = limits.max_chars
        self.ratio_bound = packed_bytes is not None and TEXT_FLOOR + TEXT_PER_BYTE * packed_bytes < limits.max_chars
        if self.ratio_bound:
            self.max_chars = TEXT_FLOOR + TEXT_PER_BYTE * int(packed_bytes or 0)

    def page(self) -> None:
        self.pages += 1
        if self.pages > self.limits.max_pages:
            raise OverLimit(f"more than {self.limits.max_pages} pages (setting max_file_pages)")
        self.tick()

    def text(self, n: int) -> None:
        self.chars += n
        if self.chars > self.max_chars:
            if self.ratio_bound:
                raise OverLimit(f"unpacks to more than {self.max_chars} characters of text, over {TEXT_PER_BYTE} "
                                "a byte of the file (a decompression bomb?)")
            raise OverLimit(f"makes more than {self.limits.max_chars} characters of text (setting max_file_chars)")
        self.tick()

    def tick(self) -> None:
        if time.monotonic() - self.t0 > self.limits.max_seconds:
            raise OverLimit(f"reading took longer than {self.limits.max_seconds:g} s (setting max_file_seconds)")


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, item: Document | Skipped) -> None:
        if isinstance(item, Skipped):
            self.skipped.append(item)
        else:
            self.documents.append(item)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def doc_id_for(source: str) -> str:
    """Stable document id for a file: derived from its path relative to the ingest root."""
    return "d-" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def iter_files(root: Path) -> Iterator[Path | tuple[Path, str]]:
    """The files to load under ``root`` (hidden ones left out), and, as (path, reason), every
    entry that is not loaded for another reason: a dangling symbolic link, a link loop, a
    link to a directory (not followed), a FIFO, socket or device, an unreadable directory."""
    if not root.is_dir():
        kind = _not_a_file(root)
        yield (root, kind) if kind else root
        return
    found: list[tuple[Path, str | None]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as e:
            found.append((folder, f"cannot read directory: {e.strerror or e}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                    continue
            except OSError:
                pass
            kind = _not_a_file(path)
            if kind != "":
                found.append((path, kind))
    for path, kind in sorted(found, key=lambda pk: str(pk[0])):
        yield path if kind is None else (path, kind)


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` is not loaded, or None for a regular file (or a link to one)."""
    try:
        st = path.stat()
    except OSError as e:
        if path.is_symlink():
            return "symbolic link loop" if e.errno == errno.ELOOP else "dangling symbolic link"
        return f"cannot read: {e.strerror or e}"
    if stat.S_ISDIR(st.st_mode):
        return "symbolic link to a directory (not followed)" if path.is_symlink() else ""
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device"
        return f"not a regular file ({kind})"
    return None


def load_file(path: Path, source: str, limits: LoadLimits | int = MAX_FILE_BYTES) -> LoadResult:
    """Load one file with the loader ``LOADERS`` registers for its suffix; ``source`` is its stable
    name (path relative to the ingest root). ``limits``: what reading it may cost (an int: the most
    bytes, other limits their defaults)."""
    if isinstance(limits, int):
        limits = LoadLimits(max_bytes=limits)
    max_bytes = limits.max_bytes
    res = LoadResult()
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        res.skipped.append(Skipped(source, f"unsupported file type {path.suffix or '(none)'!r}; "
                                           f"supported: {', '.join(sorted(LOADERS.names()))}"))
        return res
    try:
        size = path.stat().st_size
        if size > max_bytes:
            res.skipped.append(Skipped(source, f"file too large ({size} bytes; limit {max_bytes}, "
                                               "setting max_file_mb)"))
            return res
        data = path.read_bytes()
    except OSError as e:
        res.skipped.append(Skipped(source, f"cannot read file: {e.strerror or e}"))
        return res
    if not data.strip():
        res.skipped.append(Skipped(source, "empty file"))
        return res
    return LOADERS.make(suffix, data, source, limits)


def _pdf(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    try:
        return _load_pdf(data, source, Budget(limits, packed_bytes=len(data)))
    except OverLimit as e:
        return LoadResult(skipped=[Skipped(source, f"PDF {e}; skipped")])


def _text_of(data: bytes, source: str) -> tuple[str | None, LoadResult]:
    """A text file's text, or (None and) why it is skipped."""
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, LoadResult(skipped=[Skipped(source, "binary content (NUL bytes) in a text file")])
    text, err = decode_text(data)
    if text is None:
        return None, LoadResult(skipped=[Skipped(source, err or "undecodable")])
    return text, LoadResult()


def _jsonl(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    text, res = _text_of(data, source)
    return res if text is None else load_jsonl(text, source)


def _text_format(fmt: str) -> Callable[[bytes, str, LoadLimits], LoadResult]:
    """The loader of a text format: Markdown (front matter as metadata, the first heading as the
    title), HTML (its headings kept), plain text (its file name as the title)."""

    def load(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
        text, res = _text_of(data, source)
        if text is None:
            return res
        meta: dict[str, Any] = {}
        if fmt == "md":
            meta, text = split_front_matter(text)
            title = _first_heading(text) or Path(source).stem
        elif fmt == "html":
            title, text = html_to_text(text)
            title = title or _first_heading(text) or Path(source).stem
        else:
            title = Path(source).stem
        if not text.strip():
            res.skipped.append(Skipped(source, "no text content"))
            return res
        res.documents.append(Document(doc_id_for(source), source, title, normalize_text(text),
                                      sha256(data), fmt, meta))
        return res
    return load


def decode_text(data: bytes) -> tuple[str | None, str | None]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as e:
            return None, f"invalid UTF-16 at byte {e.start}"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        return None, (f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); "
                      "convert the file to UTF-8 and ingest again")


MAX_METADATA_DEPTH = 16  # nesting of a metadata value (a deeper one cannot be stored)


def clean_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """Metadata a store can hold: keys as text, strings without lone surrogates, values nested
    at most ``MAX_METADATA_DEPTH`` levels (ValueError naming the key when deeper)."""

    def clean(v: Any, depth: int, key: str) -> Any:
        if depth > MAX_METADATA_DEPTH:
            raise ValueError(f"metadata {key!r} is nested deeper than {MAX_METADATA_DEPTH} levels")
        if isinstance(v, str):
            return clean_str(v)
        if isinstance(v, dict):
            return {clean_str(str(k)): clean(x, depth + 1, key) for k, x in v.items() if x is not None}
        if isinstance(v, (list, tuple)):
            return [clean(x, depth + 1, key) for x in v]
        return v

    return {clean_str(str(k)): clean(v, 1, str(k)) for k, v in meta.items() if v is not None}


def normalize_text(text: str) -> str:
    text = clean_str(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u3000", " ").replace("\xa0", " ")
    text = re.sub(r"[ \t\f\v]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


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


_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")


def _first_heading(text: str) -> str:
    for line in text.splitlines():
        m = _HEADING_RE.match(line)
        if m:
            return m.group(2).strip()
    return ""


# ---------------------------------------------------------------- HTML
class _HTMLText(HTMLParser):
    BLOCK = {"p", "div", "li", "tr", "br", "section", "article", "blockquote", "pre", "table",
             "ul", "ol", "dd", "dt", "header", "footer", "main", "aside", "figcaption"}
    SKIP = {"script", "style", "noscript", "template", "svg", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.title = ""
        self.in_title = False
        self.heading: int | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self.heading = int(tag[1])
            self.parts.append("\n\n" + "#" * self.heading + " ")
        elif tag in self.BLOCK:
            self.parts.append("\n\n" if tag != "br" else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif re.fullmatch(r"h[1-6]", tag):
            self.heading = None
            self.parts.append("\n\n")
        elif tag in self.BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip:
            return
        if self.heading is not None:
            data = " ".join(data.split())
        else:
            data = re.sub(r"[ \t\r\n]+", " ", data)
        self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    p = _HTMLText()
    p.feed(html)
    p.close()
    text = "".join(p.parts)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return " ".join(p.title.split()), normalize_text(text)


# ---------------------------------------------------------------- PDF
_SENT_END = ("。", "！", "？", ".", "!", "?", ":", "：", "；")


def _load_pdf(data: bytes, source: str, budget: Budget) -> LoadResult:
    """Text of a PDF, page by page, within ``budget`` (pages, characters made, time: a small file
    whose pages share one huge stream is stopped, not read whole)."""
    res = LoadResult()
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)

    def visit(text: str, *_: Any) -> None:
        budget.text(len(text))

    try:
        reader = PdfReader(io.BytesIO(data))
        n = len(reader.pages)
        if n > budget.limits.max_pages:
            raise OverLimit(f"has {n} pages; the limit is {budget.limits.max_pages} (setting max_file_pages)")
        pages = []
        for page in reader.pages:
            budget.page()
            pages.append(page.extract_text(visitor_text=visit) or "")
    except OverLimit:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as e:
        res.skipped.append(Skipped(source, f"unreadable PDF: {e}"))
        return res
    except Exception as e:  # pypdf raises many kinds on damaged files
        res.skipped.append(Skipped(source, f"unreadable PDF ({type(e).__name__}): {e}"))
        return res
    paragraphs = []
    for page_text in pages:
        paragraphs.extend(_pdf_paragraphs(page_text))
    text = "\n\n".join(paragraphs)
    if not text.strip():
        res.skipped.append(Skipped(source, "PDF has no extractable text (scanned images need OCR first)"))
        return res
    title = paragraphs[0][:120] if paragraphs else Path(source).stem
    res.documents.append(Document(doc_id_for(source), source, title, normalize_text(text),
                                  sha256(data), "pdf", {"pages": len(pages)}))
    return res


def _pdf_paragraphs(page: str) -> list[str]:
    """Re-join PDF lines: a line ending a sentence ends a paragraph; others wrap."""
    out: list[str] = []
    cur = ""
    for line in page.splitlines():
        line = line.strip()
        if not line:
            if cur:
                out.append(cur)
                cur = ""
            continue
        cur = _join_wrapped(cur, line)
        if line.endswith(_SENT_END):
            out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def _join_wrapped(cur: str, line: str) -> str:
    if not cur:
        return line
    from ragsift.text.lang import is_cjk_char

    if is_cjk_char(cur[-1]) or is_cjk_char(line[0]):
        return cur + line
    if cur.endswith("-") and line[:1].islower():
        return cur[:-1] + line
    return cur + " " + line


# ---------------------------------------------------------------- JSONL (BEIR corpus)
def load_jsonl(text: str, source: str) -> LoadResult:
    """One document per line: ``{"_id", "title"?, "text", "metadata"?}`` (BEIR corpus rows).

    ``id`` is accepted for ``_id``. A malformed line is reported and skipped.
    """
    res = LoadResult()
    seen: set[str] = set()
    # lines end at "\n" only: U+2028, U+2029 and U+0085 inside a row's strings are text
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            row = json.loads(line.rstrip("\r"))
        except json.JSONDecodeError as e:
            res.skipped.append(Skipped(where, f"malformed JSON: {e.msg} at column {e.colno}"))
            continue
        except RecursionError:
            res.skipped.append(Skipped(where, "JSON nested too deeply"))
            continue
        res.add(record_document(row, where, source, seen))
    return res


def as_record(obj: Any) -> Any:
    """A document object as a record mapping (mappings and anything unrecognised pass through):
    a ragsift Document, or the document types of LangChain, LlamaIndex and Haystack."""
    if isinstance(obj, dict) or obj is None or isinstance(obj, (str, bytes, int, float)):
        return obj
    if isinstance(obj, Document):
        return {"id": obj.doc_id, "text": obj.text, "title": obj.title, "source": obj.source,
                "metadata": obj.metadata}
    text = next((getattr(obj, a) for a in ("text", "page_content", "content")
                 if isinstance(getattr(obj, a, None), str)),
                None)
    if text is None:
        return obj
    rid = next((getattr(obj, a) for a in ("id", "id_", "doc_id") if getattr(obj, a, None)), None)
    meta = getattr(obj, "metadata", None) or getattr(obj, "meta", None) or {}
    meta = dict(meta) if isinstance(meta, dict) else {}
    rec = {"id": rid if rid is not None else meta.get("id"), "text": text,
           "metadata": {k: v for k, v in meta.items() if k not in ("id", "title", "source")}}
    for key in ("title", "source"):
        if isinstance(meta.get(key), str):
            rec[key] = meta[key]
    return rec


def record_document(row: Any, where: str, source: str, seen: set[str], fmt: str = "jsonl") -> Document | Skipped:
    """A document from a record ``{"_id" or "id", "text", "title"?, "metadata"?}`` (a JSONL row,
    or a document sent as JSON): its id is kept; ``seen`` holds the ids taken so far."""
    if not isinstance(row, dict):
        return Skipped(where, "a document must be an object")
    rid = row.get("_id", row.get("id"))
    body = row.get("text")
    if rid is None or not isinstance(body, str):
        return Skipped(where, "a document needs '_id' (or 'id') and a string 'text'")
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        return Skipped(where, f"'_id' must be a string or an integer, not {type(rid).__name__}")
    rid = clean_str(str(rid))
    if not rid.strip() or len(rid) > 512:
        return Skipped(where, "'_id' must be 1 to 512 characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in rid):
        return Skipped(where, f"'_id' {rid[:60]!r} contains a control character (NUL, newline, ...)")
    if rid in seen:
        return Skipped(where, f"duplicate _id {rid!r} in the same batch")
    seen.add(rid)
    title = row.get("title") or ""
    if not isinstance(title, str):
        title = str(title)
    title = clean_str(title)
    if not body.strip() and not title.strip():
        return Skipped(where, "empty text")
    meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    try:
        meta = clean_metadata(cast("dict[str, Any]", meta))  # a dict: checked above
    except ValueError as e:
        return Skipped(where, str(e))
    body = normalize_text(body)
    payload = json.dumps([title, body, meta], ensure_ascii=False, sort_keys=True, default=str).encode()
    return Document(rid, source, title, body, sha256(payload), fmt, meta)


for _suffix, _fmt in ((".md", "md"), (".markdown", "md"), (".txt", "txt"), (".text", "txt"), (".html", "html"),
                      (".htm", "html")):
    LOADERS.add(_suffix, _text_format(_fmt))
LOADERS.add(".pdf", _pdf)
LOADERS.add(".jsonl", _jsonl)
