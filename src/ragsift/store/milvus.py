"""The scale-out store: Milvus 2.5+ (standalone or cluster), or milvus-lite as a server.

Four collections per knowledge base, named ``<name>_documents``, ``_parents``, ``_children``
and ``_meta``. Every row carries the generation that wrote it (``gen``); its primary key is
``<id>@<gen>``, so a new version of a document sits beside the old one until it is committed.

How one commit makes a generation visible, without transactions in the engine:

- A reader sees generation G: rows with ``gen <= G``, minus the older versions of documents
  that G replaced or deleted while their physical removal is pending (see below). Every
  search and look-up carries that filter, so rows a writer is still adding (``gen = G+1``)
  are invisible.
- ``commit()`` writes the list of documents it replaces or deletes, then upserts the
  manifest row in ``_meta`` with the new generation: that single-row upsert is the commit.
  It then removes the old versions (children first, then parents, then documents, so no
  reader ever sees a child without its parent) and clears the list.
- A writer that dies before the manifest upsert leaves rows with ``gen > G``; the next
  writer deletes them. One that dies after it leaves the list; the next writer finishes the
  removal. Readers filter by the list meanwhile, so they never see both versions.
- One writer at a time: a lease row in ``_meta`` (owner, host, pid, expiry), renewed as the
  writer goes. A lease whose process is gone (same host) or whose time ran out is taken over.

BM25 runs in the engine (a BM25 function over a text field), on our analyzer's terms: each
term is written as a 16-hex-digit token, so the engine's tokenizer cannot re-split Chinese
words or punctuation and BM25 means the same terms as on the embedded store. Filters are
rendered by ``render_milvus`` with every value a quoted literal.

The transaction is ``ragsift.store.milvus_write``; the collections, limits and BM25 tokens both
sides share are ``ragsift.store.milvus_schema``.
"""
from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ragsift.errors import StoreError
from ragsift.store.base import (
    BUILTIN_FIELDS,
    LANGUAGES,
    CheckReport,
    IndexedChild,
    ManifestStore,
    ParentLabel,
    StoredDocument,
    StoredHit,
    StoredParent,
    entry_of,
    entry_order,
    export_documents,
    integrity_problems,
    read_heading,
    read_metadata,
)
from ragsift.store.filters import Node, milvus_literal, render_milvus
from ragsift.store.milvus_schema import _DUMMY_DIM, IN_CHUNK, KINDS, MAX_VARCHAR, bm25_query
from ragsift.store.milvus_write import MilvusTransaction
from ragsift.types import Child, Document, Parent

log = logging.getLogger(__name__)

FORMAT = 1
MAX_K = 16384  # the engine's largest top-k
QUERY_PAGE = 16384  # rows one query call returns; more go through a query iterator
_HIT_FIELDS = ["child_id", "parent_id", "doc_id", "start", "end"]
# BM25 as on the embedded store (tantivy) and Milvus 2.5's defaults; milvus-lite's own default k1 is 1.5
BM25_PARAMS = {"bm25_k1": 1.2, "bm25_b": 0.75}


class _DropMvccNotice(logging.Filter):
    # milvus-lite has no MVCC timestamps; pymilvus warns about it on every query iterator
    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


logging.getLogger("pymilvus.client.iterator.query_iterator").addFilter(_DropMvccNotice())


def connect(uri: str, token: str | None = None, db_name: str | None = None):
    """A MilvusClient for ``uri`` (``http://host:19530``, ``https://...``); the token comes
    from the argument or $RAGSIFT_MILVUS_TOKEN / $MILVUS_TOKEN ("user:password" or an API key)."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise StoreError("the Milvus store needs pymilvus: pip install 'ragsift[milvus]'") from None
    token = token or os.environ.get("RAGSIFT_MILVUS_TOKEN") or os.environ.get("MILVUS_TOKEN") or ""
    try:
        return MilvusClient(uri=uri, token=token, db_name=db_name or os.environ.get("RAGSIFT_MILVUS_DB", ""),
                            timeout=30)
    except Exception as e:
        raise StoreError(f"cannot connect to Milvus at {uri}: {e}") from None


def _bm25_score(distance: float) -> float:
    # Milvus 2.5 reports a BM25 score; milvus-lite reports it negated as a distance
    return -distance if distance < 0 else distance


class MilvusStore(ManifestStore):
    """Store on a Milvus server. ``name`` prefixes the collections of this knowledge base."""

    def __init__(self, uri: str, name: str, dim: int | None = None, *, token: str | None = None,
                 index: str = "FLAT", client: Any = None, vectors: dict[str, int] | None = None,
                 sparse: bool = False, lock_timeout_s: float = 10.0, identity: dict[str, Any] | None = None) -> None:
        self.identity = identity
        if not name.replace("_", "").isalnum() or not name[0].isalpha() or len(name) > 200:
            raise StoreError(f"invalid Milvus collection name {name!r}: letters, digits and _, starting with a letter")
        self.uri, self.name, self.index = uri, name, index
        self.lock_timeout_s = lock_timeout_s
        self.client = client or connect(uri, token)
        self.coll = {k: f"{name}_{k}" for k in (*KINDS, "meta")}
        try:
            exists = self.client.has_collection(self.coll["meta"])
        except Exception as e:
            raise StoreError(f"cannot reach Milvus at {uri}: {e}") from None
        if not exists or self._get_meta("manifest") is None:
            if dim is None:
                raise StoreError(f"no knowledge base {name!r} on Milvus at {uri}")
            self._create(dim, vectors or {}, sparse)
        self._load_manifest()
        fields = self.client.describe_collection(self.coll["children"]).get("fields", [])
        self._has_lang = any(f.get("name") == "lang" for f in fields)  # collections made before have none
        self._hit_fields = _HIT_FIELDS + (["lang"] if self._has_lang else [])
        self._languages: tuple[int, dict[str, int]] | None = None

    # ------------------------------------------------------------------ set-up
    def _create(self, dim: int, vectors: dict[str, int], sparse: bool) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        def schema():
            s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=4096)
            return s

        def text(s, name, n=MAX_VARCHAR, **kw):
            s.add_field(name, DataType.VARCHAR, max_length=n, **kw)

        def ints(s, *names):
            for n in names:
                s.add_field(n, DataType.INT64)

        def dummy(s):
            s.add_field("dummy", DataType.FLOAT_VECTOR, dim=_DUMMY_DIM)
            ip = self.client.prepare_index_params()
            ip.add_index("dummy", index_type="FLAT", metric_type="L2")
            return ip

        specs = {}
        s = schema()
        text(s, "value")
        specs["meta"] = (s, dummy(s))
        s = schema()
        for f in ("doc_id", "source", "title", "format", "content_hash"):
            text(s, f, 4096 if f != "title" else MAX_VARCHAR)
        text(s, "metadata")
        ints(s, "gen", "parents", "children")
        specs["documents"] = (s, dummy(s))
        s = schema()
        text(s, "parent_id", 4096)
        text(s, "doc_id", 4096)
        ints(s, "position", "piece", "pieces", "tokens", "gen")
        text(s, "heading")
        text(s, "text")
        specs["parents"] = (s, dummy(s))
        s = schema()
        for f in ("child_id", "parent_id", "doc_id", "source", "format", "kind"):
            text(s, f, 4096)
        text(s, "lang", 16)
        text(s, "title")
        ints(s, "position", "start", "end", "tokens", "gen")
        text(s, "terms")  # the analyzer's terms as written (kept for copying the knowledge base)
        text(s, "bm25_text", enable_analyzer=True, analyzer_params={"tokenizer": "standard"})
        s.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
        s.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        extra: dict[str, dict[str, Any]] = {name: {"column": f"vec{i + 1}", "dim": d}
                                            for i, (name, d) in enumerate(vectors.items())}
        for v in extra.values():
            s.add_field(v["column"], DataType.FLOAT_VECTOR, dim=int(v["dim"]))
        if sparse:
            s.add_field("learned", DataType.SPARSE_FLOAT_VECTOR)
        s.add_field("meta", DataType.JSON)  # filterable metadata values
        s.add_function(Function(name="bm25_fn", function_type=FunctionType.BM25,
                                input_field_names=["bm25_text"], output_field_names=["bm25"]))
        ip = self.client.prepare_index_params()
        ip.add_index("vector", index_type=self.index, metric_type="COSINE")
        for v in extra.values():
            ip.add_index(v["column"], index_type=self.index, metric_type="COSINE")
        if sparse:
            ip.add_index("learned", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        ip.add_index("bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                     params={"params": BM25_PARAMS})  # the JSON "params" form both Milvus and milvus-lite read
        specs["children"] = (s, ip)
        for kind in ("documents", "parents", "children", "meta"):
            if not self.client.has_collection(self.coll[kind]):
                s, ip = specs[kind]
                self.client.create_collection(self.coll[kind], schema=s, index_params=ip,
                                              consistency_level="Strong")
        if self._get_meta("manifest") is None:
            self._put_meta("manifest", self.manifest_to_commit(
                {"format": FORMAT, "generation": 0, "dim": dim, "fields": {}, "committed_at": time.time(),
                 "index": self.index, "retired": {}, "vectors": extra, "sparse": sparse}))

    def _get_meta(self, key: str) -> dict[str, Any] | None:
        rows = self.client.get(self.coll["meta"], ids=[key], output_fields=["value"])
        return json.loads(rows[0]["value"]) if rows else None

    def _put_meta(self, key: str, value: dict[str, Any]) -> None:
        data = json.dumps(value, ensure_ascii=False)
        if len(data.encode("utf-8")) > MAX_VARCHAR:
            raise StoreError(f"Milvus meta row {key!r} too large ({len(data)} characters)")
        self.client.upsert(self.coll["meta"], [{"pk": key, "value": data, "dummy": [0.0] * _DUMMY_DIM}])

    def _load_manifest(self) -> None:
        m = self._get_meta("manifest")
        if m is None:
            raise StoreError(f"knowledge base {self.name!r} vanished from Milvus at {self.uri}")
        if m.get("format") != FORMAT:
            raise StoreError(f"Milvus knowledge base {self.name!r}: unsupported format {m.get('format')!r}")
        self.manifest = m
        self.generation = int(m["generation"])
        self.dim = int(m["dim"])
        self._visible = self._visibility(m)

    def _visibility(self, m: dict[str, Any]) -> str:
        """The filter that shows exactly generation ``m['generation']``."""
        parts = [f"gen <= {int(m['generation'])}"]
        for gen, key in sorted((int(g), k) for g, k in m.get("retired", {}).items()):
            ids = self._get_meta(key) or {"doc_ids": []}
            for i in range(0, len(ids["doc_ids"]), IN_CHUNK):
                chunk = ", ".join(milvus_literal(d) for d in ids["doc_ids"][i:i + IN_CHUNK])
                parts.append(f"not (doc_id in [{chunk}] and gen < {gen})")
        return " and ".join(parts)

    def _manifest_changed(self) -> bool:
        m = self._get_meta("manifest")
        if m is None:
            raise StoreError(f"knowledge base {self.name!r} vanished from Milvus at {self.uri}")
        return m != self.manifest

    # ------------------------------------------------------------------ reads
    def _filter(self, where: Node | None, extra: str = "") -> str:
        parts = [self._visible]
        if extra:
            parts.append(extra)
        if where is not None:
            meta_types = {f: t for f, t in self.manifest.get("fields", {}).items() if f not in BUILTIN_FIELDS}
            meta_fields = frozenset(meta_types)
            cols = {f: (f"meta[{milvus_literal(f)}]" if f in meta_fields else f) for f in self.fields()}
            lists = frozenset(f for f, t in meta_types.items() if t == "list")
            parts.append(render_milvus(where, cols, meta_fields, lists))
        return " and ".join(f"({p})" for p in parts)

    @staticmethod
    def _hits(result: Any, score) -> list[StoredHit]:
        out = []
        for r in result[0] if result else []:
            e = r["entity"]
            out.append(StoredHit(e["child_id"], e["parent_id"], e["doc_id"], float(score(r["distance"])),
                                 int(e["start"]), int(e["end"]), e.get("lang") or ""))
        return out

    @staticmethod
    def _kinds(kinds: Sequence[str]) -> str:
        return f"kind in [{', '.join(milvus_literal(k) for k in kinds)}]"

    def search_dense(self, vector: np.ndarray, k: int, where: Node | None,
                     kinds: Sequence[str] = ("chunk",), using: str = "") -> list[StoredHit]:
        field = "vector"
        if using:
            v = self.manifest.get("vectors", {}).get(using)
            if v is None:
                raise StoreError(f"this knowledge base has no vectors of embedder {using!r}")
            field = v["column"]
        if self.generation == 0:
            return []
        res = self.client.search(self.coll["children"], data=[np.asarray(vector, np.float32).tolist()],
                                 anns_field=field, limit=min(k, MAX_K), filter=self._filter(where, self._kinds(kinds)),
                                 output_fields=self._hit_fields, search_params={"metric_type": "COSINE"})
        return self._hits(res, float)

    def search_sparse(self, query: dict[int, float], k: int, where: Node | None,
                      kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        if not self.manifest.get("sparse"):
            raise StoreError("this knowledge base has no learned sparse vectors (set sparse_encoder when creating it)")
        if self.generation == 0 or not query:
            return []
        res = self.client.search(self.coll["children"], data=[{int(i): float(w) for i, w in query.items()}],
                                 anns_field="learned", limit=min(k, MAX_K),
                                 filter=self._filter(where, self._kinds(kinds)),
                                 output_fields=self._hit_fields, search_params={"metric_type": "IP"})
        return [h for h in self._hits(res, float) if h.score > 0]

    def search_bm25(self, terms: str, k: int, where: Node | None,
                    kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        text = bm25_query(terms)
        if self.generation == 0 or not text:
            return []
        res = self.client.search(self.coll["children"], data=[text], anns_field="bm25", limit=min(k, MAX_K),
                                 filter=self._filter(where, self._kinds(kinds)), output_fields=self._hit_fields,
                                 search_params={"metric_type": "BM25"})
        return self._hits(res, _bm25_score)

    def search_hybrid(self, vector: np.ndarray, terms: str, k: int, where: Node | None, *,
                      fusion: str = "rrf", rrf_k: int = 60, weights: Sequence[float] = (0.5, 0.5),
                      depth: int = 100, kinds: Sequence[str] = ("chunk",),
                      normalize: bool = True) -> list[StoredHit]:
        """Dense and BM25 fused in the engine (RRFRanker, or WeightedRanker over raw scores or,
        with ``normalize``, the engine's own arctan normalization; minmax and z-score are
        ragsift's and the engine has neither): the top ``depth`` children of each, fused by child.
        ragsift's own pipeline fuses after deduplicating by parent instead; on flat chunks
        (unit=child) the two are the same."""
        from pymilvus import AnnSearchRequest, RRFRanker, WeightedRanker

        text = bm25_query(terms)
        expr = self._filter(where, self._kinds(kinds))
        reqs = [AnnSearchRequest([np.asarray(vector, np.float32).tolist()], "vector", {"metric_type": "COSINE"},
                                 limit=min(depth, MAX_K), expr=expr)]
        if text:
            reqs.append(AnnSearchRequest([text], "bm25", {"metric_type": "BM25"}, limit=min(depth, MAX_K),
                                         expr=expr))
        ranker = RRFRanker(rrf_k) if fusion == "rrf" else WeightedRanker(*weights[:len(reqs)], norm_score=normalize)
        res = self.client.hybrid_search(self.coll["children"], reqs, ranker, limit=min(k, MAX_K),
                                        output_fields=self._hit_fields)
        return self._hits(res, float)

    def _query(self, kind: str, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        """Every visible row matching ``expr``: one call when they fit in one page, else an iterator."""
        f = f"({self._visible}) and ({expr})" if expr else self._visible
        rows = self.client.query(self.coll[kind], filter=f, output_fields=fields, limit=QUERY_PAGE)
        if len(rows) < QUERY_PAGE:
            return list(rows)
        it = self.client.query_iterator(self.coll[kind], batch_size=2000, filter=f, output_fields=fields)
        out: list[dict[str, Any]] = []
        try:
            while True:
                batch = it.next()
                if not batch:
                    break
                out.extend(batch)
        finally:
            it.close()
        return out

    def _by_ids(self, kind: str, key: str, ids: Iterable[str], fields: list[str]) -> list[dict[str, Any]]:
        ids = list(dict.fromkeys(ids))
        out: list[dict[str, Any]] = []
        for i in range(0, len(ids), IN_CHUNK):
            chunk = ", ".join(milvus_literal(x) for x in ids[i:i + IN_CHUNK])
            out.extend(self._query(kind, f"{key} in [{chunk}]", fields))
        return out

    def count_children(self, parent_ids: Iterable[str], kind: str = "chunk") -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self._by_ids("children", "parent_id", parent_ids, ["parent_id", "kind"]):
            if r["kind"] == kind:
                out[r["parent_id"]] = out.get(r["parent_id"], 0) + 1
        return out

    _PARENT_FIELDS = ["parent_id", "doc_id", "position", "piece", "pieces", "heading", "text", "tokens", "gen"]

    def _parents_from(self, rows: list[dict[str, Any]]) -> list[StoredParent]:
        pieces: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            pieces.setdefault(r["parent_id"], []).append(r)
        docs = self.get_documents({r["doc_id"] for r in rows})
        out = []
        for pid, parts in pieces.items():
            parts.sort(key=lambda r: r["piece"])
            r = parts[0]
            if len(parts) != r["pieces"]:
                raise StoreError(f"parent {pid}: {len(parts)} of {r['pieces']} text pieces found")
            d = docs.get(r["doc_id"])
            if d is None:
                raise StoreError(f"parent {pid} has no document {r['doc_id']}")
            path, location = read_heading(r["heading"])
            p = Parent(pid, r["doc_id"], r["position"], path, "".join(x["text"] for x in parts), r["tokens"],
                       location)
            out.append(StoredParent(p, d.source, d.title, d.metadata))
        return out

    def get_parents(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]:
        rows = self._by_ids("parents", "parent_id", parent_ids, self._PARENT_FIELDS)
        return {sp.parent.parent_id: sp for sp in self._parents_from(rows)}

    def parent_labels(self, parent_ids: Iterable[str]) -> dict[str, ParentLabel]:
        rows = [r for r in self._by_ids("parents", "parent_id", parent_ids, ["parent_id", "doc_id", "heading", "piece"])
                if r["piece"] == 0]
        source = {r["doc_id"]: r["source"]
                  for r in self._by_ids("documents", "doc_id", {r["doc_id"] for r in rows}, ["doc_id", "source"])}
        return {r["parent_id"]: ParentLabel(source[r["doc_id"]], *read_heading(r["heading"]))
                for r in rows if r["doc_id"] in source}

    def get_document_parents(self, doc_ids: Iterable[str]) -> dict[str, list[StoredParent]]:
        out: dict[str, list[StoredParent]] = {}
        for sp in self._parents_from(self._by_ids("parents", "doc_id", doc_ids, self._PARENT_FIELDS)):
            out.setdefault(sp.parent.doc_id, []).append(sp)
        for parts in out.values():
            parts.sort(key=lambda sp: sp.parent.position)
        return out

    _DOC_FIELDS = ["doc_id", "source", "title", "format", "content_hash", "gen", "parents", "children", "metadata"]

    @staticmethod
    def _docs_from(rows: list[dict[str, Any]]) -> dict[str, StoredDocument]:
        return {r["doc_id"]: StoredDocument(r["doc_id"], r["source"], r["title"], r["format"], r["content_hash"],
                                            int(r["gen"]), int(r["parents"]), int(r["children"]),
                                            read_metadata(r["metadata"])) for r in rows}

    def get_documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, StoredDocument]:
        if doc_ids is None:
            return self._docs_from(self._query("documents", "", self._DOC_FIELDS))
        return self._docs_from(self._by_ids("documents", "doc_id", doc_ids, self._DOC_FIELDS))

    def document_titles(self) -> list[tuple[str, str]]:
        if self.generation == 0:
            return []
        return [(r["doc_id"], r["title"]) for r in self._query("documents", 'title != ""', ["doc_id", "title"])]

    def find_documents(self, source: str) -> list[StoredDocument]:
        rows = self._query("documents", f"source == {milvus_literal(source)}", self._DOC_FIELDS)
        return list(self._docs_from(rows).values())

    def languages(self) -> dict[str, int]:
        if not self._has_lang or self.generation == 0:
            return {}
        cached = self._languages
        if cached is None or cached[0] != self.generation:
            counts = {lang: self._count("children", f'lang == "{lang}" and kind == "chunk"') for lang in LANGUAGES}
            cached = self._languages = (self.generation, {k: v for k, v in counts.items() if v})
        return dict(cached[1])

    def _count(self, kind: str, expr: str = "") -> int:
        f = f"({self._visible}) and ({expr})" if expr else self._visible
        res = self.client.query(self.coll[kind], filter=f, output_fields=["count(*)"])
        return int(res[0]["count(*)"])

    def stats(self) -> dict[str, Any]:
        return {"backend": "milvus", "uri": self.uri, "collections": self.name, "generation": self.generation,
                "documents": self._count("documents"), "parents": self._count("parents", "piece == 0"),
                "children": self._count("children"), "dim": self.dim, "fields": self.fields(),
                "index": self.manifest.get("index"), "committed_at": self.manifest.get("committed_at")}

    def check_integrity(self) -> list[str]:
        parents = self._query("parents", "piece == 0", ["parent_id", "doc_id", "gen"])
        children = self._query("children", "", ["child_id", "parent_id", "doc_id", "gen"])
        return integrity_problems(parents, children, self.get_documents())

    def check(self) -> CheckReport:
        """The committed generation's rows checked against each other. Milvus keeps one
        generation: restoring an older one is the server's backup's job."""
        report = CheckReport("milvus", generation=self.generation)
        try:
            report.problems = [f"generation {self.generation}: {p}" for p in self.check_integrity()]
            report.counts = {k: self._count(k, "piece == 0" if k == "parents" else "") for k in KINDS}
        except Exception as e:
            report.problems.append(f"Milvus {self.uri}: {e}")
        if report.ok:
            report.restorable = [self.generation]
        return report

    def save_search_indexes(self) -> bool:
        """Nothing to do: the server builds and loads its indexes."""
        return False

    def optimize(self) -> dict[str, Any]:
        """Finish any removal a crashed writer left and ask the server to compact the collections."""
        with self.begin() as txn:  # takes the lease; its start finishes pending removals
            txn.abort()
        compacted = []
        for kind in (*KINDS, "meta"):
            try:
                self.client.compact(self.coll[kind])
                compacted.append(kind)
            except Exception as e:  # milvus-lite compacts on its own
                log.info("compaction of %s not run: %s", self.coll[kind], e)
        return {"generation": self.generation, "compacted": compacted}

    def export(self, batch: int = 100, doc_ids: Sequence[str] | None = None
               ) -> Iterator[tuple[Document, list[Parent], list[IndexedChild]]]:
        vectors = {name: v["column"] for name, v in self.manifest.get("vectors", {}).items()}
        fields = ["child_id", "parent_id", "doc_id", "position", "start", "end", "tokens", "terms", "vector",
                  "kind", *vectors.values()] + (["learned"] if self.manifest.get("sparse") else []) \
            + (["lang"] if self._has_lang else [])

        def child_rows(ids: list[str]) -> Iterable[dict[str, Any]]:
            for r in self._by_ids("children", "doc_id", ids, fields):
                if "learned" in r:
                    r["sparse"] = {int(i): float(w) for i, w in (r.pop("learned") or {}).items()}
                yield r
        return export_documents(self, batch, child_rows, vectors, doc_ids)

    def get_entries(self, doc_ids: Sequence[str]) -> dict[str, list[Child]]:
        fields = ["child_id", "parent_id", "doc_id", "position", "start", "end", "tokens", "kind"]
        out: dict[str, list[Child]] = {}
        for r in self._by_ids("children", "doc_id", doc_ids, fields):
            out.setdefault(r["doc_id"], []).append(entry_of(r))
        return {d: sorted(v, key=entry_order) for d, v in out.items()}

    # ------------------------------------------------------------------ writes
    def begin(self) -> MilvusTransaction:
        return MilvusTransaction(self)

    def drop(self) -> None:
        """Delete this knowledge base's collections (all generations)."""
        for c in self.coll.values():
            if self.client.has_collection(c):
                self.client.drop_collection(c)

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # pragma: no cover - closing a dead connection
            pass
