"""Uploaded files, saved where an ingest job reads them. A file's name is hostile until
proven otherwise: only a plain file name is accepted (no directory part, no "..", no absolute
path, no hidden or control characters), so nothing is written outside the job's folder."""
from __future__ import annotations

import re
import shutil
import unicodedata
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragsift.errors import LimitError, StorageFull, UploadError

__all__ = ["UploadError", "safe_name", "save_uploads"]
MAX_NAME_BYTES = 255
_BAD = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")


def safe_name(name: str | None) -> str:
    """The upload's file name if it is a plain, harmless file name; else UploadError."""
    if not name:
        raise UploadError("an uploaded file has no name")
    n = unicodedata.normalize("NFC", name)
    if _BAD.search(n) or n in (".", "..") or n.startswith(".") or n != n.strip() \
            or any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in n):
        raise UploadError(f"refused file name {name!r}: a plain file name is needed (no directories, '..', "
                          "leading dot, or control characters)")
    if len(n.encode("utf-8")) > MAX_NAME_BYTES:
        raise UploadError(f"refused file name: longer than {MAX_NAME_BYTES} bytes")
    return n


def save_uploads(root: Path, files: Sequence[Any], max_bytes: int) -> Path:
    """Save uploaded files (objects with ``filename`` and a binary ``file``) into a new folder
    under ``root``; returns the folder. Names are checked before anything is written."""
    names = [safe_name(f.filename) for f in files]
    if len(set(names)) != len(names):
        raise UploadError("two uploaded files have the same name")
    folder = root / uuid.uuid4().hex
    try:
        folder.mkdir(parents=True)
    except OSError as e:
        raise _os_error(e) from None
    try:
        total = 0
        for f, name in zip(files, names):
            target = folder / name
            if target.resolve().parent != folder.resolve():  # belt and braces: never outside the folder
                raise UploadError(f"refused file name {name!r}")
            with target.open("wb") as out:
                while block := f.file.read(1 << 20):
                    total += len(block)
                    if total > max_bytes:
                        raise LimitError(f"an upload may be at most {max_bytes} bytes")
                    out.write(block)
        return folder
    except OSError as e:
        shutil.rmtree(folder, ignore_errors=True)
        raise _os_error(e) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _os_error(e: OSError) -> Exception:
    """A full disk is StorageFull (507); anything else is the server's own trouble."""
    import errno

    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFull("the server's disk is full: the upload was not saved (nothing was ingested)")
    return e
