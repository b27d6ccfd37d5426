"""Files of the saved indexes: a folder that appears whole or not at all (``saved_folder``), a
file replaced whole (``replacing``), and a read-only map without read-ahead (``random_access_map``)."""
from __future__ import annotations

import mmap
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A file to write that replaces ``path`` whole when done (one rename), or leaves it as it was."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def saved_folder(directory: Path) -> Iterator[Path]:
    """A folder to fill that becomes ``directory`` whole (one rename) or not at all: readers never
    see half a saved index. Where another process saved it first, theirs stays."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=directory.parent))
    try:
        yield tmp
        try:
            tmp.rename(directory)
        except OSError:  # saved by another process meanwhile
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def random_access_map(path: Path) -> mmap.mmap:
    """A read-only map of a file read at random places: no read-ahead, so what stays resident
    is what look-ups touched."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(m, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        m.madvise(mmap.MADV_RANDOM)
    return m
