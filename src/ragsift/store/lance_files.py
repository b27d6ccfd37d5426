"""The files of an embedded (LanceDB) knowledge base besides its tables: the manifest (the
commit point), the generations kept beside it (``generations/<N>.json``), the writer's lock
file, and how each is written. Shared by the store (``lance``) and by ``check`` and
``restore`` (``lance_upkeep``), which work from these files alone."""
from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ragsift.errors import StoreError, WriterBusy, os_reason

MANIFEST = "manifest.json"
GENERATIONS = "generations"
FORMAT = 1
TABLES = ("documents", "parents", "children")


log = logging.getLogger(__name__)

# each of LanceDB's two caches (table metadata, index pages), per process, unless
# $RAGSIFT_LANCE_CACHE_MB says otherwise
CACHE_MB = 16
_session: Any = None
_session_lock = threading.Lock()


def cache_mb() -> int:
    """The size of each of LanceDB's caches in this process ($RAGSIFT_LANCE_CACHE_MB, default 16;
    a value that is not a whole number is said in the log and the default used)."""
    raw = os.environ.get("RAGSIFT_LANCE_CACHE_MB", "").strip()
    try:
        return max(1, int(raw)) if raw else CACHE_MB
    except ValueError:
        log.warning("RAGSIFT_LANCE_CACHE_MB=%r is not a whole number of megabytes; using %d", raw, CACHE_MB)
        return CACHE_MB


#: characters LanceDB refuses in a path (ASCII control characters)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def checked(folder: Path) -> Path:
    """``folder`` made absolute, refused when LanceDB cannot open it."""
    if CONTROL.search(str(folder)):
        raise StoreError(f"a knowledge base on LanceDB cannot be in {str(folder)!r}: its path holds a control "
                         "character (LanceDB refuses them); choose a folder name without one")
    # absolute: LanceDB expands a leading "~" of the path it is given, so a knowledge base in a
    # folder named "~x" would keep its settings there and its tables in a home directory
    return Path(folder).absolute()


def session() -> Any:
    """The process's one LanceDB session, whose caches are bounded (``cache_mb``): from LanceDB's
    native module alone when it loads on its own (``lance_read``), so a reader imports no
    ``lancedb``; the same class either way."""
    global _session
    with _session_lock:
        if _session is None:
            from ragsift.store.lance_read import native  # pyarrow: not for what reads the manifest only

            mod: Any = native()
            if mod is None:
                import lancedb

                mod = lancedb
            size = cache_mb() << 20
            _session = mod.Session(index_cache_size_bytes=size, metadata_cache_size_bytes=size)
        return _session


def connect(folder: Path, **kwargs: Any) -> Any:
    """A LanceDB connection to ``folder`` that shares the process's one session, whose caches are
    bounded (``cache_mb``). LanceDB's own defaults are sized in gigabytes and every table version
    a long-running process opens adds to them: one commit a round grew a writer's and a reader's
    process by about 0.9 MB a commit, without end, and by 0.02 MB with caches of 1 MB
    (docs/benchmarks.md, the soak section); queries measured no slower with them."""
    import lancedb

    return lancedb.connect(str(checked(folder)), session=session(), **kwargs)


def open_read(folder: Path, name: str, version: int) -> Any:
    """Table ``name`` at ``version`` for reading (``lance_read.open_table``: LanceDB's native core
    without the ``lancedb`` package where it can)."""
    from ragsift.store.lance_read import open_table

    return open_table(checked(folder), name, version, session(), connect)


def cache_session() -> Any:
    """The process's one LanceDB session (its caches: ``size_bytes``), None before a ``connect``."""
    return _session


def write_atomic(path: Path, data: str) -> None:
    """``data`` written to ``path`` whole or not at all (a temporary beside it, fsync, rename,
    fsync of the folder): each file of a commit's publish (benchmarks/kill_ingest.py kills here)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def manifest_problem(m: Any) -> str | None:
    """What makes ``m`` not a manifest of this format, or None."""
    if not isinstance(m, dict):
        return "not a JSON object"
    if m.get("format") != FORMAT:
        return f"format {m.get('format')!r} is not {FORMAT}"
    for key in ("generation", "dim"):
        if not isinstance(m.get(key), int) or isinstance(m.get(key), bool):
            return f"{key!r} is not an integer"
    versions = m.get("versions")
    if not isinstance(versions, dict) or not all(isinstance(versions.get(t), int) for t in TABLES):
        return "'versions' does not name a version of every table"
    return None


def generation_file(path: Path, generation: int) -> Path:
    return path / GENERATIONS / f"{generation:010d}.json"


def saved_generations(path: Path) -> list[int]:
    """The generations whose manifests are kept in ``generations/``, oldest first."""
    folder = path / GENERATIONS
    if not folder.is_dir():
        return []
    return sorted(int(f.name[:-5]) for f in folder.iterdir() if re.fullmatch(r"\d{10}\.json", f.name))


def stats_of(path: Path, manifest: dict[str, Any], counts: dict[str, int], fields: dict[str, str]) -> dict[str, Any]:
    """An embedded store's stats: its counts, generation, fields and files (what ``LanceStore.stats``
    and ``committed_stats`` both give)."""
    size = sum(f.stat().st_size for f in (path / "lance").rglob("*") if f.is_file())
    generation = int(manifest["generation"])
    return {"backend": "lancedb", "path": str(path), "generation": generation,
            "documents": counts["documents"], "parents": counts["parents"], "children": counts["children"],
            "dim": manifest["dim"], "fields": fields, "disk_bytes": size, "committed_at": manifest.get("committed_at"),
            "kept_generations": [g for g in saved_generations(path) if g <= generation]}


def committed_stats(path: Path) -> dict[str, Any] | None:
    """The stats of the embedded store at ``path`` read from its manifest, which records the row
    counts at each commit, without opening a table (LanceDB takes seconds to import); None when
    there is no manifest or it records no counts (committed before they were)."""
    from ragsift.store.base import known_fields

    try:
        m = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    counts = m.get("counts") if isinstance(m, dict) else None
    if manifest_problem(m) or not isinstance(counts, dict) or not all(isinstance(counts.get(t), int) for t in TABLES):
        return None
    return stats_of(path, m, counts, known_fields(m.get("fields") or {}))


def publish(path: Path, manifest: dict[str, Any], keep: int) -> None:
    """Commit ``manifest``: keep a copy in ``generations/``, replace ``manifest.json`` (the
    commit point), then forget the generations past the last ``keep``."""
    text = json.dumps(manifest, indent=1)
    generation = int(manifest["generation"])
    (path / GENERATIONS).mkdir(exist_ok=True)
    write_atomic(generation_file(path, generation), text)
    write_atomic(path / MANIFEST, text)
    for g in saved_generations(path):
        if g <= generation - keep or g > generation:
            generation_file(path, g).unlink(missing_ok=True)


class WriteLock:
    """The one-writer lock of a knowledge-base directory (portable: ``filelock``); a second
    writer waits up to ``timeout`` seconds for it."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.folder = path
        self.timeout = timeout
        # not thread-local: a server may begin a write in one thread and end it in another
        self.lock = FileLock(path / ".write.lock", timeout=timeout, thread_local=False)

    def __enter__(self) -> WriteLock:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def acquire(self) -> None:
        try:  # a folder where the lock cannot be made (read-only, /proc) is said as such, not waited on as busy
            os.close(os.open(self.lock.lock_file, os.O_RDWR | os.O_CREAT, 0o644))
        except OSError as e:
            raise StoreError(f"cannot write to {self.folder}: {os_reason(e, self.folder)}") from None
        try:
            self.lock.acquire(poll_interval=0.05)
        except Timeout:
            raise WriterBusy(f"another process is writing to {self.folder}; waited {self.timeout:g} s "
                             "(setting lock_timeout_s); try again when it ends") from None

    def release(self) -> None:
        if self.lock.is_locked:
            self.lock.release()
