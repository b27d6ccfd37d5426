"""The embedded default store: LanceDB in one directory, zero set-up.

Layout of a knowledge base directory::

    ragsift.toml        settings (index settings fixed at creation)
    manifest.json       the committed generation: table versions + metadata fields
    generations/        the manifests of the last ``keep_generations`` commits (restorable)
    lance/              documents, parents and children tables (Lance format, versioned)
    search-cache/       saved indexes of large segments: rows, vectors or HNSW graph, BM25
                        postings, parents; one folder each (rebuilt if removed)
    .write.lock         held by the one writer

How one commit makes a generation visible: a write transaction appends and deletes rows in
all three tables, which creates new Lance table versions that no reader looks at. Readers
pin the table versions named in ``manifest.json``. ``commit()`` updates the full-text
index, writes the new manifest to ``generations/``, then atomically replaces
``manifest.json`` (write, fsync, rename) with it: that rename is the commit. A crash before it
leaves the old manifest, and the next writer restores each table to the version the manifest
names. The transaction is ``ragsift.store.lance_write``.

Search runs on in-memory indexes of the generation's segments (``ragsift.store.segments``): a
commit adds one segment of the children it wrote, which readers build alone at their next query;
the writer merges segments in tiers and saves large ones before it commits.

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
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ragsift.errors import FilterError, StoreError
from ragsift.store.base import (
    BUILTIN_FIELDS,
    LANGUAGES,
    CheckReport,
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
from ragsift.store.filters import Node, filter_fields, render_sql, sql_literal
from ragsift.store.lance_files import (
    FORMAT,
    MANIFEST,
    TABLES,
    WriteLock,
    checked,
    connect,
    generation_file,
    manifest_problem,
    open_read,
    publish,
    saved_generations,
    stats_of,
)
from ragsift.store.lance_write import LanceTransaction, table_schemas
from ragsift.store.memindex import AnnIndex, BM25Index, FlatIndex, ParentTable, SegmentHits, SparseIndex
from ragsift.store.segments import (
    SAVE_MIN,
    BM25Stats,
    Segment,
    SegmentSpec,
    aligned,
    dead_documents,
    kth_score,
    live_mask,
    load_rows,
    memo,
    merge_hits,
    norm_of,
    scan,
    segment_specs,
)
from ragsift.types import Child, Parent

log = logging.getLogger(__name__)

# Below this many children dense search is exact, a matrix product over the generation's
# vectors held in memory (~150 MB at 100k children of 384 dimensions); from it on an HNSW graph
# over int8 vectors (usearch), its candidates re-ranked with the full vectors read from disk.
# The graph's search breadth and the re-rank depth were chosen by measured recall@10 against
# exact search on a million real-text vectors (benchmarks/ann_recall.py, docs/benchmarks.md).
ANN_MIN_CHILDREN = int(os.environ.get("RAGSIFT_ANN_MIN_CHILDREN", "200000"))
ANN_EXPANSION = 1024
ANN_REFINE_FACTOR = 4
SELECTIONS_MB = 64  # the rows of recent filters kept per generation (8 bytes a selected child)
CACHE = "search-cache"  # saved search indexes, one folder per segment and index
STABLE_ROW_IDS = "new_table_enable_stable_row_ids"


def _sparse(seg: Segment, table: Any) -> SparseIndex:
    return SparseIndex(seg.rows, aligned(table, seg, ["sparse_idx", "sparse_val"]))


def _col(field: str) -> str:
    return field if field in BUILTIN_FIELDS else f"m_{field}"


class LanceStore(ManifestStore):
    """LanceDB-backed store. One writer at a time (a lock file); any number of readers."""

    # BM25 keeps statistics per language in a base of several (``BM25Stats``); off: one set, what
    # the store did before (the benchmarks that measure the difference turn it off)
    bm25_per_language = True

    def __init__(self, path: str | Path, dim: int | None = None, vectors: dict[str, int] | None = None,
                 sparse: bool = False, lock_timeout_s: float = 10.0, keep_generations: int = 2,
                 optimize_every: int = 20, identity: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.identity = identity
        self.lock_timeout_s = lock_timeout_s
        self.keep_generations = keep_generations
        self.optimize_every = optimize_every
        manifest_path = self.path / MANIFEST
        if not manifest_path.exists():
            if dim is None:
                raise StoreError(f"no knowledge base at {self.path} (manifest.json missing)")
            self._create(dim, vectors or {}, sparse)
        self._lance = checked(self.path / "lance")  # a path LanceDB refuses is an error now
        self._db_conn: Any = None
        self._manifest_mtime = 0.0
        self._index_lock = threading.RLock()  # an index may build the shared rows while holding it
        self._selection_lock = threading.Lock()
        self._languages: tuple[int, dict[str, int]] | None = None
        self._segment_cache: dict[str, Segment] = {}
        # per segment: the generation this object last worked out its dead documents at, and them
        self._liveness: dict[str, tuple[int, frozenset[str]]] = {}
        self._load_manifest()

    @property
    def _db(self) -> Any:
        """A LanceDB connection (``import lancedb``): for writing; reads go through ``open_read``."""
        if self._db_conn is None:
            self._db_conn = connect(self._lance)
        return self._db_conn

    # ------------------------------------------------------------------ set-up
    def _create(self, dim: int, vectors: dict[str, int], sparse: bool) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        with WriteLock(self.path, self.lock_timeout_s):
            if (self.path / MANIFEST).exists():
                return
            # stable row ids: a row keeps its id through compaction, so a segment read once stays valid
            db = connect(self.path / "lance", storage_options={STABLE_ROW_IDS: "true"})
            versions = {}
            extra = {name: {"column": f"vec{i + 1}", "dim": d} for i, (name, d) in enumerate(vectors.items())}
            for name, schema in table_schemas(dim, extra, sparse).items():
                t = db.create_table(name, schema=schema, exist_ok=True)
                versions[name] = t.version
            manifest = {"format": FORMAT, "generation": 0, "versions": versions, "fields": {},
                        "dim": dim, "committed_at": time.time(), "fts": False, "vectors": extra, "sparse": sparse,
                        "stable_row_ids": True, "segments": [], "epoch": 0}
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
                t = open_read(self._lance, name, int(m["versions"][name]))
            except Exception as e:
                raise StoreError(f"table {name} at version {m['versions'][name]} cannot be read "
                                 f"({str(e).splitlines()[0][:200]}); `ragsift check` tells more") from e
            self._tables[name] = t
        self._gen: dict[Any, Any] = {}  # what the pinned generation computed once (segments, liveness, statistics)
        # segments read by this object, kept while the generation lists them (``segment_specs``)
        names = {spec.name for spec in segment_specs(m)}
        self._segment_cache = {n: seg for n, seg in self._segment_cache.items() if n in names}
        self._liveness = {n: v for n, v in self._liveness.items() if n in names}
        self._selections: OrderedDict[str, list[np.ndarray]] = OrderedDict()  # a filter's rows in this generation
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
        column, dim = self._column(using)  # an unknown embedder is an error even on an empty store
        if self.generation == 0 or self._kinds(kinds) == "":
            return []
        v = np.asarray(vector, np.float32)
        parts = [self._dense(seg, column, dim).search(v, k, rows)
                 for seg, rows in zip(self.segments(), self._select(where, kinds)) if rows is None or len(rows)]
        return merge_hits(parts, k)

    def _hit_columns(self) -> list[str]:
        return self._hit_cols + (["kind"] if "kind" in self._child_columns else [])

    def _state(self, key: Any, build: Callable[[], Any]) -> Any:
        """A value of the pinned generation (liveness, statistics), computed on first use."""
        return memo(self._gen, self._index_lock, key, build)

    def _scan(self, columns: list[str], row_ids: bool = False) -> pa.Table:
        """These columns of every child, read with a projection (never the whole table);
        ``row_ids``: with the table's ``_rowid`` column."""
        return scan(self._tables["children"], columns, None, row_ids)

    def segments(self) -> list[Segment]:
        """The segments of the pinned generation, oldest first; a segment read by an earlier
        generation of this object is kept, not read again."""
        return self._state("segments", lambda: [self._segment(spec, self._tables, self.generation)
                                                for spec in segment_specs(self.manifest)])

    @staticmethod
    def _size(spec: SegmentSpec, table: Any) -> tuple[int, bool]:
        """A segment's rows (a bound: its rows only die after its commit, so the manifest's count
        bounds them) and whether its indexes are saved: large segments, and any with an HNSW graph
        (its files use the saved row order)."""
        n = spec.rows if spec.where is not None else table.count_rows()
        return n, n >= ANN_MIN_CHILDREN or (spec.where is not None and n >= SAVE_MIN)

    def _segment(self, spec: SegmentSpec, tables: dict[str, Any], generation: int,
                 size: tuple[int, bool] | None = None) -> Segment:
        """A segment (``tables``: of ``generation``), from this object's cache when it read it before."""
        seg = self._segment_cache.get(spec.name)
        if seg is None:
            table = tables["children"]
            n, saving = size or self._size(spec, table)
            rows, read_at = load_rows(table, spec.name, spec.where, self.path / CACHE, saving,
                                      [*self._hit_columns(), "gen"], generation, n)
            seg = Segment(spec.name, spec.lo, spec.hi, spec.where, self.path / CACHE, saving, rows, read_at)
            if tables is self._tables:
                self._segment_cache[spec.name] = seg
        return seg

    def _dead(self, seg: Segment) -> frozenset[str]:
        """The segment's documents deleted or rewritten since its rows were read (their rows are dead)."""
        if seg.where is None:
            return frozenset()  # the whole table read at this generation: all live
        return self._state(("dead", seg.name), lambda: self._dead_now(seg))

    def _dead_now(self, seg: Segment) -> frozenset[str]:
        """From what this object knew at an earlier generation (or the segment's reading) and the
        documents each commit since lists as deleted or replaced (its manifest's ``dropped``);
        from the whole documents table where a commit in between is not kept or listed none."""
        start, dead = self._liveness.get(seg.name, (seg.read_at, frozenset()))
        drops = self._drops(start) if start >= 0 else None
        if drops is None:
            docs = scan(self._tables["documents"], ["doc_id", "gen"], None, row_ids=False)
            dead = dead_documents(seg.rows, docs.column("doc_id").combine_chunks(),
                                  np.asarray(docs.column("gen").to_numpy(), np.int64))
        elif drops:
            dead = dead | {d for g, ids in drops.items() if seg.lo < g <= seg.hi for d in ids}
        self._liveness[seg.name] = (self.generation, dead)
        return dead

    def _drops(self, since: int) -> dict[int, list[str]] | None:
        """The documents deleted or replaced by the commits after ``since`` up to the pinned one,
        by the generation that wrote them; None when a commit in between is not known."""
        out: dict[int, list[str]] = {}
        for g in range(since + 1, self.generation + 1):
            if g == self.generation:
                m = self.manifest
            else:
                try:
                    m = json.loads(generation_file(self.path, g).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    return None
            dropped = m.get("dropped")
            if not isinstance(dropped, dict) or int(m.get("generation", -1)) != g:
                return None
            for written, ids in dropped.items():
                out.setdefault(int(written), []).extend(ids)
        return out

    def _dense(self, seg: Segment, column: str, dim: int, tables: dict[str, Any] | None = None) -> FlatIndex | AnnIndex:
        """A segment's vectors of one column: exact below ``ANN_MIN_CHILDREN`` children, HNSW with
        an exact re-rank from it on."""
        table = (tables or self._tables)["children"]

        def build() -> FlatIndex | AnnIndex:
            load = lambda: aligned(table, seg, [column])  # noqa: E731
            if seg.rows.n < ANN_MIN_CHILDREN:
                return FlatIndex(seg.rows, load, column, dim, seg.cache_dir(column) if seg.saving else None)
            return AnnIndex(seg.rows, load, column, dim, seg.cache_dir(column), ANN_EXPANSION, ANN_REFINE_FACTOR)
        return seg.index(f"dense:{column}", build)

    def dense_index(self, using: str = "", segment: Segment | None = None) -> FlatIndex | AnnIndex:
        """The newest segment's (or ``segment``'s) index of the main embedder's vectors (or extra
        embedder ``using``)."""
        column, dim = self._column(using)
        return self._dense(segment or self.segments()[-1], column, dim)

    def bm25_index(self, segment: Segment | None = None) -> BM25Index:
        """The newest segment's (or ``segment``'s) BM25 postings; weigh them with ``bm25_stats()``."""
        return self._bm25(segment or self.segments()[-1])

    def table(self, name: str) -> Any:
        """The committed generation's Lance table ``name`` (children, parents, documents), to read."""
        return self._tables[name]

    def _live(self, seg: Segment) -> np.ndarray | None:
        """The segment's live rows as a mask (None: all)."""
        if seg.where is None:
            return None
        return self._state(("live", seg.name), lambda: live_mask(seg.rows, self._dead(seg)))

    def _allowed(self, seg: Segment, kinds: Sequence[str]) -> np.ndarray | None:
        """The segment's live rows of these kinds (None: every row)."""
        def build() -> np.ndarray | None:
            rows, live = seg.rows.rows_of(kinds), self._live(seg)
            if live is None:
                return rows
            mask = live.copy()
            if rows is not None:
                mask &= np.isin(np.arange(seg.rows.n), rows)
            return np.flatnonzero(mask)
        return self._state(("allowed", seg.name, tuple(sorted(set(kinds)))), build)

    def search_sparse(self, query: dict[int, float], k: int, where: Node | None,
                      kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        if not self.manifest.get("sparse"):
            raise StoreError("this knowledge base has no learned sparse vectors (set sparse_encoder when creating it)")
        if self.generation == 0 or not query or self._kinds(kinds) == "":
            return []
        parts = []
        table = self._tables["children"]
        for seg, rows in zip(self.segments(), self._select(where, kinds)):
            if rows is not None and not len(rows):
                continue
            index = seg.index("sparse", partial(_sparse, seg, table))
            parts.append(index.search(query, k, rows))
        return merge_hits(parts, k)

    def _select(self, where: Node | None, kinds: Sequence[str]) -> Sequence[np.ndarray | None]:
        """Per segment, the rows a search may return: live, of its kinds, and (with a filter) the
        rows the store selects for it. None: every row.

        A filter is evaluated by the table once per generation: its rows are kept (per segment, a
        sorted array of row numbers, ``SELECTIONS_MB`` in all, least recently used dropped first),
        so a filter asked again costs what its search costs, not a scan of the table. The table
        holds live rows only: a filter's rows need no liveness test."""
        segs = self.segments()
        if where is None:
            return [self._allowed(seg, kinds) for seg in segs]
        clause = self._with_kinds(where, kinds)
        assert clause is not None  # where is not None, so it renders to a clause
        with self._selection_lock:
            found = self._selections.get(clause)
            if found is not None:
                self._selections.move_to_end(clause)
                return found
        # the segments' rows bound the table's (rows only die): no count first
        ids = scan(self._tables["children"], ["start"], clause, most=sum(seg.rows.n for seg in segs)
                   ).column("_rowid").to_numpy()
        found = [seg.rows.rows_of_row_ids(ids) for seg in segs]  # segment rows were read with their row ids
        for rows in found:
            rows.setflags(write=False)  # shared by every query with this filter
        with self._selection_lock:
            self._selections[clause] = found
            budget = SELECTIONS_MB * 2**20
            while len(self._selections) > 1 and sum(r.nbytes for f in self._selections.values() for r in f
                                                    if r is not None) > budget:
                self._selections.popitem(last=False)
        return found

    def search_bm25(self, terms: str, k: int, where: Node | None,
                    kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        if self.generation == 0 or not terms.strip() or self._kinds(kinds) == "":
            return []
        segs = self.segments()
        stats = self.bm25_stats()
        items = stats.weights(terms)
        if not items:
            return []
        parts: list[SegmentHits] = []
        # the largest (oldest) segment first: the k-th best score found so far is a floor later
        # segments prune with
        for seg, rows in zip(segs, self._select(where, kinds)):
            if rows is not None and not len(rows):
                continue
            norm = self._state(("norm", seg.name), partial(norm_of, self._bm25(seg), stats.avgdl))
            parts.append(self._bm25(seg).search(items, k, rows, norm, stats.avgdl, kth_score(parts, k)))
        return merge_hits(parts, k)

    def _bm25(self, seg: Segment, tables: dict[str, Any] | None = None) -> BM25Index:
        table = (tables or self._tables)["children"]
        return seg.index("bm25", lambda: BM25Index(seg.rows, lambda: aligned(table, seg, ["terms"]),
                                                   seg.cache_dir("postings") if seg.saving else None))

    def bm25_stats(self) -> BM25Stats:
        """BM25's statistics over every segment's live rows (one merged index's), per language
        unless ``bm25_per_language`` is off (``BM25Stats``)."""
        return self._state("bm25", lambda: BM25Stats([(self._bm25(seg), self._live(seg)) for seg in self.segments()],
                                                     self.bm25_per_language))

    def save_search_indexes(self) -> bool:
        """Build and save the search indexes of the committed generation's large segments (of
        ``SAVE_MIN`` children or more; ``ANN_MIN_CHILDREN`` in a store written before segments),
        so that readers map them from disk instead of building them at their first query. The
        writer does this for every segment it commits; returns whether any segment is saved."""
        if self.generation == 0:
            return False
        saved = self._save_segments(self.manifest, self._tables)
        self._drop_old_caches()
        return saved

    def _save_segments(self, manifest: dict[str, Any], tables: dict[str, Any]) -> bool:
        """Build and save each large segment of ``manifest`` from ``tables`` (a writer's, before it
        commits: readers of the new generation find them saved)."""
        saved = False
        columns = [("vector", int(manifest["dim"])),
                   *[(v["column"], int(v["dim"])) for v in manifest.get("vectors", {}).values()]]
        for spec in segment_specs(manifest):
            parts = ["rows", "postings", "parents", *(c for c, _ in columns)]
            if all((self.path / CACHE / f"{spec.name}-{what}").is_dir() for what in parts):
                saved = True  # saved by an earlier commit
                continue
            size = self._size(spec, tables["children"])
            if not size[1]:
                continue  # small: readers build it (reading its rows here would be for nothing)
            seg = self._segment(spec, tables, int(manifest["generation"]), size)
            for column, dim in columns:
                self._dense(seg, column, dim, tables)
            self._bm25(seg, tables)
            self._parents(seg, tables)
            seg.indexes.clear()  # the files are what readers use; this was only the builder
            saved = True
        return saved

    def _drop_uncommitted_caches(self) -> None:
        """Remove saved segments of generations after the committed one: a writer saved them and died
        before its commit, and the next commit of that generation writes other rows."""
        folder = self.path / CACHE
        if not folder.is_dir():
            return
        for d in folder.iterdir():
            parts = d.name.split("-")
            hi = parts[2] if d.name.startswith("s") and len(parts) > 3 else parts[0]
            if hi.isdigit() and int(hi) > self.generation:
                shutil.rmtree(d, ignore_errors=True)

    def _drop_old_caches(self) -> None:
        """Remove the saved indexes of segments that no kept generation lists."""
        keep = {spec.name for spec in segment_specs(self.manifest)}
        for g in saved_generations(self.path)[-self.keep_generations:]:
            try:
                m = json.loads(generation_file(self.path, g).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return  # cannot tell what it lists: keep everything
            keep |= {spec.name for spec in segment_specs(m)}
        folder = self.path / CACHE
        if not folder.is_dir():
            return
        for d in folder.iterdir():
            if d.is_dir() and not d.name.startswith(".") and d.name.rsplit("-", 1)[0] not in keep:
                shutil.rmtree(d, ignore_errors=True)

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
        return StoredParent(p, r["source"], r["title"], read_metadata(r["metadata"]))

    def _parent_rows(self, parent_ids: Iterable[str], columns: list[str] | None = None) -> list[dict[str, Any]]:
        """The rows of the parents found (``columns`` of them), each from the newest segment that
        has it alive: a rewritten document's parents are there."""
        ids = list(dict.fromkeys(parent_ids))
        if not ids or self.generation == 0:
            return []
        out: list[dict[str, Any]] = []
        found: set[str] = set()
        for seg in reversed(self.segments()):
            rows = self._parents(seg).take([i for i in ids if i not in found], columns).to_pylist()
            dead = self._dead(seg)
            if dead:
                rows = [r for r in rows if r["doc_id"] not in dead]
            out += rows
            found.update(r["parent_id"] for r in rows)
            if len(found) == len(ids):
                break
        return out

    def get_parents(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]:
        return {r["parent_id"]: self._stored_parent(r) for r in self._parent_rows(parent_ids)}

    def parent_labels(self, parent_ids: Iterable[str]) -> dict[str, ParentLabel]:
        return {r["parent_id"]: ParentLabel(r["source"], *read_heading(r["heading"]))
                for r in self._parent_rows(parent_ids, ["parent_id", "doc_id", "heading", "source"])}

    def _parents(self, seg: Segment, tables: dict[str, Any] | None = None) -> ParentTable:
        """A segment's parents by id: in memory, memory-mapped from a saved file in large segments."""
        table = (tables or self._tables)["parents"]
        cols = [*self._PARENT_COLS, "gen"]
        return seg.index("parents", lambda: ParentTable(lambda: scan(table, cols, seg.where, row_ids=False),
                                                        seg.cache_dir("parents") if seg.saving else None))

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
                                            read_metadata(r["metadata"]))
                for r in tbl.to_pylist()}

    def get_documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, StoredDocument]:
        if doc_ids is None:
            return self._docs_from(self._tables["documents"].to_arrow())
        return self._docs_from(self._rows("documents", "doc_id", doc_ids))

    def document_titles(self) -> list[tuple[str, str]]:
        if self.generation == 0:
            return []
        tbl = scan(self._tables["documents"], ["doc_id", "title"], "title != ''", row_ids=False)
        return list(zip(tbl.column("doc_id").to_pylist(), tbl.column("title").to_pylist()))

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
