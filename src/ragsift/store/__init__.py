"""Stores: the embedded LanceDB default and Milvus for scale-out, behind one interface
(``ragsift.store.base.Store``), registered in ``STORES`` by kind. The embedded store keeps its
search indexes in memory, by segment (``segments``, ``memindex``: vectors, BM25 with a compiled
search, sparse vectors) and its generations in LanceDB files (``lance``, ``lance_files``,
``lance_upkeep``); filters compile to each store's own language (``filters``). Opening,
checking, restoring and the committed statistics are here, by store kind."""
from __future__ import annotations

import re
import uuid
from pathlib import Path

from ragsift.config import Settings, StoreKind
from ragsift.errors import ConfigError
from ragsift.registry import Registry
from ragsift.store.base import CheckReport, Store


def default_store_name(path: Path) -> str:
    """A Milvus collection prefix from a knowledge-base directory name, made unique."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", path.resolve().name).strip("_")[:40] or "kb"
    return f"rs_{stem}_{uuid.uuid4().hex[:8]}"


#: stores by kind: ``factory(path, settings, dim, vectors) -> Store`` (``dim`` given: create if missing)
STORES: Registry[Store] = Registry("store", ConfigError)


@STORES.register(StoreKind.LANCEDB.value)
def _lancedb(path: Path, settings: Settings, dim: int | None, vectors: dict[str, int] | None) -> Store:
    from ragsift.store.lance import LanceStore

    st = settings.store
    return LanceStore(path, dim=dim, vectors=vectors, sparse=bool(settings.index.sparse_encoder),
                      lock_timeout_s=st.lock_timeout_s, keep_generations=st.keep_generations,
                      optimize_every=st.optimize_every, identity=settings.identity())


@STORES.register(StoreKind.MILVUS.value)
def _milvus(path: Path, settings: Settings, dim: int | None, vectors: dict[str, int] | None) -> Store:
    from ragsift.store.milvus import MilvusStore

    st = settings.store
    if not st.uri:
        raise ConfigError("store = 'milvus' needs store_uri, e.g. http://127.0.0.1:19530")
    return MilvusStore(st.uri, st.name, dim=dim, index=st.index, vectors=vectors,
                       sparse=bool(settings.index.sparse_encoder), lock_timeout_s=st.lock_timeout_s,
                       identity=settings.identity())


def open_store(path: Path, settings: Settings, dim: int | None = None, vectors: dict[str, int] | None = None) -> Store:
    """The store a knowledge base's settings name (``STORES``); ``dim`` given: create it if
    missing, with ``vectors`` (extra embedder name -> dimension) and learned sparse vectors if
    the settings name a sparse encoder."""
    return STORES.make(settings.store.kind.value, path, settings, dim, vectors)


def embedded_identity(path: Path) -> dict | None:
    """What an embedded (LanceDB) store at ``path`` recorded of the settings it was made with
    (``Settings.identity``): {} when it holds a store made before they were recorded, None when
    it holds no embedded store. Read from its manifest without opening it."""
    import json

    from ragsift.store.lance_files import MANIFEST

    f = path / MANIFEST
    if not f.exists():
        return None
    try:
        m = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return dict(m.get("identity") or {}) if isinstance(m, dict) else {}


def committed_stats(path: Path) -> dict | None:
    """An embedded (LanceDB) store's stats from its manifest, without opening a table
    (``lance_files.committed_stats``); None where the manifest records no counts."""
    from ragsift.store.lance_files import committed_stats as from_manifest

    return from_manifest(path)


def check_store(path: Path, settings: Settings) -> CheckReport:
    """Check a knowledge base's store; an embedded one is checked from its files, so a damaged
    manifest or data file is reported rather than raised."""
    if settings.store.kind is StoreKind.LANCEDB:
        from ragsift.store import lance_upkeep

        return lance_upkeep.check(path)
    store = open_store(path, settings)
    try:
        return store.check()
    finally:
        store.close()


def restore_store(path: str | Path, settings: Settings, generation: int | None = None) -> int:
    """Commit a kept generation again as the newest (LanceDB); returns its new number."""
    st = settings.store
    if st.kind is not StoreKind.LANCEDB:
        raise ConfigError("only the embedded LanceDB store keeps older generations to restore; "
                          "restore a Milvus knowledge base from the server's backups")
    from ragsift.store import lance_upkeep

    return lance_upkeep.restore(path, generation, lock_timeout_s=st.lock_timeout_s, keep=st.keep_generations)
