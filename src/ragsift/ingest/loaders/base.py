"""What every loader shares: the limits of reading one file, what a load gives (documents and
files skipped with their reason), the normal form of text, and ``Markdown``, the one way a
loader writes a structured document.

The normal form: paragraphs separated by blank lines; ``#`` heading lines carry the structure;
lists as ``- item`` lines (nested by two spaces); tables as Markdown pipe tables with a header
row and a rule (``| --- |``); code in fences; page and slide marks (``splitter.page_mark``) on
lines of their own where a page or slide starts. A line of text that starts with ``#`` is
written with a leading space, so it stays text.
"""
from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ragsift.errors import ConfigError
from ragsift.ingest.loaders.sniff import SIGNATURES, Magic
from ragsift.ingest.splitter import heading_of, page_mark
from ragsift.registry import Registry
from ragsift.text.clean import clean_str
from ragsift.types import Document, Skipped

MAX_FILE_BYTES = 50 * 1024 * 1024  # the default of the setting max_file_mb
MAX_METADATA_DEPTH = 16  # nesting of a metadata value (a deeper one cannot be stored)

#: a packed file (PDF, Office, EPUB, archive) may make at most this many characters of text per
#: byte read, beyond a first ``TEXT_FLOOR``: plain text packs about 4:1 and a real document holds
#: fonts and images besides, so more than 20 characters a byte is a file built to unpack (a bomb)
TEXT_PER_BYTE = 20
TEXT_FLOOR = 1_000_000


@dataclass(frozen=True)
class LoadLimits:
    """What reading one file may cost (the ``ingest`` settings): bytes read; for formats that
    unpack (PDF and other compressed files) the pages and text they make; the CPU time, which
    grows with the work the file really holds (``Budget``); the memory of the process that reads
    it (``ragsift.ingest.loaders.isolation``)."""

    max_bytes: int = MAX_FILE_BYTES
    max_pages: int = 5000
    max_chars: int = 50_000_000
    max_seconds: float = 3600.0  # CPU seconds one file may take at most, however much it holds
    seconds: float = 30.0  # CPU seconds any file may take, before its pages count
    seconds_per_page: float = 2.0  # and more for each page it has read (``Budget.work``)
    max_memory_mb: int = 2048  # what the reading process may allocate for one file
    ocr: bool = True  # read scanned pages and images by OCR (when the ocr extra is installed)
    depth: int = 0  # archives and mail in archives or mail: how deep (at most MAX_DEPTH)


MAX_LIST_LEVEL = 8  # a list nested deeper is written at this level (Word's deepest)
MAX_DEPTH = 2  # an archive in a mail in an archive is read; deeper is skipped

#: what counts as a page of work for the CPU budget (``LoadLimits.seconds_per_page``) beside a page,
#: slide, chapter or sheet: this many characters of text made, rows of a sheet, members of an archive,
#: bytes unpacked to parse; a page read by OCR counts ``OCR_PAGE`` pages
CHARS_PER_PAGE = 50_000
ROWS_PER_PAGE = 1_000
BYTES_PER_PAGE = 1 << 20
OCR_PAGE = 30

_current: ContextVar[Budget | None] = ContextVar("ragsift_budget", default=None)
#: told each new CPU deadline of the outermost file being read (absolute process CPU seconds): the
#: reading process (``loaders.worker``) makes it a hard limit; None in-process
on_deadline: Callable[[float], None] | None = None


def budget_now() -> Budget | None:
    """The budget of the file being read (None between files)."""
    return _current.get()


def restore_budget(budget: Budget | None) -> None:
    """Make ``budget`` the open one again (a loader's own budget ends when it returns)."""
    _current.set(budget)


def cpu_seconds() -> float:
    """CPU time of this process (every thread): what reading is measured by, so a busy machine
    slows a file down without making it fail."""
    return time.process_time()


class OverLimit(Exception):
    """Reading a file passed one of its limits; the message says which (the file is skipped)."""


class Budget:
    """What one file has made so far against its limits; each check raises OverLimit. A packed
    file of ``packed_bytes`` may also make at most ``TEXT_FLOOR + TEXT_PER_BYTE * packed_bytes``
    characters (within ``max_chars``).

    CPU time: a file may take ``seconds`` plus ``seconds_per_page`` for each page of work it has
    done (pages, slides, chapters; characters, rows, members and bytes as ``CHARS_PER_PAGE`` and
    the rest say), at most ``max_seconds``: an honest long document earns its time as it is read, a
    small file that loops or inflates is stopped early. A budget made while another file's is open
    (an archive's member, a mail's attachment) counts its work for that one too."""

    def __init__(self, limits: LoadLimits, packed_bytes: int | None = None) -> None:
        self.limits = limits
        self.packed_bytes = packed_bytes
        self.t0 = cpu_seconds()
        self.chars = 0
        self.pages = 0
        self.work = 0.0  # pages of work besides the characters made
        self.parent = _current.get()
        _current.set(self)  # until the loader that made it returns (dispatch.load_bytes restores it)
        self.max_chars = limits.max_chars
        self.ratio_bound = packed_bytes is not None and TEXT_FLOOR + TEXT_PER_BYTE * packed_bytes < limits.max_chars
        if self.ratio_bound:
            self.max_chars = TEXT_FLOOR + TEXT_PER_BYTE * int(packed_bytes or 0)
        self._told = 0.0
        self._tell()

    @property
    def allowance(self) -> float:
        """The CPU seconds this file may take now."""
        lim = self.limits
        return min(lim.max_seconds, lim.seconds + lim.seconds_per_page * (self.work + self.chars / CHARS_PER_PAGE))

    def earn(self, pages: float) -> None:
        """Count ``pages`` of work done (for this file and the files it lies in)."""
        b: Budget | None = self
        while b is not None:
            b.work += pages
            b._tell()
            b = b.parent

    def left(self) -> float:
        """CPU seconds this file (and every file it lies in) may still take now."""
        now = cpu_seconds()
        b: Budget | None = self
        left = float("inf")
        while b is not None:
            left = min(left, b.allowance - (now - b.t0))
            b = b.parent
        return left

    def spend(self, seconds: float) -> None:
        """Count ``seconds`` of CPU time taken for this file outside this process (a converter it
        ran, ``loaders.convert``) as if this process had taken them; raises OverLimit past the budget."""
        b: Budget | None = self
        while b is not None:
            b.t0 -= seconds
            b = b.parent
        self.tick()

    def page(self, ocr: bool = False) -> None:
        self.pages += 1
        if self.pages > self.limits.max_pages:
            raise OverLimit(f"more than {self.limits.max_pages} pages (setting max_file_pages)")
        self.earn(OCR_PAGE if ocr else 1)
        self.tick()

    def rows(self, n: int) -> None:
        self.earn(n / ROWS_PER_PAGE)
        self.tick()

    def unpacked(self, nbytes: int) -> None:
        """``nbytes`` unpacked to be parsed (a part of a packed file): work, counted before it is done."""
        self.earn(nbytes / BYTES_PER_PAGE)

    def text(self, n: int) -> None:
        self.chars += n
        if self.chars > self.max_chars:
            if self.ratio_bound:
                raise OverLimit(f"unpacks to more than {self.max_chars} characters of text, over {TEXT_PER_BYTE} "
                                "a byte of the file (a decompression bomb?)")
            raise OverLimit(f"makes more than {self.limits.max_chars} characters of text (setting max_file_chars)")
        b: Budget | None = self.parent
        while b is not None:  # what an attachment makes counts for its mail's time too
            b.chars += n
            b = b.parent
        self.tick()

    def tick(self) -> None:
        if cpu_seconds() - self.t0 > self.allowance:
            raise OverLimit(over_time(self.allowance, self.limits))
        if on_deadline is not None and self.chars - self._told_chars > CHARS_PER_PAGE:
            self._told_chars = self.chars
            self._tell()

    _told_chars = 0

    def _tell(self) -> None:
        """Tell the reading process the outermost file's new deadline, when it moved by a second or more."""
        if on_deadline is None:
            return
        root = self
        while root.parent is not None:
            root = root.parent
        deadline = root.t0 + root.allowance
        if deadline - root._told >= 1.0:
            root._told = deadline
            on_deadline(deadline)


def over_time(allowance: float, limits: LoadLimits) -> str:
    """Why a file was stopped for its CPU time (which setting to raise)."""
    if allowance >= limits.max_seconds:
        return f"took more than {limits.max_seconds:g} s of CPU time (setting max_file_seconds)"
    return (f"took more than {allowance:.0f} s of CPU time for the work it held ({limits.seconds:g} s and "
            f"{limits.seconds_per_page:g} s a page: settings file_seconds and file_seconds_per_page)")


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)  # a reading process's cpu_seconds and peak_mb

    def add(self, item: Document | Skipped) -> None:
        if isinstance(item, Skipped):
            self.skipped.append(item)
        else:
            self.documents.append(item)

    def extend(self, other: LoadResult) -> None:
        self.documents += other.documents
        self.skipped += other.skipped


#: a loader: ``loader(data, source, limits) -> LoadResult``
Loader = Callable[[bytes, str, LoadLimits], LoadResult]

#: loaders by suffix (``.md``, ``.pdf``, ...); a format's module registers its suffixes
LOADERS: Registry[LoadResult] = Registry("file type", ConfigError)


def register(*suffixes: str, signature: Magic | None = None) -> Callable[[Loader], Loader]:
    """Decorator: register a loader for file suffixes (lower case, with the dot), with the
    signature a file of a binary format has (``sniff``: ``Magic``, ``Zip``, ``Ole``, ``Mail``): a
    file whose bytes do not have it is skipped, saying what it is, before the loader sees it. A
    loader whose suffixes differ in signature is registered once for each."""

    def wrap(fn: Loader) -> Loader:
        for s in suffixes:
            LOADERS.add(s, fn)
            if signature is not None:
                SIGNATURES[s] = signature
            else:
                SIGNATURES.pop(s, None)
        return fn
    return wrap


def unregister(*suffixes: str) -> None:
    """Forget the loaders (and signatures) of file suffixes."""
    for s in suffixes:
        LOADERS.remove(s)
        SIGNATURES.pop(s, None)


def skipped(source: str, reason: str) -> LoadResult:
    return LoadResult(skipped=[Skipped(source, reason)])


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def doc_id_for(source: str) -> str:
    """Stable document id for a file: derived from its source (its path relative to the folder
    it was ingested from, or its path in an archive)."""
    return "d-" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def decode_text(data: bytes, declared: str | None = None) -> tuple[str | None, str | None]:
    """The text of a file's bytes in whatever encoding they came (``encoding.decode``: byte order
    marks, UTF-16/32 without one, UTF-8, the ``declared`` encoding, a legacy encoding detected),
    or None and why they are not text."""
    from ragsift.ingest.loaders.encoding import decode

    got = decode(data, declared)
    return got.text, (got.reason or None)


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
    # trailing blanks of each line: a split and rstrip, linear in the text (the regular expression
    # ``[ \t]+\n`` retried from every blank of a long run without a newline is quadratic)
    text = "\n".join(line.rstrip(" \t\f\v") for line in text.split("\n"))
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


_BLANK_LINES = re.compile(r"\n{3,}")


def first_heading(text: str) -> str:
    for line in text.splitlines():
        h = heading_of(line)
        if h:
            return h[1].strip()
    return ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


class Markdown:
    """A structured document being written in the normal form (see the module docstring)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def heading(self, level: int, text: str) -> None:
        text = _one_line(text)
        if text:
            self.parts.append("#" * max(1, min(level, 6)) + " " + text)

    def para(self, text: str) -> None:
        text = text.strip("\n")
        if text.strip():
            self.parts.append("\n".join(" " + ln if ln.lstrip().startswith("#") else ln for ln in text.split("\n")))

    def markdown(self, text: str) -> None:
        """Text already in the normal form (its ``#`` lines are headings): HTML read by the HTML
        loader, a member of an archive."""
        if text.strip():
            self.parts.append(text.strip("\n"))

    def item(self, text: str, level: int = 0, ordered: int | None = None) -> None:
        text = _one_line(text)
        if text:
            marker = f"{ordered}." if ordered is not None else "-"
            self._list_line("  " * max(0, min(MAX_LIST_LEVEL, level)) + f"{marker} {text}")

    def _list_line(self, line: str) -> None:
        if self.parts and self.parts[-1].startswith("\x00list\n"):
            self.parts[-1] += "\n" + line
        else:
            self.parts.append("\x00list\n" + line)

    def table(self, rows: list[list[str]]) -> None:
        """A table (its first row the header); empty rows and columns left out."""
        rows = [[_cell(c) for c in r] for r in rows if any(str(c).strip() for c in r)]
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        keep = [j for j in range(width) if any(r[j] for r in rows)]
        rows = [[r[j] for j in keep] for r in rows]
        if not keep:
            return
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(keep)]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        self.parts.append("\n".join(lines))

    def code(self, text: str) -> None:
        if text.strip():
            self.parts.append("```\n" + text.strip("\n") + "\n```")

    def mark(self, kind: str, number: int) -> None:
        """Where page (or slide) ``number`` starts."""
        self.parts.append(page_mark(kind, number).rstrip("\n"))

    def text(self) -> str:
        return "\n\n".join(p.removeprefix("\x00list\n") for p in self.parts)

    def has_text(self) -> bool:
        return any(p.strip() and not p.startswith("\ue000") for p in self.parts)


def structured(source: str, title: str, md: Markdown, data: bytes, fmt: str,
               metadata: dict[str, Any] | None = None) -> LoadResult:
    """The one document a file of a structured format makes (or why it is skipped)."""
    from ragsift.ingest.loaders.files import source_title

    if not md.has_text():
        return skipped(source, "no text content")
    try:
        meta = clean_metadata(metadata or {})
    except ValueError as e:
        return skipped(source, str(e))
    text = normalize_text(md.text())
    return LoadResult(documents=[Document(doc_id_for(source), source, clean_str(title) or source_title(source), text,
                                          sha256(data), fmt, meta)])
