"""The Milvus store's transaction (``MilvusStore.begin``): rows written with the next generation,
made visible at once by ``commit()``; a lease row keeps a second writer out, and a crashed writer's
leftovers are rolled back by the next one."""
from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragsift.errors import StoreError
from ragsift.process import pid_alive
from ragsift.store.base import (
    IndexedChild,
    TransactionBase,
    filterable_values,
    heading_json,
    metadata_json,
)
from ragsift.store.filters import milvus_literal
from ragsift.store.milvus_schema import _DUMMY_DIM, IN_CHUNK, KINDS, MAX_VARCHAR, bm25_text
from ragsift.types import Document, Parent

log = logging.getLogger("ragsift.store.milvus")  # the store's own log, as before the transaction moved

BATCH_CHILDREN = 2048
TEXT_PIECE_CHARS = 16000  # a parent's text is stored in pieces (<= 64 KB even at 4 bytes a char)
LEASE_S = 60.0


class MilvusTransaction(TransactionBase):
    """Rows are written with the next generation; ``commit()`` makes them visible at once."""

    def __init__(self, store: Any) -> None:  # a MilvusStore (not imported: it imports this module)
        self.store = store
        self.client = store.client
        self.owner = uuid.uuid4().hex
        self._done = False
        self._acquire()
        try:
            store._load_manifest()
            self.manifest = dict(store.manifest)
            committed = int(self.manifest["generation"])
            self._finish_removals()
            self._rollback(f"gen > {committed}", "leftovers of a crashed or aborted writer")
            self.generation = committed + 1
            self.fields = dict(self.manifest.get("fields", {}))
            self._rows: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
            self._pending_docs: set[str] = set()  # doc ids with rows buffered, not yet written
            self._written_docs: set[str] = set()  # doc ids with rows of this generation written
            self._doomed: set[str] = set()  # committed doc ids this transaction replaces or deletes
            self._stored = {r["doc_id"] for r in store._query("documents", "", ["doc_id"])}
        except BaseException:
            self._release()
            raise

    # -------------------------------------------------------------- the lease
    def _acquire(self) -> None:
        """Take the lease, waiting up to the store's lock_timeout_s for another writer."""
        give_up = time.monotonic() + self.store.lock_timeout_s
        while True:
            holder = self._try_acquire()
            if holder is None:
                return
            if time.monotonic() >= give_up:
                raise StoreError(f"another process is writing to Milvus knowledge base {self.store.name!r} "
                                 f"({holder}); waited {self.store.lock_timeout_s:g} s (setting lock_timeout_s); "
                                 "try again when it ends")
            time.sleep(min(0.25, max(0.0, give_up - time.monotonic())))

    def _try_acquire(self) -> str | None:
        """Take the lease if it is free (or its holder is gone); else who holds it."""
        lease = self.store._get_meta("lock")
        now = time.time()
        if lease and lease.get("owner") != self.owner and lease.get("expires", 0) > now:
            same_host = lease.get("host") == socket.gethostname()
            if not (same_host and not pid_alive(int(lease.get("pid", 0)))):
                return f"host {lease.get('host')}, pid {lease.get('pid')}"
            log.warning("taking over the write lease of dead process %s", lease.get("pid"))
        self._renew()
        time.sleep(0.05)
        if (self.store._get_meta("lock") or {}).get("owner") != self.owner:
            return "another writer took the lease at the same moment"
        return None

    def _renew(self) -> None:
        self.store._put_meta("lock", {"owner": self.owner, "host": socket.gethostname(), "pid": os.getpid(),
                                      "expires": time.time() + LEASE_S})

    def _release(self) -> None:
        try:
            if (self.store._get_meta("lock") or {}).get("owner") == self.owner:
                self.client.delete(self.store.coll["meta"], ids=["lock"])
        except Exception as e:  # the lease expires on its own
            log.warning("could not release the write lease: %s", e)

    # -------------------------------------------------------------- recovery
    def _rollback(self, expr: str, why: str) -> None:
        for kind in ("children", "parents", "documents"):
            res = self.client.delete(self.store.coll[kind], filter=expr)
            n = res.get("delete_count", 0) if isinstance(res, dict) else 0
            if n:
                log.warning("removed %d %s rows (%s)", n, kind, why)

    def _finish_removals(self) -> None:
        """Remove the old versions a committed generation retired (after a crash, or now)."""
        retired = self.manifest.get("retired", {})
        if not retired:
            return
        for gen, key in sorted((int(g), k) for g, k in retired.items()):
            ids = (self.store._get_meta(key) or {"doc_ids": []})["doc_ids"]
            for kind in ("children", "parents", "documents"):  # children first: never an orphan
                for i in range(0, len(ids), IN_CHUNK):
                    chunk = ", ".join(milvus_literal(d) for d in ids[i:i + IN_CHUNK])
                    self.client.delete(self.store.coll[kind], filter=f"doc_id in [{chunk}] and gen < {gen}")
        self.manifest["retired"] = {}
        self.store._put_meta("manifest", self.manifest)
        self.client.delete(self.store.coll["meta"], ids=list(retired.values()))
        self.store._load_manifest()

    # -------------------------------------------------------------- writing
    def put_document(self, doc: Document, parents: Sequence[Parent], children: Sequence[IndexedChild]) -> None:
        self._check_open()
        self.delete_document(doc.doc_id)
        values, new = filterable_values(self.fields, doc.metadata)
        self.fields.update(new)
        gen = self.generation
        meta_json = metadata_json(doc.metadata)
        if len(meta_json.encode("utf-8")) > MAX_VARCHAR:
            raise StoreError(f"{doc.doc_id}: metadata larger than Milvus' 64 KB limit for one value")
        dummy = [0.0] * _DUMMY_DIM
        self._pending_docs.add(doc.doc_id)
        self._rows["documents"].append({
            "pk": f"{doc.doc_id}@{gen}", "doc_id": doc.doc_id, "source": doc.source, "title": doc.title,
            "format": doc.format, "content_hash": doc.content_hash, "metadata": meta_json, "gen": gen,
            "parents": len(parents), "children": len(children), "dummy": dummy})
        for p in parents:
            pieces = [p.text[i:i + TEXT_PIECE_CHARS] for i in range(0, len(p.text), TEXT_PIECE_CHARS)] or [""]
            for i, piece in enumerate(pieces):
                self._rows["parents"].append({
                    "pk": f"{p.parent_id}#{i}@{gen}", "parent_id": p.parent_id, "doc_id": p.doc_id,
                    "position": p.position, "piece": i, "pieces": len(pieces), "tokens": p.tokens, "gen": gen,
                    "heading": heading_json(p), "text": piece, "dummy": dummy})
        for ic in children:
            c = ic.child
            self._rows["children"].append({
                "pk": f"{c.child_id}@{gen}", "child_id": c.child_id, "parent_id": c.parent_id, "doc_id": c.doc_id,
                "source": doc.source, "title": doc.title, "format": doc.format, "position": c.position,
                "start": c.start, "end": c.end, "tokens": c.tokens, "gen": gen, "terms": ic.terms,
                "bm25_text": bm25_text(ic.terms), "vector": np.asarray(ic.vector, np.float32).tolist(),
                "meta": values, "kind": c.kind, **({"lang": ic.lang} if self.store._has_lang else {})})
            row = self._rows["children"][-1]
            for name, v in self.manifest.get("vectors", {}).items():
                if name not in ic.vectors:
                    raise StoreError(f"{c.child_id}: no vector of the extra embedder {name!r}")
                row[v["column"]] = np.asarray(ic.vectors[name], np.float32).tolist()
            if self.manifest.get("sparse"):
                # an empty sparse vector is not accepted: one zero weight stands for "no terms"
                row["learned"] = {int(i): float(w) for i, w in (ic.sparse or {}).items()} or {0: 0.0}
        if len(self._rows["children"]) >= BATCH_CHILDREN:
            self._flush()

    def _drop_pending(self, doc_id: str) -> None:
        for kind in KINDS:
            self._rows[kind] = [r for r in self._rows[kind] if r["doc_id"] != doc_id]

    def _drop_written(self, doc_id: str) -> bool:
        if doc_id not in self._written_docs:
            return False
        self._written_docs.discard(doc_id)
        self._rollback(f"doc_id == {milvus_literal(doc_id)} and gen == {self.generation}", "replaced in this write")
        return True

    def _flush(self) -> None:
        for kind in ("documents", "parents", "children"):
            rows = self._rows[kind]
            for i in range(0, len(rows), BATCH_CHILDREN):
                self.client.insert(self.store.coll[kind], rows[i:i + BATCH_CHILDREN])
            self._rows[kind] = []
        self._written_docs |= self._pending_docs
        self._pending_docs = set()
        self._renew()

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        """The commit point: one single-row upsert."""
        self.store._put_meta("manifest", manifest)

    def commit(self) -> int:
        self._check_open()
        try:
            self._flush()
            for kind in KINDS:
                self.client.flush(self.store.coll[kind])
            manifest = self.store.manifest_to_commit(dict(self.manifest))
            retired = dict(manifest.get("retired", {}))
            if self._doomed:
                key = f"retired@{self.generation}"
                self.store._put_meta(key, {"doc_ids": sorted(self._doomed)})
                retired[str(self.generation)] = key
            manifest.update(generation=self.generation, fields=self.fields, committed_at=time.time(),
                            retired=retired)
            self._write_manifest(manifest)
            self.manifest = manifest
            self.store._load_manifest()
            self._finish_removals()
            return self.generation
        finally:
            self._done = True
            self._release()

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._rollback(f"gen == {self.generation}", "aborted write")
        finally:
            self._release()
