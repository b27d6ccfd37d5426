"""Stores: the embedded LanceDB default and Milvus for scale-out, behind one interface
(``ragsift.store.base.Store``). The embedded store keeps its search indexes in memory, by segment
(``segments``, ``memindex``: vectors, BM25 with a compiled search, sparse vectors) and its
generations in LanceDB files (``lance``, ``lance_files``, ``lance_upkeep``); filters compile to
each store's own language (``filters``).

Each kind of store is one registration in ``STORES``: ``@register_store(kind, ...)`` on the
function that opens it makes a ``StoreBackend``, which says what else can be done with a
knowledge base on it (checked or restored from its files, its statistics read without opening
it, the default name of a store kept apart from the directory) and which protocols its stores
implement besides ``Store`` (``base.HybridSearch``). The functions below ask the backend of a
knowledge base's store kind; nothing here or above branches on the kind. What a backend gives
is read without importing its store's module (LanceDB takes seconds to import)."""
from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsift.config import Settings, StoreKind
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.store.base import CheckReport, HybridSearch, Store

#: what opens a store: ``(path, settings, dim, vectors) -> Store`` (``dim`` given: create it if missing)
Opener = Callable[[Path, Settings, "int | None", "dict[str, int] | None"], Store]


@dataclass(frozen=True)
class StoreBackend:
    """One kind of store as registered (``register_store``). Only ``open`` is needed; each other
    part, when given, is asked without opening the store:

    - ``check(path, settings)``: a report from the store's files, so a damaged one is reported
      rather than raised (None: the store is opened and checked);
    - ``restore(path, settings, generation)``: commit a kept generation again, returning its new
      number (None: the store keeps no older generations);
    - ``committed_stats(path)``: ``Store.stats()`` from what the last commit recorded (None, or
      it returns None: the store is opened);
    - ``identity(path)``: what a store kept in the knowledge base's directory recorded of the
      settings it was made with (``Settings.identity``), {} if nothing, None if no such store;
    - ``default_name(path)``: a store kept apart from the directory (a server's collections) is
      named from it when its settings name none (None: the store lives in the directory);
    - ``provides``: the protocols its stores implement besides ``Store`` (``HybridSearch``)."""

    kind: str
    open: Opener
    check: Callable[[Path, Settings], CheckReport] | None = None
    restore: Callable[[Path, Settings, int | None], int] | None = None
    committed_stats: Callable[[Path], dict[str, Any] | None] | None = None
    identity: Callable[[Path], dict[str, Any] | None] | None = None
    default_name: Callable[[Path], str] | None = None
    provides: tuple[type, ...] = ()

    def __call__(self, path: Path, settings: Settings, dim: int | None = None,
                 vectors: dict[str, int] | None = None) -> Store:
        return self.open(path, settings, dim, vectors)

    def can(self, protocol: type) -> bool:
        """Whether its stores implement ``protocol`` (``HybridSearch``), as registered."""
        return protocol in self.provides


#: stores by kind: a ``StoreBackend`` each (called, it opens a store)
STORES: Registry[Store] = Registry("store", ConfigError)


def register_store(kind: str, **parts: Any) -> Callable[[Opener], Opener]:
    """Decorator: register the function that opens a store of ``kind`` with the other parts of
    its ``StoreBackend`` (``check``, ``restore``, ``committed_stats``, ``identity``,
    ``default_name``, ``provides``); ``kind`` becomes a valid ``store_kind``."""

    def wrap(fn: Opener) -> Opener:
        STORES.add(kind, StoreBackend(kind, fn, **parts))
        StoreKind.add(kind)
        return fn
    return wrap


def unregister_store(kind: str) -> None:
    """Forget a registered kind (a built-in one stays a valid ``store_kind``)."""
    STORES.remove(kind)
    StoreKind.discard(kind)


def store_backend(kind: str | StoreKind) -> StoreBackend:
    """The backend registered for a store kind (``ConfigError`` naming the valid ones if none)."""
    made = STORES.factory(str(kind))
    return made if isinstance(made, StoreBackend) else StoreBackend(str(kind), made)


def backends_that(protocol: type) -> list[str]:
    """The kinds whose stores implement ``protocol`` (for a message saying where it runs)."""
    return [k for k in STORES.names() if store_backend(k).can(protocol)]


def default_store_name(path: Path) -> str:
    """A collection prefix from a knowledge-base directory name, made unique."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", path.resolve().name).strip("_")[:40] or "kb"
    return f"rs_{stem}_{uuid.uuid4().hex[:8]}"


def open_store(path: Path, settings: Settings, dim: int | None = None, vectors: dict[str, int] | None = None) -> Store:
    """The store a knowledge base's settings name (``STORES``); ``dim`` given: create it if
    missing, with ``vectors`` (extra embedder name -> dimension) and learned sparse vectors if
    the settings name a sparse encoder."""
    return STORES.make(settings.store.kind.value, path, settings, dim, vectors)


def named(settings: Settings, path: Path) -> Settings:
    """The settings of a new knowledge base at ``path``: a store kept apart from the directory
    named from it when they name none (``StoreBackend.default_name``)."""
    backend = store_backend(settings.store.kind)
    if backend.default_name is None or settings.store.name:
        return settings
    return settings.replace(store_name=backend.default_name(path))


def placed(settings: Settings, path: Path) -> Settings:
    """The settings of a copy at ``path``: a store in the directory has no address or name, a
    store kept apart is named as ``named`` names it."""
    if store_backend(settings.store.kind).default_name is None:
        return settings.replace(store_uri="", store_name="")
    return named(settings, path)


def stored_identity(path: Path, settings: Settings | None = None) -> dict[str, Any] | None:
    """What the store kept in the directory ``path`` recorded of the settings it was made with
    (``Settings.identity``), read without opening it: {} when it holds a store made before they
    were recorded, None when it holds none. Of the store ``settings`` name, or (None: a
    directory without its settings file) of any backend that keeps its store there."""
    kinds = [settings.store.kind.value] if settings is not None else STORES.names()
    for kind in kinds:
        read = store_backend(kind).identity
        found = read(path) if read is not None else None
        if found is not None:
            return found
    return None


def committed_stats(path: Path, settings: Settings) -> dict[str, Any] | None:
    """A store's stats as its last commit recorded them, without opening it
    (``StoreBackend.committed_stats``); None where its backend or its commit records none."""
    read = store_backend(settings.store.kind).committed_stats
    return read(path) if read is not None else None


def check_store(path: Path, settings: Settings) -> CheckReport:
    """Check a knowledge base's store: from its files where its backend can (a damaged manifest or
    data file is reported rather than raised), else opened and checked."""
    backend = store_backend(settings.store.kind)
    if backend.check is not None:
        return backend.check(path, settings)
    store = open_store(path, settings)
    try:
        return store.check()
    finally:
        store.close()


def restore_store(path: str | Path, settings: Settings, generation: int | None = None) -> int:
    """Commit a kept generation again as the newest; returns its new number."""
    backend = store_backend(settings.store.kind)
    if backend.restore is None:
        raise ConfigError(f"the {backend.kind} store keeps no older generations to restore")
    return backend.restore(Path(path), settings, generation)


# ---------------------------------------------------------------------- the embedded LanceDB store
def _lance_check(path: Path, settings: Settings) -> CheckReport:
    from ragsift.store import lance_upkeep

    return lance_upkeep.check(path)


def _lance_restore(path: Path, settings: Settings, generation: int | None) -> int:
    from ragsift.store import lance_upkeep

    st = settings.store
    return lance_upkeep.restore(path, generation, lock_timeout_s=st.lock_timeout_s, keep=st.keep_generations)


def _lance_stats(path: Path) -> dict[str, Any] | None:
    """From the manifest, without opening a table (``lance_files.committed_stats``)."""
    from ragsift.store.lance_files import committed_stats as from_manifest

    return from_manifest(path)


def _lance_identity(path: Path) -> dict[str, Any] | None:
    """From the manifest, without opening the store."""
    from ragsift.store.lance_files import MANIFEST

    f = path / MANIFEST
    if not f.exists():
        return None
    try:
        m = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return dict(m.get("identity") or {}) if isinstance(m, dict) else {}


@register_store(StoreKind.LANCEDB.value, check=_lance_check, restore=_lance_restore, committed_stats=_lance_stats,
                identity=_lance_identity)
def _lancedb(path: Path, settings: Settings, dim: int | None, vectors: dict[str, int] | None) -> Store:
    from ragsift.store.lance import LanceStore

    st = settings.store
    return LanceStore(path, dim=dim, vectors=vectors, sparse=bool(settings.index.sparse_encoder),
                      lock_timeout_s=st.lock_timeout_s, keep_generations=st.keep_generations,
                      optimize_every=st.optimize_every, identity=settings.identity())


# ---------------------------------------------------------------------- Milvus
def _milvus_restore(path: Path, settings: Settings, generation: int | None) -> int:
    raise ConfigError("only the embedded LanceDB store keeps older generations to restore; "
                      "restore a Milvus knowledge base from the server's backups")


@register_store(StoreKind.MILVUS.value, restore=_milvus_restore, default_name=default_store_name,
                provides=(HybridSearch,))
def _milvus(path: Path, settings: Settings, dim: int | None, vectors: dict[str, int] | None) -> Store:
    from ragsift.store.milvus import MilvusStore

    st = settings.store
    if not st.uri:
        raise ConfigError("store = 'milvus' needs store_uri, e.g. http://127.0.0.1:19530")
    return MilvusStore(st.uri, st.name, dim=dim, index=st.index, vectors=vectors,
                       sparse=bool(settings.index.sparse_encoder), lock_timeout_s=st.lock_timeout_s,
                       identity=settings.identity())
