"""Reading a committed generation of an embedded knowledge base through LanceDB's native core
alone, without importing the ``lancedb`` Python package.

``import lancedb`` costs about a second on a quiet machine and three on a busy one (its REST
namespace client builds hundreds of pydantic validators at import, and ``pyarrow.dataset``
brings pandas): more than everything else a cold ``ragsift list`` or ``ragsift query`` does.
A reader needs none of it: it opens three tables at the versions the manifest names and scans
columns of them, which LanceDB's native extension (``lancedb._lancedb``, the same code the Python
package drives) does by itself, loaded in a few milliseconds.

``open_table`` gives a ``ReadTable`` with the few read calls the store makes (``schema``,
``count_rows``, ``to_arrow``, ``search()`` with ``where`` / ``select`` / ``with_row_id`` /
``limit`` / ``to_arrow``), answered by the native core; any other call (a vector search, a
write) goes to a LanceDB table opened at the same version, importing ``lancedb`` then. Writers
always use ``lancedb`` (``lance_files.connect``).

The native module is loaded under its own name (``lancedb._lancedb``), so a later ``import
lancedb`` in the same process finds it loaded and uses this one: the two share one Rust core and
one cache session. When the extension cannot be found or does not have the calls used here (a
LanceDB other than the one ``pyproject.toml`` pins), or ``$RAGSIFT_LANCE_NATIVE=0``, every table is
LanceDB's own.
"""
from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

log = logging.getLogger(__name__)

T = TypeVar("T")
NAME = "lancedb._lancedb"
#: what the reader calls on the native module, its connection, table and query
NEEDED = ("connect", "Session")

_native: Any = None  # the module, False when it cannot be used
_native_lock = threading.Lock()


def native() -> Any | None:
    """LanceDB's native extension module, loaded without the ``lancedb`` package (or the one
    already loaded); None when it cannot be used here."""
    global _native
    if _native is None:
        with _native_lock:
            if _native is None:
                _native = _load() or False
    return _native or None


def _load() -> Any | None:
    if os.environ.get("RAGSIFT_LANCE_NATIVE", "").strip() == "0":
        return None
    mod = sys.modules.get(NAME)
    if mod is None:
        try:
            spec = importlib.util.find_spec("lancedb")  # finds the package without running it
            folders = list(spec.submodule_search_locations or []) if spec else []
            files = [Path(d) / f"_lancedb{s}" for d in folders for s in importlib.machinery.EXTENSION_SUFFIXES]
            path = next((f for f in files if f.is_file()), None)
            if path is None:
                return None
            loader = importlib.machinery.ExtensionFileLoader(NAME, str(path))
            ext = importlib.util.spec_from_file_location(NAME, str(path), loader=loader)
            if ext is None:
                return None
            mod = importlib.util.module_from_spec(ext)
            loader.exec_module(mod)
        except (ImportError, OSError, ValueError) as e:
            log.debug("LanceDB's native module not loaded on its own (%s): reading through lancedb", e)
            return None
        mod = sys.modules.setdefault(NAME, mod)
    if not all(hasattr(mod, n) for n in NEEDED):
        return None
    return mod


class _Loop:
    """One event loop on a daemon thread that runs the native core's coroutines for every
    thread of the process (what LanceDB's own synchronous tables do); started at first use and
    again in a forked child (the thread does not survive ``fork``)."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _get(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="ragsift-lance-read", daemon=True).start()
                self._loop = loop
            return self._loop

    def reset(self) -> None:
        self._loop = None
        self._lock = threading.Lock()

    def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` (which makes a native awaitable: it must be made on the loop's thread) run to
        its end."""
        async def go() -> T:
            return await call()
        fut = asyncio.run_coroutine_threadsafe(go(), self._get())
        try:
            return fut.result()
        except BaseException:
            fut.cancel()
            raise


LOOP = _Loop()


async def _collect(make: Callable[[], Awaitable[Any]]) -> pa.Table:
    stream = await make()
    batches = [b async for b in stream]
    return pa.Table.from_batches(batches, schema=stream.schema)


class Scan:
    """An unranked query of a ``ReadTable``: LanceDB's ``table.search()`` with no vector."""

    def __init__(self, table: ReadTable) -> None:
        self._table = table
        self._where: str | None = None
        self._columns: list[str] | None = None
        self._row_id = False
        self._limit: int | None = None

    def where(self, clause: str) -> Scan:
        self._where = clause
        return self

    def select(self, columns: list[str]) -> Scan:
        self._columns = list(columns)
        return self

    def with_row_id(self, on: bool = True) -> Scan:
        self._row_id = on
        return self

    def limit(self, n: int) -> Scan:
        self._limit = n
        return self

    def to_arrow(self) -> pa.Table:
        def make() -> Awaitable[Any]:
            q = self._table.inner.query()
            if self._limit is not None:
                q.limit(self._limit)
            if self._columns:
                q.select_columns(self._columns)
            if self._where is not None:
                q.where(self._where)
            if self._row_id:
                q.with_row_id()
            return q.execute(None, None)
        return LOOP.run(lambda: _collect(make))


class ReadTable:
    """A LanceDB table pinned at one version, read through the native core (``open_table``)."""

    def __init__(self, folder: Path, name: str, inner: Any, version: int, connect: Callable[[Path], Any]) -> None:
        self.folder, self.name, self.inner, self.version = folder, name, inner, version
        self._connect = connect
        self._schema: pa.Schema | None = None
        self._lancedb: Any = None

    @property
    def schema(self) -> pa.Schema:
        if self._schema is None:
            self._schema = LOOP.run(self.inner.schema)
        return self._schema

    def count_rows(self, filter: str | None = None) -> int:  # noqa: A002 - LanceDB's name
        return int(LOOP.run(lambda: self.inner.count_rows(filter)))

    def to_arrow(self) -> pa.Table:
        return Scan(self).to_arrow()

    def search(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:  # a vector or full-text search: LanceDB's own query builder
            return self.lancedb_table().search(*args, **kwargs)
        return Scan(self)

    def lancedb_table(self) -> Any:
        """The same table at the same version opened by ``lancedb`` (imported now)."""
        if self._lancedb is None:
            t = self._connect(self.folder).open_table(self.name)
            t.checkout(self.version)
            self._lancedb = t
        return self._lancedb

    def __getattr__(self, name: str) -> Any:  # any other call: LanceDB's table
        if name.startswith("_") or name in ("folder", "name", "inner", "version"):  # not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.lancedb_table(), name)


_connections: dict[str, Any] = {}
_connections_lock = threading.Lock()


def _after_fork() -> None:
    global _connections_lock
    LOOP.reset()
    _connections.clear()  # made by the parent's runtime
    _connections_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def open_table(folder: Path, name: str, version: int, session: Any, connect: Callable[[Path], Any]) -> Any:
    """Table ``name`` of the LanceDB database in ``folder`` at ``version``: a ``ReadTable`` when the
    native core can be used alone, else LanceDB's table (checked out at that version). ``connect``
    makes a ``lancedb`` connection (``lance_files.connect``), for what the native core is not asked."""
    mod = native()
    if mod is None:
        t = connect(folder).open_table(name)
        t.checkout(version)
        return t
    uri = str(Path(folder).absolute())
    with _connections_lock:
        conn = _connections.get(uri)
    if conn is None:
        conn = LOOP.run(lambda: mod.connect(uri, None, None, None, None, None, None, None, session))
        with _connections_lock:
            conn = _connections.setdefault(uri, conn)
    inner = LOOP.run(lambda: conn.open_table(name))
    LOOP.run(lambda: inner.checkout(version))
    return ReadTable(Path(folder), name, inner, version, connect)
