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
import os
import re
import stat
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator

from ragsift.text.clean import clean_str
from ragsift.types import Document, Skipped

SUPPORTED = {".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt", ".html": "html",
             ".htm": "html", ".pdf": "pdf", ".jsonl": "jsonl"}

MAX_FILE_BYTES = 50 * 1024 * 1024  # the default of the setting max_file_mb


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, item: Document | Skipped) -> None:
        (self.skipped if isinstance(item, Skipped) else self.documents).append(item)


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


def load_file(path: Path, source: str, max_bytes: int = MAX_FILE_BYTES) -> LoadResult:
    """Load one file; ``source`` is its stable name (path relative to the ingest root)."""
    res = LoadResult()
    fmt = SUPPORTED.get(path.suffix.lower())
    if fmt is None:
        res.skipped.append(Skipped(source, f"unsupported file type {path.suffix or '(none)'!r}; "
                                           f"supported: {', '.join(sorted(set(SUPPORTED)))}"))
        return res
    try:
        size = path.stat().st_size
        if size > max_bytes:
            res.skipped.append(Skipped(source, f"file too large ({size} bytes; limit {max_bytes}, setting max_file_mb)"))
            return res
        data = path.read_bytes()
    except OSError as e:
        res.skipped.append(Skipped(source, f"cannot read file: {e.strerror or e}"))
        return res
    if not data.strip():
        res.skipped.append(Skipped(source, "empty file"))
        return res
    if fmt == "pdf":
        return _load_pdf(data, source)
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        res.skipped.append(Skipped(source, "binary content (NUL bytes) in a text file"))
        return res
    text, err = decode_text(data)
    if text is None:
        res.skipped.append(Skipped(source, err or "undecodable"))
        return res
    if fmt == "jsonl":
        return load_jsonl(text, source)
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
    """YAML front matter (``---`` block at the top) becomes document metadata."""
    m = _FRONT_RE.match(text.lstrip("\ufeff"))
    if not m:
        return {}, text
    import yaml

    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError:
        return {}, text
    if not isinstance(meta, dict):
        return {}, text
    try:
        return clean_metadata(meta), text[m.end():]
    except ValueError:  # front matter nested too deeply: left as text
        return {}, text


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


def _load_pdf(data: bytes, source: str) -> LoadResult:
    res = LoadResult()
    import io
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as e:
        res.skipped.append(Skipped(source, f"unreadable PDF: {e}"))
        return res
    except Exception as e:  # pypdf raises many kinds on damaged files
        res.skipped.append(Skipped(source, f"unreadable PDF ({type(e).__name__}): {e}"))
        return res
    paragraphs = []
    for page in pages:
        paragraphs.extend(_pdf_paragraphs(page))
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
    text = next((getattr(obj, a) for a in ("text", "page_content", "content") if isinstance(getattr(obj, a, None), str)),
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
        meta = clean_metadata(meta)
    except ValueError as e:
        return Skipped(where, str(e))
    body = normalize_text(body)
    payload = json.dumps([title, body, meta], ensure_ascii=False, sort_keys=True, default=str).encode()
    return Document(rid, source, title, body, sha256(payload), fmt, meta)
