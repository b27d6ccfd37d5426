"""Finding the files to load under a folder, and what a file is named."""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath


def source_title(source: str) -> str:
    """The title of a document that has none of its own: its file name without the suffix."""
    return PurePosixPath(source.replace("\\", "/")).stem or source


#: why a link out of the folder is not read
OUTSIDE = "symbolic link to a file outside the folder (not followed; setting follow_outside_links)"


def iter_files(root: Path, follow_outside_links: bool = False) -> Iterator[Path | tuple[Path, str]]:
    """The files to load under ``root`` (hidden ones left out), and, as (path, reason), every
    entry that is not loaded for another reason: a dangling symbolic link, a link loop, a
    link to a directory (not followed), a link to a file outside ``root`` (its target, links
    resolved, is not under ``root``'s: not followed unless ``follow_outside_links``), a FIFO,
    socket or device, an unreadable directory. A file named alone (``root`` is not a directory)
    is the operator's choice: read wherever a link takes it."""
    if not root.is_dir():
        kind = _not_a_file(root)
        yield (root, kind) if kind else root
        return
    top = root.resolve()
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
            if kind is None and not follow_outside_links and entry.is_symlink() and not _within(path, top):
                kind = OUTSIDE
            if kind != "":
                found.append((path, kind))
    for path, kind in sorted(found, key=lambda pk: str(pk[0])):
        yield path if kind is None else (path, kind)


def _within(path: Path, top: Path) -> bool:
    """Whether ``path``, links resolved, is ``top`` (a resolved folder) or under it."""
    try:
        return path.resolve().is_relative_to(top)
    except (OSError, RuntimeError):  # cannot be resolved: not known to be inside
        return False


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` is not loaded, or None for a regular file (or a link to one)."""
    try:
        st = path.stat()
    except OSError as e:
        try:
            link = path.is_symlink()
        except OSError:  # gone meanwhile (a process's entry under /proc), or not even its link readable
            link = False
        if link:
            return "symbolic link loop" if e.errno == errno.ELOOP else "dangling symbolic link"
        return f"cannot read: {e.strerror or e}"
    if stat.S_ISDIR(st.st_mode):
        return "symbolic link to a directory (not followed)" if path.is_symlink() else ""
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device"
        return f"not a regular file ({kind})"
    return None
