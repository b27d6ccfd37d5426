"""The embedded default store: LanceDB in one directory, zero set-up.

Layout of a knowledge base directory::

    ragsift.toml        settings (index settings fixed at creation)
    manifest.json       the committed generation: table versions + metadata fields
    generations/        the manifests of the last ``keep_generations`` commits (restorable)
    lance/              documents, parents and children tables (Lance format, versioned)
    search-cache/       saved HNSW graphs and full vectors of large generations (rebuilt if removed)
    .write.lock         held by the one writer

How one commit makes a generation visible: a write transaction appends and deletes rows in
all three tables, which creates new Lance table versions that no reader looks at. Readers
pin the table versions named in ``manifest.json``. ``commit()`` updates the full-text
index, writes the new manifest to ``generations/``, then atomically replaces
``manifest.json`` (write, fsync, rename) with it: that rename is the commit. A crash before it
leaves the old manifest, and the next writer restores each table to the version the manifest
names.

Old table versions are removed every ``optimize_every`` commits (and by ``optimize()``), except
those of the last ``keep_generations`` generations: ``ragsift check --restore`` can go back to
any of them (``ragsift.store.lance_upkeep``).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from lancedb.index import BTree

from ragsift.errors import FilterError, StoreError
from ragsift.store.base import (
    BUILTIN_FIELDS,
    LANGUAGES,
    CheckReport,
    IndexedChild,
    ManifestStore,
    StoredDocument,
    StoredHit,
    StoredParent,
    TransactionBase,
    entry_of,
    entry_order,
    export_documents,
    filterable_values,
    heading_json,
    integrity_problems,
    metadata_json,
    read_heading,
)
from ragsift.store.filters import Node, filter_fields, render_sql, sql_literal
from ragsift.store.lance_files import (
    FORMAT,
    MANIFEST,
    TABLES,
    WriteLock,
    generation_file,
    manifest_problem,
    publish,
    saved_generations,
    stats_of,
)
from ragsift.store.memindex import AnnIndex, BM25Index, FlatIndex, IdIndex, ParentTable, Rows, SparseIndex
from ragsift.types import Child, Document, Parent

log = logging.getLogger(__name__)

_ARROW_TYPES = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
                "date": pa.string(), "list": pa.list_(pa.string())}
BATCH_CHILDREN = 4096
# Below this many children dense search is exact, a matrix product over the generation's
# vectors held in memory (~150 MB at 100k children of 384 dimensions); from it on an HNSW graph
# over int8 vectors (usearch), its candidates re-ranked with the full vectors read from disk.
# The graph's search breadth and the re-rank depth were chosen by measured recall@10 against
# exact search on a million real-text vectors (benchmarks/ann_recall.py, docs/benchmarks.md).
ANN_MIN_CHILDREN = int(os.environ.get("RAGSIFT_ANN_MIN_CHILDREN", "200000"))
ANN_EXPANSION = 1024
ANN_REFINE_FACTOR = 4
SELECTIONS_MB = 64  # the rows of recent filters kept per generation (8 bytes a selected child)
CACHE = "search-cache"  # saved search indexes, one folder per generation and vector column
NEVER = timedelta(days=36500)  # optimize() that removes no version
CLEANUP_MARGIN_S = 0.25  # versions this much older than the oldest kept one are kept too


def _col(field: str) -> str:
    return field if field in BUILTIN_FIELDS else f"m_{field}"


def _schemas(dim: int, vectors: dict[str, dict[str, Any]] | None = None, sparse: bool = False
             ) -> dict[str, pa.Schema]:
    extra = [(v["column"], pa.list_(pa.float32(), int(v["dim"]))) for v in (vectors or {}).values()]
    if sparse:
        extra += [("sparse_idx", pa.list_(pa.int32())), ("sparse_val", pa.list_(pa.float32()))]
    schemas = {
        "documents": pa.schema([
            ("doc_id", pa.string()), ("source", pa.string()), ("title", pa.string()),
            ("format", pa.string()), ("content_hash", pa.string()), ("gen", pa.int64()),
            ("parents", pa.int32()), ("children", pa.int32()), ("metadata", pa.string())]),
        "parents": pa.schema([
            ("parent_id", pa.string()), ("doc_id", pa.string()), ("position", pa.int32()),
            ("heading", pa.string()), ("text", pa.string()), ("tokens", pa.int32()),
            ("gen", pa.int64()),
            # the document's source, title and metadata ride along: one look-up per query
            ("source", pa.string()), ("title", pa.string()), ("metadata", pa.string())]),
        "children": pa.schema([
            ("child_id", pa.string()), ("parent_id", pa.string()), ("doc_id", pa.string()),
            ("position", pa.int32()), ("start", pa.int32()), ("end", pa.int32()),
            ("tokens", pa.int32()), ("terms", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)), ("gen", pa.int64()),
            ("source", pa.string()), ("title", pa.string()), ("format", pa.string()),
            ("kind", pa.string()), ("lang", pa.string())]),
    }
    schemas["children"] = pa.schema(list(schemas["children"]) + [pa.field(n, t) for n, t in extra])
    return schemas


class LanceStore(ManifestStore):
    """LanceDB-backed store. One writer at a time (a lock file); any number of readers."""

    def __init__(self, path: str | Path, dim: int | None = None, vectors: dict[str, int] | None = None,
                 sparse: bool = False, lock_timeout_s: float = 10.0, keep_generations: int = 2,
                 optimize_every: int = 20, identity: dict[str, Any] | None = None) -> None:
        import lancedb

        self.path = Path(path)
        self.identity = identity
        self.lock_timeout_s = lock_timeout_s
        self.keep_generations = keep_generations
        self.optimize_every = optimize_every
        self._lancedb = lancedb
        manifest_path = self.path / MANIFEST
        if not manifest_path.exists():
            if dim is None:
                raise StoreError(f"no knowledge base at {self.path} (manifest.json missing)")
            self._create(dim, vectors or {}, sparse)
        self._db = lancedb.connect(str(self.path / "lance"))
        self._manifest_mtime = 0.0
        self._index_lock = threading.RLock()  # an index may build the shared rows while holding it
        self._selection_lock = threading.Lock()
        self._languages: tuple[int, dict[str, int]] | None = None
        self._load_manifest()

    # ------------------------------------------------------------------ set-up
    def _create(self, dim: int, vectors: dict[str, int], sparse: bool) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        with WriteLock(self.path, self.lock_timeout_s):
            if (self.path / MANIFEST).exists():
                return
            db = self._lancedb.connect(str(self.path / "lance"))
            versions = {}
            extra = {name: {"column": f"vec{i + 1}", "dim": d} for i, (name, d) in enumerate(vectors.items())}
            for name, schema in _schemas(dim, extra, sparse).items():
                t = db.create_table(name, schema=schema, exist_ok=True)
                versions[name] = t.version
            manifest = {"format": FORMAT, "generation": 0, "versions": versions, "fields": {},
                        "dim": dim, "committed_at": time.time(), "fts": False, "vectors": extra, "sparse": sparse}
            publish(self.path, self.manifest_to_commit(manifest), self.keep_generations)

    def _read_manifest(self) -> dict[str, Any]:
        p = self.path / MANIFEST
        try:
            m = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise StoreError(f"cannot read {p}: {e}; `ragsift check` tells more and `ragsift check "
                             "--restore` goes back to the last good generation") from None
        if isinstance(m, dict) and isinstance(m.get("format"), int) and m["format"] != FORMAT:
            raise StoreError(f"{p}: unsupported store format {m['format']}")
        wrong = manifest_problem(m)
        if wrong:
            raise StoreError(f"{p} is corrupted ({wrong}); `ragsift check` tells more and `ragsift check "
                             "--restore` goes back to the last good generation")
        return m

    def _load_manifest(self) -> None:
        st = (self.path / MANIFEST).stat()
        m = self._read_manifest()
        self.manifest = m
        self.generation = int(m["generation"])
        self.dim = int(m["dim"])
        self._manifest_mtime = st.st_mtime_ns
        self._tables = {}
        for name in TABLES:
            try:
                t = self._db.open_table(name)
                t.checkout(int(m["versions"][name]))
            except Exception as e:
                raise StoreError(f"table {name} at version {m['versions'][name]} cannot be read "
                                 f"({str(e).splitlines()[0][:200]}); `ragsift check` tells more") from e
            self._tables[name] = t
        self._indexes: dict[str, Any] = {}  # in-memory search indexes (and parents) of the pinned generation
        self._selections: OrderedDict[str, np.ndarray] = OrderedDict()  # a filter's rows in this generation
        # the children's columns, read once: asking the table for its schema is a round trip per query
        self._child_columns = frozenset(self._tables["children"].schema.names)

    def _manifest_changed(self) -> bool:
        try:
            return (self.path / MANIFEST).stat().st_mtime_ns != self._manifest_mtime
        except OSError as e:
            raise StoreError(f"knowledge base vanished: {e}") from None

    # ------------------------------------------------------------------ reads
    def _where(self, where: Node | None) -> str | None:
        if where is None:
            return None
        fields = self.fields()
        if "lang" not in self._child_columns and "lang" in filter_fields(where):
            raise FilterError("this knowledge base was written before entries had a language: the next "
                              "ingest adds the field (re-ingest its documents to fill it)")
        return render_sql(where, {f: _col(f) for f in fields}, frozenset(f for f, t in fields.items() if t == "list"))

    _HIT_COLS = ["child_id", "parent_id", "doc_id", "start", "end"]

    @property
    def _hit_cols(self) -> list[str]:
        """The columns a search returns (``lang`` when the table was written with it)."""
        return self._HIT_COLS + (["lang"] if "lang" in self._child_columns else [])

    def _kinds(self, kinds: Sequence[str]) -> str | None:
        """The kind filter, or None for none; "" when no entry can match (a table written
        before entry kinds existed holds chunks only)."""
        if "kind" not in self._child_columns:
            return None if "chunk" in kinds else ""
        return f"kind IN ({', '.join(sql_literal(k) for k in kinds)})"

    def _with_kinds(self, where: Node | None, kinds: Sequence[str]) -> str | None:
        parts = [p for p in (self._where(where), self._kinds(kinds)) if p is not None]
        return " AND ".join(f"({p})" for p in parts) if parts else None

    def _column(self, using: str) -> tuple[str, int]:
        if not using:
            return "vector", self.dim
        v = self.manifest.get("vectors", {}).get(using)
        if v is None:
            raise StoreError(f"this knowledge base has no vectors of embedder {using!r} "
                             f"(extra embedders: {', '.join(self.manifest.get('vectors', {})) or 'none'})")
        return v["column"], int(v["dim"])

    def search_dense(self, vector: np.ndarray, k: int, where: Node | None,
                     kinds: Sequence[str] = ("chunk",), using: str = "") -> list[StoredHit]:
        self._column(using)  # an unknown embedder is an error even on an empty store
        if self.generation == 0 or self._kinds(kinds) == "":
            return []
        index = self.dense_index(using)
        return index.search(np.asarray(vector, np.float32), k, self._select(index.rows, where, kinds))

    def _hit_columns(self) -> list[str]:
        return self._hit_cols + (["kind"] if "kind" in self._child_columns else [])

    def _memory_index(self, key: str, build: Callable[[], Any]) -> Any:
        """One in-memory index of the pinned generation, built on first use."""
        index = self._indexes.get(key)
        if index is None:
            with self._index_lock:
                index = self._indexes.get(key)
                if index is None:
                    index = self._indexes[key] = build()
        return index

    def _scan(self, columns: list[str], row_ids: bool = False) -> pa.Table:
        """These columns of every child, read with a projection (never the whole table);
        ``row_ids``: with the table's ``_rowid`` column."""
        t = self._tables["children"]
        q = t.search().select(columns)
        if row_ids:
            q = q.with_row_id(True)
        return q.limit(max(1, t.count_rows())).to_arrow()

    def _children(self, columns: list[str]) -> pa.Table:
        """These columns of every child, in the row order of the shared hit columns."""
        rows = self._hit_rows()
        tbl = self._scan(["child_id", *columns])
        if not tbl.column("child_id").equals(pa.chunked_array([rows.child_ids])):  # scans keep their order; if not
            order = IdIndex(tbl.column("child_id").combine_chunks()).rows(rows.child_ids.to_pylist())
            tbl = tbl.take(pa.array(order))
        return tbl.drop_columns(["child_id"])

    def _hit_rows(self) -> Rows:
        """The hit columns of the generation's children, shared by every in-memory index."""
        return self._memory_index("rows", lambda: Rows(self._scan(self._hit_columns(), row_ids=True)))

    def dense_index(self, using: str = "") -> FlatIndex | AnnIndex:
        """The vectors of the main embedder (or extra embedder ``using``): exact search below
        ``ANN_MIN_CHILDREN`` children, HNSW with an exact re-rank from it on."""
        column, dim = self._column(using)

        def build() -> FlatIndex | AnnIndex:
            rows = self._hit_rows()
            if rows.n < ANN_MIN_CHILDREN:
                return FlatIndex(rows, self._children([column]), column, dim)
            directory = self._cache_dir(column)
            index = AnnIndex(rows, lambda: self._children([column]), column, dim, directory,
                             ANN_EXPANSION, ANN_REFINE_FACTOR)
            self._drop_old_caches()
            return index
        return self._memory_index(f"dense:{column}", build)

    def _drop_old_caches(self) -> None:
        """Remove the saved search indexes of generations older than those kept."""
        kept = saved_generations(self.path)[-self.keep_generations:] + [self.generation]
        for d in (self.path / CACHE).glob("*-*"):
            head = d.name.split("-", 1)[0]
            if head.isdigit() and int(head) < min(kept):
                shutil.rmtree(d, ignore_errors=True)

    def search_sparse(self, query: dict[int, float], k: int, where: Node | None,
                      kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        if not self.manifest.get("sparse"):
            raise StoreError("this knowledge base has no learned sparse vectors (set sparse_encoder when creating it)")
        if self.generation == 0 or not query or self._kinds(kinds) == "":
            return []
        index = self._memory_index("sparse", lambda: SparseIndex(self._hit_rows(),
                                                                 self._children(["sparse_idx", "sparse_val"])))
        return index.search(query, k, self._select(index.rows, where, kinds))

    def _select(self, index: Rows, where: Node | None, kinds: Sequence[str]) -> np.ndarray | None:
        """Rows of an in-memory index that a search may return: its kinds, and (with a filter)
        the rows the store selects for it. None: every row.

        A filter is evaluated by the table once per generation: its rows are kept (a sorted
        array of row numbers, ``SELECTIONS_MB`` in all, least recently used dropped first), so a
        filter asked again costs what its search costs, not a scan of the table."""
        if where is None:
            return index.rows_of(kinds)
        clause = self._with_kinds(where, kinds)
        assert clause is not None  # where is not None, so it renders to a clause
        with self._selection_lock:
            rows = self._selections.get(clause)
            if rows is not None:
                self._selections.move_to_end(clause)
                return rows
        found = (self._tables["children"].search().where(clause).select(["start"]).with_row_id(True)
                 .limit(max(1, index.n)).to_arrow().column("_rowid").to_numpy())
        rows = index.rows_of_row_ids(found)  # the hit rows were read with their row ids (_hit_rows)
        rows.setflags(write=False)  # shared by every query with this filter
        with self._selection_lock:
            self._selections[clause] = rows
            budget = SELECTIONS_MB * 2**20
            while len(self._selections) > 1 and sum(r.nbytes for r in self._selections.values()) > budget:
                self._selections.popitem(last=False)
        return rows

    def search_bm25(self, terms: str, k: int, where: Node | None,
                    kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        if self.generation == 0 or not terms.strip() or self._kinds(kinds) == "":
            return []
        return self._bm25_index().search(terms, k, self._select(self._hit_rows(), where, kinds))

    def _bm25_index(self) -> BM25Index:
        def build() -> BM25Index:
            rows = self._hit_rows()
            terms = lambda: self._children(["terms"])  # noqa: E731
            if rows.n < ANN_MIN_CHILDREN:
                return BM25Index(rows, terms)
            index = BM25Index(rows, terms, self._cache_dir("bm25"))
            self._drop_old_caches()
            return index
        return self._memory_index("bm25", build)

    def _cache_dir(self, what: str) -> Path:
        return self.path / CACHE / f"{self.generation:010d}-{what}"

    def save_search_indexes(self) -> bool:
        """In a large store (``ANN_MIN_CHILDREN`` children or more), build and save the committed
        generation's HNSW graph, BM25 postings and parents table, so that readers map them from
        disk instead of building them at their first query. Returns whether it did."""
        if self.generation == 0 or self._tables["children"].count_rows() < ANN_MIN_CHILDREN:
            return False
        self.dense_index()
        self._bm25_index()
        self._parent_table()
        self._indexes.clear()  # this object was only the builder: its memory goes back now
        return True

    def _rows(self, table: str, key: str, ids: Iterable[str], columns: list[str] | None = None,
              per_key: int | None = 4) -> pa.Table:
        """Rows whose ``key`` is one of ``ids`` (at most ``per_key`` rows each; None: all)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return pa.table({})
        parts = []
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            where = f"{key} IN ({', '.join(sql_literal(x) for x in chunk)})"
            limit = len(chunk) * per_key + 10 if per_key else self._tables[table].count_rows(where)
            q = self._tables[table].search().where(where).limit(max(limit, 1))
            if columns:
                q = q.select(columns)
            parts.append(q.to_arrow())
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]

    def count_children(self, parent_ids: Iterable[str], kind: str = "chunk") -> dict[str, int]:
        has_kind = "kind" in self._tables["children"].schema.names
        cols = ["parent_id", "kind"] if has_kind else ["parent_id"]
        out: dict[str, int] = {}
        for r in self._rows("children", "parent_id", parent_ids, cols, per_key=None).to_pylist():
            if (r.get("kind") or "chunk") == kind:
                out[r["parent_id"]] = out.get(r["parent_id"], 0) + 1
        return out

    _PARENT_COLS = ["parent_id", "doc_id", "position", "heading", "text", "tokens", "source", "title",
                    "metadata"]

    @staticmethod
    def _stored_parent(r: dict[str, Any]) -> StoredParent:
        path, location = read_heading(r["heading"])
        p = Parent(r["parent_id"], r["doc_id"], r["position"], path, r["text"], r["tokens"], location)
        return StoredParent(p, r["source"], r["title"], json.loads(r["metadata"] or "{}"))

    def get_parents(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]:
        ids = list(dict.fromkeys(parent_ids))
        if not ids or self.generation == 0:
            return {}
        rows = self._parent_table().take(ids).to_pylist()
        return {r["parent_id"]: self._stored_parent(r) for r in rows}

    def _parent_table(self) -> ParentTable:
        """The generation's parents by id: in memory, memory-mapped from a saved file in large stores."""
        def build() -> ParentTable:
            table = lambda: self._tables["parents"].to_arrow().select(self._PARENT_COLS)  # noqa: E731
            if self._tables["parents"].count_rows() < ANN_MIN_CHILDREN:
                return ParentTable(table, None)
            parents = ParentTable(table, self._cache_dir("parents"))
            self._drop_old_caches()
            return parents
        return self._memory_index("parents", build)

    def get_document_parents(self, doc_ids: Iterable[str]) -> dict[str, list[StoredParent]]:
        out: dict[str, list[StoredParent]] = {}
        for r in self._rows("parents", "doc_id", doc_ids, self._PARENT_COLS, per_key=None).to_pylist():
            out.setdefault(r["doc_id"], []).append(self._stored_parent(r))
        for parts in out.values():
            parts.sort(key=lambda sp: sp.parent.position)
        return out

    def _docs_from(self, tbl: pa.Table) -> dict[str, StoredDocument]:
        return {r["doc_id"]: StoredDocument(r["doc_id"], r["source"], r["title"], r["format"],
                                            r["content_hash"], r["gen"], r["parents"], r["children"],
                                            json.loads(r["metadata"] or "{}"))
                for r in tbl.to_pylist()}

    def get_documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, StoredDocument]:
        if doc_ids is None:
            return self._docs_from(self._tables["documents"].to_arrow())
        return self._docs_from(self._rows("documents", "doc_id", doc_ids))

    def find_documents(self, source: str) -> list[StoredDocument]:
        tbl = self._tables["documents"].search().where(f"source = {sql_literal(source)}").limit(10_000_000).to_arrow()
        return list(self._docs_from(tbl).values())

    def stats(self) -> dict[str, Any]:
        return stats_of(self.path, self.manifest, {n: self._tables[n].count_rows() for n in TABLES}, self.fields())

    def languages(self) -> dict[str, int]:
        if "lang" not in self._tables["children"].schema.names or self.generation == 0:
            return {}
        cached = self._languages
        if cached is None or cached[0] != self.generation:
            t = self._tables["children"]
            counts = {lang: t.count_rows(f"lang = '{lang}' AND kind = 'chunk'") for lang in LANGUAGES}
            cached = self._languages = (self.generation, {k: v for k, v in counts.items() if v})
        return dict(cached[1])

    def check_integrity(self) -> list[str]:
        parents = self._tables["parents"].to_arrow().select(["parent_id", "doc_id", "gen"]).to_pylist()
        children = self._scan(["child_id", "parent_id", "doc_id", "gen"]).to_pylist()
        return integrity_problems(parents, children, self.get_documents())

    def export(self, batch: int = 100, doc_ids: Sequence[str] | None = None):
        vectors = {name: v["column"] for name, v in self.manifest.get("vectors", {}).items()}
        cols = ["child_id", "parent_id", "doc_id", "position", "start", "end", "tokens", "terms", "vector",
                *vectors.values()]
        names = self._tables["children"].schema.names
        cols += [c for c in ("kind", "lang", "sparse_idx", "sparse_val") if c in names]

        def child_rows(ids: list[str]) -> Iterable[dict[str, Any]]:
            for r in self._rows("children", "doc_id", ids, cols, per_key=None).to_pylist():
                if "sparse_idx" in r:
                    r["sparse"] = dict(zip(r.pop("sparse_idx") or [], r.pop("sparse_val") or []))
                yield r
        return export_documents(self, batch, child_rows, vectors, doc_ids)

    def get_entries(self, doc_ids: Sequence[str]) -> dict[str, list[Child]]:
        cols = ["child_id", "parent_id", "doc_id", "position", "start", "end", "tokens", "kind"]
        out: dict[str, list[Child]] = {}
        for r in self._rows("children", "doc_id", doc_ids, cols, per_key=None).to_pylist():
            out.setdefault(r["doc_id"], []).append(entry_of(r))
        return {d: sorted(v, key=entry_order) for d, v in out.items()}

    # ------------------------------------------------------------------ writes
    def begin(self) -> LanceTransaction:
        return LanceTransaction(self)

    def check(self) -> CheckReport:
        from ragsift.store.lance_upkeep import check

        return check(self.path)

    def optimize(self) -> dict[str, Any]:
        """Compact the tables and remove every table version but those of the last
        ``keep_generations`` generations: a commit of the same documents."""
        before = self.stats()["disk_bytes"]
        generation = self.begin().commit(optimize=True)
        return {"generation": generation, "disk_bytes_before": before, "disk_bytes": self.stats()["disk_bytes"],
                "kept_generations": saved_generations(self.path)}

    def close(self) -> None:
        self._tables = {}


class LanceTransaction(TransactionBase):
    """Writes go to new table versions that readers ignore until ``commit()``."""

    def __init__(self, store: LanceStore) -> None:
        self.store = store
        self.lock = WriteLock(store.path, store.lock_timeout_s)
        self.lock.acquire()
        try:
            store._load_manifest()
            self.manifest = dict(store.manifest)
            self.generation = int(self.manifest["generation"]) + 1
            self.fields = dict(self.manifest.get("fields", {}))
            self.tables = {name: store._db.open_table(name) for name in TABLES}
            self._rollback("leftovers of a crashed or aborted writer")
            for g in saved_generations(store.path):  # written by a writer that died before its commit
                if g > int(self.manifest["generation"]):
                    generation_file(store.path, g).unlink(missing_ok=True)
            if "kind" not in self.tables["children"].schema.names:  # written before entry kinds
                self.tables["children"].add_columns({"kind": "'chunk'"})
            if "lang" not in self.tables["children"].schema.names:  # written before entry languages
                self.tables["children"].add_columns({"lang": "''"})
            self._pending: dict[str, list] = {n: [] for n in TABLES}
            self._pending_docs: set[str] = set()  # doc ids with rows in _pending
            self._stored = set(self.tables["documents"].to_arrow().column("doc_id").to_pylist())
            self._doomed: set[str] = set()
            self._pending_children = 0
            self._done = False
        except BaseException:
            self.lock.release()
            raise

    def _ensure_fields(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """Register new metadata fields (adding columns); return the values to store."""
        values, new = filterable_values(self.fields, metadata)
        if new:
            self._flush()
            for key, ftype in new.items():
                self.tables["children"].add_columns(pa.field(f"m_{key}", _ARROW_TYPES[ftype]))
                self.fields[key] = ftype
        return values

    def put_document(self, doc: Document, parents: Sequence[Parent],
                     children: Sequence[IndexedChild]) -> None:
        self._check_open()
        self.delete_document(doc.doc_id)
        meta_values = self._ensure_fields(doc.metadata)
        self._pending_docs.add(doc.doc_id)
        gen = self.generation
        meta_json = metadata_json(doc.metadata)
        self._pending["documents"].append({
            "doc_id": doc.doc_id, "source": doc.source, "title": doc.title, "format": doc.format,
            "content_hash": doc.content_hash, "gen": gen, "parents": len(parents),
            "children": len(children), "metadata": meta_json})
        for p in parents:
            self._pending["parents"].append({
                "parent_id": p.parent_id, "doc_id": p.doc_id, "position": p.position,
                "heading": heading_json(p), "text": p.text,
                "tokens": p.tokens, "gen": gen, "source": doc.source, "title": doc.title,
                "metadata": meta_json})
        for ic in children:
            c = ic.child
            row = {"child_id": c.child_id, "parent_id": c.parent_id, "doc_id": c.doc_id,
                   "position": c.position, "start": c.start, "end": c.end, "tokens": c.tokens,
                   "terms": ic.terms, "vector": np.asarray(ic.vector, np.float32), "gen": gen,
                   "source": doc.source, "title": doc.title, "format": doc.format, "kind": c.kind,
                   "lang": ic.lang}
            for name, v in self.manifest.get("vectors", {}).items():
                if name not in ic.vectors:
                    raise StoreError(f"{c.child_id}: no vector of the extra embedder {name!r}")
                row[v["column"]] = np.asarray(ic.vectors[name], np.float32)
            if self.manifest.get("sparse"):
                sp = ic.sparse or {}
                row["sparse_idx"] = [int(i) for i in sp]
                row["sparse_val"] = [float(w) for w in sp.values()]
            for f in self.fields:
                row[f"m_{f}"] = meta_values.get(f)
            self._pending["children"].append(row)
        self._pending_children += len(children)
        if self._pending_children >= BATCH_CHILDREN:
            self._flush()

    def _drop_pending(self, doc_id: str) -> None:
        for name in TABLES:
            self._pending[name] = [r for r in self._pending[name] if r["doc_id"] != doc_id]
        self._pending_children = len(self._pending["children"])

    def _flush(self) -> None:
        # deletes first, so a replaced document's new rows are never deleted
        doomed = sorted(self._doomed)
        for i in range(0, len(doomed), 500):
            where = f"doc_id IN ({', '.join(sql_literal(d) for d in doomed[i:i + 500])})"
            for name in TABLES:
                self.tables[name].delete(where)
        self._doomed.clear()
        self._stored.update(r["doc_id"] for r in self._pending["documents"])
        schemas = _schemas(self.store.dim, self.manifest.get("vectors"), bool(self.manifest.get("sparse")))
        vector_dims = {"vector": self.store.dim, **{v["column"]: int(v["dim"])
                                                    for v in self.manifest.get("vectors", {}).values()}}
        for name in TABLES:
            rows = self._pending[name]
            if not rows:
                continue
            schema = schemas[name]
            if name == "children":
                for f, ftype in self.fields.items():
                    schema = schema.append(pa.field(f"m_{f}", _ARROW_TYPES[ftype]))
                cols = {}
                for field in schema:
                    if field.name in vector_dims:
                        flat = np.stack([r[field.name] for r in rows]).astype(np.float32).ravel()
                        cols[field.name] = pa.FixedSizeListArray.from_arrays(pa.array(flat), vector_dims[field.name])
                    else:
                        cols[field.name] = pa.array([r.get(field.name) for r in rows], type=field.type)
                tbl = pa.Table.from_pydict(cols, schema=schema)
            else:
                tbl = pa.Table.from_pylist(rows, schema=schema)
            self.tables[name].add(tbl)
            self._pending[name] = []
        self._pending_docs.clear()
        self._pending_children = 0

    def commit(self, *, optimize: bool = False) -> int:
        """Make the writes one new generation. ``optimize`` (or every ``optimize_every``
        commits): remove the table versions of generations no longer kept."""
        self._check_open()
        try:
            self._flush()
            # the rows of the generation being committed: recorded in the manifest (``committed_stats``)
            counts = {n: self.tables[n].count_rows() for n in TABLES}
            # BM25 and dense search run on in-memory indexes built from the committed table
            # (ragsift.store.memindex); a knowledge base written before keeps its full-text index up to date
            fts = bool(self.manifest.get("fts"))
            for name in TABLES:
                self.tables[name].optimize(cleanup_older_than=NEVER)
            if not self.manifest.get("scalar_indexes") and counts["children"] > 0:
                # B-tree indexes make id look-ups (parent expansion, deletes) independent of size
                for table, column in (("documents", "doc_id"), ("parents", "parent_id"),
                                      ("parents", "doc_id"), ("children", "doc_id")):
                    self.tables[table].create_index(column, config=BTree(), replace=True)
                self.manifest["scalar_indexes"] = True
            manifest = self.store.manifest_to_commit(dict(self.manifest))
            every = self.store.optimize_every
            if optimize or (every and self.generation - int(manifest.get("optimized_generation", 0)) >= every):
                self._remove_old_versions()
                manifest["optimized_generation"] = self.generation
            manifest.update(generation=self.generation, fields=self.fields, fts=fts,
                            committed_at=time.time(), counts=counts,
                            versions={n: self.tables[n].version for n in TABLES})
            publish(self.store.path, manifest, self.store.keep_generations)
            self.store._load_manifest()
            return self.generation
        finally:
            self._done = True
            self.lock.release()

    def _remove_old_versions(self) -> None:
        """Compact each table and remove its versions older than those of the generations
        kept after this commit (the committed one always among them, so a crash here
        loses nothing)."""
        path = self.store.path
        committed = int(self.manifest["generation"])
        n_older = self.store.keep_generations - 2  # kept: this generation, the committed one, n_older before
        older = [g for g in saved_generations(path) if g < committed][-n_older:] if n_older > 0 else []
        manifests = [self.manifest]
        for g in older:
            try:
                manifests.append(json.loads(generation_file(path, g).read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
        for name in TABLES:
            t = self.tables[name]
            stamps = {int(v["version"]): v["timestamp"] for v in t.list_versions()}
            kept = [stamps[v] for v in (int(m["versions"][name]) for m in manifests) if v in stamps]
            if not kept:
                continue
            # Lance measures the age from its own clock when it cleans up (after compacting,
            # which is quick: commit() compacted just before): take it right before
            age = max(0.0, time.time() - min(kept).timestamp()) + CLEANUP_MARGIN_S
            t.optimize(cleanup_older_than=timedelta(seconds=age), delete_unverified=True)

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._rollback("aborted write")
        finally:
            self.lock.release()

    def _rollback(self, why: str) -> None:
        """Restore every table to the version the committed manifest names."""
        for name, t in self.tables.items():
            committed = int(self.manifest["versions"][name])
            if t.version != committed:
                log.warning("rolling back table %s from version %s to committed %s (%s)",
                            name, t.version, committed, why)
                t.checkout(committed)
                t.restore()
