"""The embedded store's write transaction (``LanceTransaction``) and the tables' schemas.

A transaction holds the writer's lock from ``LanceStore.begin()`` to its commit or abort. Its
writes go to new Lance table versions that no reader looks at (pending rows are added a batch at
a time, deletes first); ``commit()`` compacts the tables where their small fragments pile up,
records the generation's segments and row counts, and publishes the new manifest (the rename that
is the commit, ``lance_files.publish``); an abort, or the next writer after a crash, restores each
table to the version the committed manifest names.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from ragsift.errors import StoreError
from ragsift.store.base import IndexedChild, TransactionBase, filterable_values, heading_json, metadata_json
from ragsift.store.filters import sql_literal
from ragsift.store.lance_files import TABLES, WriteLock, generation_file, publish, saved_generations
from ragsift.store.segments import plan, scan
from ragsift.types import Document, Parent

log = logging.getLogger(__name__)

_ARROW_TYPES = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
                "date": pa.string(), "list": pa.list_(pa.string())}
BATCH_CHILDREN = 4096
COMPACT_FRAGMENTS = 16  # a commit compacts a table holding this many fragments under LanceDB's target size
COMPACT_ALWAYS_ROWS = 65_536  # or holding fewer rows than this (rewriting them costs little)
DROPPED_MAX = 20_000  # doc ids a manifest lists as deleted or replaced by its commit (more: readers scan)
NEVER = timedelta(days=36500)  # optimize() that removes no version
CLEANUP_MARGIN_S = 0.25  # versions this much older than the oldest kept one are kept too


def table_schemas(dim: int, vectors: dict[str, dict[str, Any]] | None = None, sparse: bool = False
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


class LanceWriting(Protocol):
    """What a transaction uses of the store it writes (``LanceStore``)."""

    path: Path
    lock_timeout_s: float
    keep_generations: int
    optimize_every: int
    manifest: dict[str, Any]
    dim: int

    @property
    def _db(self) -> Any: ...

    def _load_manifest(self) -> None: ...

    def _drop_uncommitted_caches(self) -> None: ...

    def _drop_old_caches(self) -> None: ...

    def _save_segments(self, manifest: dict[str, Any], tables: dict[str, Any]) -> bool: ...

    def manifest_to_commit(self, manifest: dict[str, Any]) -> dict[str, Any]: ...


class LanceTransaction(TransactionBase):
    """Writes go to new table versions that readers ignore until ``commit()``."""

    def __init__(self, store: LanceWriting) -> None:
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
            store._drop_uncommitted_caches()
            if "kind" not in self.tables["children"].schema.names:  # written before entry kinds
                self.tables["children"].add_columns({"kind": "'chunk'"})
            if "lang" not in self.tables["children"].schema.names:  # written before entry languages
                self.tables["children"].add_columns({"lang": "''"})
            self._pending: dict[str, list] = {n: [] for n in TABLES}
            self._pending_docs: set[str] = set()  # doc ids with rows in _pending
            self._stored = set(scan(self.tables["documents"], ["doc_id"], None, row_ids=False)
                               .column("doc_id").to_pylist())
            self._doomed: set[str] = set()
            # the documents this commit deletes or replaces, by the generation that wrote them
            self._dropped: dict[str, list[str]] | None = {}
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
            if self._dropped is not None:  # which generation wrote each: readers mark its rows dead
                gone = self.tables["documents"].search().where(where).select(["doc_id", "gen"]).limit(
                    len(doomed[i:i + 500]) + 1).to_arrow()
                for d, g in zip(gone.column("doc_id").to_pylist(), gone.column("gen").to_pylist()):
                    self._dropped.setdefault(str(g), []).append(d)
                if sum(len(v) for v in self._dropped.values()) > DROPPED_MAX:
                    self._dropped = None  # too many to list: readers work liveness out from the table
            for name in TABLES:
                self.tables[name].delete(where)
        self._doomed.clear()
        self._stored.update(r["doc_id"] for r in self._pending["documents"])
        schemas = table_schemas(self.store.dim, self.manifest.get("vectors"), bool(self.manifest.get("sparse")))
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
                # LanceDB compacts every fragment under a million rows into one: a store's big fragment is
                # rewritten whole by each compaction (1.7 GB of children at a million, measured), so a commit
                # compacts a table only once its small fragments pile up (and at optimize: every
                # ``optimize_every`` commits and ``optimize()``)
                st = self.tables[name].stats()
                if optimize or fts or st["num_rows"] < COMPACT_ALWAYS_ROWS \
                        or st["fragment_stats"]["num_small_fragments"] >= COMPACT_FRAGMENTS:
                    self.tables[name].optimize(cleanup_older_than=NEVER)
            if not self.manifest.get("scalar_indexes") and counts["children"] > 0:
                # B-tree indexes make id look-ups (parent expansion, deletes) independent of size
                for table, column in (("documents", "doc_id"), ("parents", "parent_id"),
                                      ("parents", "doc_id"), ("children", "doc_id")):
                    from lancedb.index import BTree

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
            if manifest.get("stable_row_ids"):
                manifest["segments"] = self._segments(counts["children"], optimize)
                manifest["dropped"] = self._dropped
                self.store._save_segments(manifest, self.tables)  # readers of it map them, never build them
            publish(self.store.path, manifest, self.store.keep_generations)
            self.store._load_manifest()
            self.store._drop_old_caches()
            return self.generation
        finally:
            self._done = True
            self.lock.release()

    def _segments(self, children: int, optimize: bool) -> list[list[int]]:
        """The segments of the generation being committed (``segments.plan``); ``optimize``: one."""
        table = self.tables["children"]
        if optimize:
            return [[0, self.generation, children]] if children else []
        added = table.count_rows(f"gen = {self.generation}")
        return plan(self.manifest.get("segments", []), int(self.manifest["generation"]), self.generation, added,
                    lambda lo, hi: table.count_rows(f"gen > {lo} AND gen <= {hi}"))

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
