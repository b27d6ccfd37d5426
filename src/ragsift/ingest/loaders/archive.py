"""ZIP archives: every member whose type a loader reads is loaded with it, as documents of
their own named ``archive.zip/path/in/archive`` (hidden members and folders left out). Limits:
at most ``MAX_MEMBERS`` members, each within ``max_file_mb`` unpacked, all of them within
``MAX_UNPACKED_FACTOR`` times the archive's size plus ``max_file_mb``, a member's packing ratio at
most ``MAX_RATIO`` (a bomb is stopped before it is unpacked, by the sizes the archive declares,
and checked again as it is read), archives in archives at most ``MAX_DEPTH`` deep. Members are
never written to disk; their names are never paths."""
from __future__ import annotations

import io
import zipfile
from dataclasses import replace
from pathlib import PurePosixPath

from ragsift.ingest.loaders.base import LOADERS, MAX_DEPTH, Budget, LoadLimits, LoadResult, OverLimit, register
from ragsift.ingest.loaders.sniff import Zip
from ragsift.types import Skipped

MAX_MEMBERS = 10_000
MAX_RATIO = 200  # unpacked bytes per packed byte of one member
MAX_UNPACKED_FACTOR = 20


@register(".zip", signature=Zip("ZIP archive"))
def load_zip(data: bytes, source: str, limits: LoadLimits) -> LoadResult:
    from ragsift.ingest.loaders.dispatch import load_bytes  # the loaders of every format, registered by then

    budget = Budget(limits)
    res = LoadResult()
    if limits.depth >= MAX_DEPTH:
        res.skipped.append(Skipped(source, f"an archive nested more than {MAX_DEPTH} deep"))
        return res
    z = zipfile.ZipFile(io.BytesIO(data))
    members = [i for i in z.infolist() if not i.is_dir()]
    if len(members) > MAX_MEMBERS:
        raise OverLimit(f"{len(members)} members; at most {MAX_MEMBERS}")
    allowed = MAX_UNPACKED_FACTOR * len(data) + limits.max_bytes
    if sum(i.file_size for i in members) > allowed:
        raise OverLimit(f"its members unpack to {sum(i.file_size for i in members)} bytes, more than {allowed} "
                        "(a decompression bomb?)")
    for info in members:
        budget.earn(1)  # a member is a page of work (and what it holds counts for the archive too)
        budget.tick()
        name = info.filename
        where = f"{source}/{name}"
        parts = PurePosixPath(name).parts
        if any(p.startswith(".") or p == "__MACOSX" for p in parts):
            continue
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in LOADERS:
            res.skipped.append(Skipped(where, f"unsupported file type {suffix or '(none)'!r}"))
            continue
        if info.file_size > limits.max_bytes:
            res.skipped.append(Skipped(where, f"file too large ({info.file_size} bytes unpacked; setting max_file_mb)"))
            continue
        if info.compress_size and info.file_size / info.compress_size > MAX_RATIO and info.file_size > 1_000_000:
            res.skipped.append(Skipped(where, f"packed {info.file_size // max(1, info.compress_size)}:1 (a "
                                              "decompression bomb?)"))
            continue
        with z.open(info) as f:
            payload = f.read(limits.max_bytes + 1)
        if len(payload) > limits.max_bytes:
            res.skipped.append(Skipped(where, "unpacks past max_file_mb (its declared size was wrong)"))
            continue
        res.extend(load_bytes(payload, suffix, where, replace(limits, depth=limits.depth + 1)))
    return res
