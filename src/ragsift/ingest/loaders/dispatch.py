"""A file (or a file's bytes) to the loader its suffix registers, checked first: its size, that
its content is what its suffix says, and every failure a skipped file with its reason."""
from __future__ import annotations

from pathlib import Path

from ragsift.ingest.loaders.base import (
    LOADERS,
    MAX_FILE_BYTES,
    LoadLimits,
    LoadResult,
    OverLimit,
    budget_now,
    restore_budget,
    skipped,
)
from ragsift.ingest.loaders.sniff import mismatch


def load_file(path: Path, source: str, limits: LoadLimits | int = MAX_FILE_BYTES) -> LoadResult:
    """Load one file with the loader ``LOADERS`` registers for its suffix; ``source`` is its stable
    name (path relative to the ingest root). ``limits``: what reading it may cost (an int: the most
    bytes, other limits their defaults)."""
    if isinstance(limits, int):
        limits = LoadLimits(max_bytes=limits)
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        return skipped(source, f"unsupported file type {path.suffix or '(none)'!r}; "
                               f"supported: {', '.join(sorted(LOADERS.names()))}")
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            return skipped(source, f"file too large ({size} bytes; limit {limits.max_bytes}, setting max_file_mb)")
        data = path.read_bytes()
    except OSError as e:
        return skipped(source, f"cannot read file: {e.strerror or e}")
    return load_bytes(data, suffix, source, limits)


def load_bytes(data: bytes, suffix: str, source: str, limits: LoadLimits) -> LoadResult:
    """Load a file's bytes by its suffix (what an archive or a mail's attachment is read with):
    an empty file, one whose content is not what the suffix says, one over its limits and a
    damaged one are skipped with their reason."""
    if suffix not in LOADERS:
        return skipped(source, f"unsupported file type {suffix or '(none)'!r}")
    if not data.strip():
        return skipped(source, "empty file")
    wrong = mismatch(data, suffix)
    if wrong:
        return skipped(source, wrong)
    outer = budget_now()
    kind = suffix.lstrip(".").upper()
    try:
        return LOADERS.make(suffix, data, source, limits)
    except OverLimit as e:
        return skipped(source, f"{kind} {e}; skipped")
    except Exception as e:  # a damaged file: each reader raises its own kinds
        over = _cause(e, OverLimit)  # a reader may wrap a limit (pdfplumber: PdfminerException)
        if over is not None:
            return skipped(source, f"{kind} {over}; skipped")
        if _cause(e, MemoryError) is not None:  # a reader may wrap it (pdfplumber: PdfminerException)
            return skipped(source, f"{kind} needed more memory than reading a file may take "
                                   f"({limits.max_memory_mb} MB, setting max_reader_mb); skipped")
        if _cause(e, RecursionError) is not None:
            return skipped(source, f"unreadable {kind}: RecursionError (nested too deeply)")
        text = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        return skipped(source, f"unreadable {kind} ({type(e).__name__}): {text}")
    finally:
        restore_budget(outer)  # the budget the loader opened is closed with it


def _cause(e: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``e``, or the exception of ``kind`` it was raised from or while handling (None if none)."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kind):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
