"""KnowledgeBase: the Python API. Open a directory, ingest files, ask questions.

The knowledge base is a facade: ingest runs in ``ingest.pipeline``, queries in
``retrieve.pipeline.Retriever`` (its one door to the engine), files and identity in
``kb.files``, a write's failures in ``kb.writer``."""
from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsift.cancel import Deadline, RWLock
from ragsift.config import INDEX_KEYS, NOT_PER_QUERY, EntryKind, Settings, current_name
from ragsift.errors import ConfigError, InputError, NotFound, StoreError, os_reason
from ragsift.kb.files import (
    SETTINGS_FILE,
    check_identity,
    check_knowledge_base,
    copy_settings,
    copy_store,
    document_view,
    missing_settings,
    restore_knowledge_base,
    rewrite_settings,
    shown,
)
from ragsift.models.embedders import Embedder, load_embedder
from ragsift.process import release
from ragsift.retrieve.pipeline import Retriever
from ragsift.retrieve.search import SearchRound
from ragsift.store import check_store, committed_stats, named, open_store, stored_identity
from ragsift.store.base import CheckReport, Store, StoredDocument, StoredParent
from ragsift.store.filters import asked_values, missing_values, parse_filter
from ragsift.text.analyzer import DEFAULT_ANALYZER, analyzer_for
from ragsift.types import EMPTY_KNOWLEDGE_BASE, PATH_KEY, Document, IngestReport, Result, public_metadata

if TYPE_CHECKING:  # a reader never imports the ingest pipeline (its loaders): imported where a write runs
    from ragsift.ingest.pipeline import ProgressFactory

log = logging.getLogger(__name__)
OVERRIDE_CACHE = 128  # checked settings kept for repeated per-query overrides

#: what ``list_documents`` sorts by (None: the source, then the id)
DOCUMENT_SORTS: dict[str, Callable[[StoredDocument], Any] | None] = {
    "source": None,
    "title": lambda d: _folded(d.title),
    "parents": lambda d: d.parents,
    "children": lambda d: d.children,
    "format": lambda d: d.format,
    "generation": lambda d: d.generation,
}


def _with_settings(st: dict[str, Any], settings: Settings, analyzer: str) -> dict[str, Any]:
    """A store's stats with the settings in force and the BM25 analyzer (and whether it is current)."""
    st["settings"] = settings.to_dict()
    st["analyzer"] = {"name": analyzer, "current": analyzer == DEFAULT_ANALYZER}
    if analyzer != DEFAULT_ANALYZER:
        st["analyzer"]["note"] = (f"made with the BM25 analyzer {analyzer}, which it keeps; "
                                  f"re-ingest into a new knowledge base for {DEFAULT_ANALYZER}")
    return st


def _public(d: StoredDocument) -> StoredDocument:
    """A stored document as a caller sees it (``types.public_metadata``: without where its file is)."""
    meta = public_metadata(d.metadata)
    return d if meta is d.metadata else replace(d, metadata=meta)


def _public_section(sp: StoredParent) -> StoredParent:
    meta = public_metadata(sp.metadata)
    return sp if meta is sp.metadata else replace(sp, metadata=meta)


def _folded(text: str) -> str:
    """Text as a document search compares it: NFKC (full width as half), case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


class KnowledgeBase:
    """A knowledge base in one directory: its settings (``ragsift.toml``), and the embedded
    LanceDB store or the name of its collections on a Milvus server (``store_kind="milvus",
    store_uri=...``).

    ``KnowledgeBase.open(path, **settings)`` creates it on first use with the given settings;
    later opens read the settings saved with it. Index settings (``[index]``: embedder, chunk
    sizes, the small index; and the store kind) cannot change on an existing knowledge base;
    every other setting is a default that a single query may override.

    - ``ingest(paths)``: load, split, embed and store files or directories in one commit (or, with
      ``checkpoint_documents`` / ``checkpoint_seconds``, in checkpoints that a re-run resumes from);
    - ``query(question, filter=..., **overrides)``: passages and a trace (``Result``);
    - ``rank_documents(question, k)``: document ids in final order (evaluation);
    - ``delete``, ``documents``, ``stats``, ``copy_to`` (another store), ``close``.

    What it returns is what any caller may see: a document's metadata never holds where its file
    is on this machine (``types.PATH_KEY``, kept for identity and sync); ``file_paths`` gives the
    operator that.

    Settings are named by their flat names (``ragsift.config``): ``unit="window"``,
    ``fusion="weighted"``, ``llm_model="openai:qwen2.5-7b"``.

    Threads: any number of queries may run at once, beside one write (an ingest, a delete). A
    write goes through a store object of its own; queries read a committed generation and move
    to a newer one between queries, never during one.
    """

    def __init__(self, path: Path, settings: Settings, store: Store) -> None:
        self.path = path
        self.settings = settings
        self.store = store
        self.analyzer = analyzer_for(settings.index.analyzer)
        self._embedder: Embedder | None = None
        self.retriever = Retriever(store, self.embedder, self.analyzer)
        self._override_cache: dict[str, tuple[Settings, Settings]] = {}
        self._override_lock = threading.Lock()
        self._rw = RWLock()  # queries read self.store; a refresh of it is the only writer
        self._write_lock = threading.Lock()  # one write at a time from this object

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path, *, create: bool = True, **overrides: Any) -> KnowledgeBase:
        """Open the knowledge base at ``path``, creating it (with ``overrides`` as its settings)
        when ``create`` and there is none. On an existing one, ``overrides`` change the saved
        query defaults for this session; an index setting that differs raises ConfigError. What the
        system refuses (a folder that cannot be made or read, a name too long) is a StoreError
        naming the path."""
        path = Path(path)
        try:
            return cls._open(path, create, overrides)
        except OSError as e:
            exists = _exists(path / SETTINGS_FILE)
            raise StoreError(f"cannot {'open' if exists or not create else 'create'} the knowledge base at {path}: "
                             f"{os_reason(e, path)}") from None

    @classmethod
    def _open(cls, path: Path, create: bool, overrides: dict[str, Any]) -> KnowledgeBase:
        sfile = path / SETTINGS_FILE
        overrides = {current_name(k): v for k, v in overrides.items()}
        if sfile.exists():
            settings = Settings.load(sfile)
            for k, v in overrides.items():
                if k in INDEX_KEYS and v is not None:
                    try:
                        asked = settings.replace(**{k: v}).get(k)  # parsed: "chunks" is the chunk entry kind
                    except ConfigError:  # not even valid beside this knowledge base's other settings
                        asked = v
                    if asked != settings.get(k):
                        raise ConfigError(f"this knowledge base was built with {k}={shown(settings.get(k))}; "
                                          f"it cannot change to {shown(asked)} (create a new knowledge base)")
            settings = settings.replace(**{k: v for k, v in overrides.items() if k not in INDEX_KEYS})
            Retriever.check(settings)
            store = open_store(path, settings)
            try:
                check_identity(settings, store.manifest.get("identity"), sfile)
            except ConfigError:
                store.close()
                raise
        else:
            if not create:
                raise StoreError(f"no knowledge base at {path}")
            if path.exists() and path.is_file():
                raise StoreError(f"{path} is a file, not a knowledge-base directory")
            missing = missing_settings(path)
            if missing is not None:
                raise missing
            settings = Settings().replace(**overrides)
            if overrides.get("index_kinds") is None and EntryKind.PARENT in settings.index.small_index:
                # whole sections indexed are searched beside the chunks, mixed by whole_weights
                settings = settings.replace(index_kinds=[EntryKind.CHUNK, EntryKind.PARENT])
            Retriever.check(settings)
            settings = named(settings, path)  # a store kept apart from the directory named from it
            dim = load_embedder(settings.index.embedder, settings.embedding).dim
            vectors = {name: load_embedder(name, settings.embedding).dim for name in settings.index.extra_embedders}
            made = [p for p in (path, *path.parents) if not p.exists()]  # the folders this creation makes
            path.mkdir(parents=True, exist_ok=True)
            try:
                store = open_store(path, settings, dim=dim, vectors=vectors)
            except BaseException:  # a store that cannot be reached (Milvus down): no empty folder left behind
                for folder in made:
                    with contextlib.suppress(OSError):
                        folder.rmdir()  # only while empty
                raise
            settings.save(sfile)
        kb = cls(path, settings, store)
        return kb

    def embedder(self) -> Embedder:
        """The knowledge base's embedding model (loaded on first use)."""
        if self._embedder is None:
            ix = self.settings.index
            self._embedder = load_embedder(ix.embedder, self.settings.embedding, ix.embed_prefixes)
            if self._embedder.dim != self.store.dim:
                raise ConfigError(f"embedder {self._embedder.name} gives {self._embedder.dim}-d "
                                  f"vectors; this knowledge base holds {self.store.dim}-d")
        return self._embedder

    # ------------------------------------------------------------------ ingest
    def ingest(self, paths: str | Path | Sequence[str | Path], *, prefix: str = "",
               progress: ProgressFactory | None = None, record_paths: bool = True) -> IngestReport:
        """Ingest files or directories: by default in one transaction (one new generation).

        A file is one document however it is named: its identity is its absolute path (recorded
        with it, for ragsift only: ``file_paths``), and a file the knowledge base holds keeps the
        source it was first ingested under; a new file's source is its path relative to the
        directory given (or, for a file, its own directory), with ``prefix`` in front. JSONL rows
        keep their own ``_id``. Unchanged documents are skipped; changed ones replace their old
        parents and children. ``record_paths`` off: files named by their sources only (uploads,
        whose folder is temporary). A symbolic link in a directory whose target is outside it is
        skipped with its reason unless the setting ``follow_outside_links`` is on.

        With ``checkpoint_documents`` or ``checkpoint_seconds`` set (settings of the ``ingest``
        group), the ingest commits a generation of whole documents every N documents written or
        M seconds (a checkpoint), so a kill or an error loses only what was written since the
        last one, and running the same ingest again skips what the checkpoints hold (unchanged
        by content hash) and goes on from there. Files are then loaded, split and written as
        they come: what is held at once is one file's documents (at most ``max_file_mb``), one
        batch of documents and the ids of the documents seen.
        """
        from ragsift.ingest.pipeline import documents_of_files, input_files, known_sources, load_limits

        t0 = time.perf_counter()
        if isinstance(paths, (str, Path)):
            paths = [paths]
        report = IngestReport()
        streaming = self._checkpointing()
        with self.reading() as store:
            known = known_sources(store) if record_paths else {}
        items = list(input_files(paths, prefix, known, self.settings.ingest.follow_outside_links))
        docs = documents_of_files(items, report, load_limits(self.settings), streaming, record_paths, progress)
        return self._ingest(docs, report, t0, progress, streaming)

    def sync(self, folder: str | Path, *, prefix: str = "", dry_run: bool = False,
             progress: ProgressFactory | None = None) -> IngestReport:
        """Make the knowledge base mirror ``folder`` in one commit (``ingest.sync``): new and
        changed files written, files gone deleted, renamed files recognised by their content and
        moved without re-embedding. ``dry_run``: what would change, nothing written. The report
        lists added, updated, unchanged, renamed and deleted documents. The sync stays inside the
        folder: a link to a file outside it is skipped (``follow_outside_links``), and a document
        whose file has left it (such a link ingested before) is deleted."""
        from ragsift.ingest.pipeline import IngestRun, load_limits
        from ragsift.ingest.sync import dry_run_report, plan_sync

        t0 = time.perf_counter()
        report = IngestReport()
        limits = load_limits(self.settings)
        follow = self.settings.ingest.follow_outside_links
        if dry_run:
            with self.reading() as store:
                return dry_run_report(plan_sync(folder, prefix, store, limits, report, follow), store, report)
        with self._writer("sync", report) as writer:
            plan = plan_sync(folder, prefix, writer, limits, report, follow)
            run = IngestRun(self.settings, self.analyzer, self.embedder, writer, report, progress)
            run.deletes, run.moves = list(plan.deletes), run.moves + list(plan.moves)
            report = run.run(plan.docs, False, t0)
            plan.report_into(report)
            return report

    def add_documents(self, documents: Iterable[Any], *, source: str | None = None,
                      progress: ProgressFactory | None = None) -> IngestReport:
        """Ingest documents held in code or a database, by default in one transaction. Each is a
        mapping with ``id`` (or ``_id``), ``text``, and optionally ``title``, ``metadata`` (a flat
        mapping of filterable values) and ``source`` (what names it where a person reads it: a
        passage, a listing, a report; default ``source``, else its title, else its id), or an object with
        those attributes: a ragsift ``Document``, a LangChain ``Document`` (``page_content``,
        ``metadata``, ``id``), a LlamaIndex node (``text``, ``metadata``, ``id_``) or a Haystack
        ``Document`` (``content``, ``meta``, ``id``). A document whose id is stored already
        replaces it (unless unchanged); a bad one is skipped with its reason. With a checkpoint
        setting (see ``ingest``), ``documents`` is consumed as it is written (an iterator is
        never held whole) and committed in checkpoints."""
        from ragsift.ingest.pipeline import documents_of_records

        t0 = time.perf_counter()
        report = IngestReport()
        docs = documents_of_records(documents, source, report)
        streaming = self._checkpointing()
        return self._ingest(docs if streaming else list(docs), report, t0, progress, streaming)

    def _checkpointing(self) -> bool:
        ing = self.settings.ingest
        return bool(ing.checkpoint_documents or ing.checkpoint_seconds)

    def _ingest(self, docs: Iterable[Document], report: IngestReport, t0: float,
                progress: ProgressFactory | None, streaming: bool = False) -> IngestReport:
        """Split, embed and store documents on a store object of its own (``ingest.pipeline``)."""
        from ragsift.ingest.pipeline import IngestRun

        with self._writer("ingest", report) as writer:
            run = IngestRun(self.settings, self.analyzer, self.embedder, writer, report, progress)
            report = run.run(docs, streaming, t0)
            if report.checkpoints and writer.save_search_indexes():  # a large store: readers map, not build
                report.seconds = time.perf_counter() - t0
            return report

    @contextmanager
    def _writer(self, what: str, report: IngestReport | None = None) -> Iterator[Store]:
        """A store object of its own for one write, one write at a time from this object; its
        failure explained (``writer.explained_failures``); readers move to what it committed."""
        from ragsift.kb.writer import explained_failures

        with self._write_lock:
            writer = open_store(self.path, self.settings)
            try:
                with explained_failures(writer, what, report):
                    yield writer
            finally:
                try:
                    writer.close()
                finally:
                    self._refresh()
                    release()  # what the write freed goes back to the system (ragsift.process)

    # ------------------------------------------------------------------ query
    def query(self, question: str, *, filter: dict[str, Any] | None = None, deadline: Deadline | None = None,
              trace: bool = True, **overrides: Any) -> Result:
        """Answer a question with ranked passages (parent sections by default) and a trace.

        ``filter`` is a metadata filter (``ragsift.store.filters``). ``overrides`` are settings
        by flat name (``ragsift.config``), for this query only: channels, fusion, rrf_k,
        weights, normalization, unit, index_kinds, whole_weights, max_passages, token_budget,
        channel_depth, channel_timeout_s / channel_timeouts; with a language model (``llm``): hyde_* settings and
        the hyde / hyde_bm25 / multi_query channels, rewrite, rerank, multihop and hop_* settings.
        ``deadline``: cancelling it (a client that went away) stops the query's channels.
        ``trace=False``: a caller that shows no trace skips naming the units it lists (a read
        of their sections) and the router's entity signal (in Chinese, jieba's part-of-speech
        tagger); the trace keeps its channels, fusion, timings and the router's choice and reason
        (chosen from the same signals either way), ``units`` is empty.
        """
        settings = self._query_settings(overrides)
        with self.reading() as store:
            where = parse_filter(filter, store.fields(), settings.query.max_filter_nodes)
            result = self.retriever.answer(question, settings, where, filter, deadline=deadline, name_units=trace)
            if not result.passages:
                result = replace(result, warnings=tuple(_why_nothing(store, where)))
        log.info("query %s %r: %d passages in %.1f ms", result.trace.trace_id[:8], question[:80],
                 len(result.passages), result.trace.timings_ms["total"])
        return result

    def rank_documents(self, question: str, k: int = 100, *, details: dict[str, Any] | None = None,
                       **overrides: Any) -> list[tuple[str, float]]:
        """The ids of the best ``k`` documents with their scores, best first (a document ranks
        as its best unit): what evaluation scores. ``details`` receives the multi-hop trace."""
        settings = self._query_settings(overrides)
        with self.reading():
            return self.retriever.rank_documents(question, settings, k, details=details)

    def search(self, question: str, **overrides: Any) -> SearchRound:
        """The ranked units before expansion, by the query's strategy: each channel's ranking with
        raw scores, the fused order and what was found (for tuning and evaluation)."""
        settings = self._query_settings(overrides)
        with self.reading():
            return self.retriever.search(question, settings, None)

    def set_defaults(self, **changes: Any) -> Settings:
        """Change the query defaults saved with the knowledge base (``ragsift.toml``), e.g. what
        ``ragsift tune`` learned. Index and store settings cannot change."""
        new = self.settings.replace(**changes)
        if new.index != self.settings.index or new.store != self.settings.store:
            raise ConfigError("index and store settings are fixed when a knowledge base is created")
        with self._write_lock, self._override_lock:
            new.save(self.path / SETTINGS_FILE)
            self.settings = new
            self._override_cache.clear()
        return new

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """The store at its newest committed generation, held there while the block runs (other
        queries may read beside it; a newer generation is picked up after)."""
        if self.store.stale():
            self._refresh()
        with self._rw.read():
            yield self.store

    def _refresh(self) -> None:
        with self._rw.write():
            self.store.refresh()

    def query_settings(self, **overrides: Any) -> Settings:
        """The settings a query with these overrides would run with, checked (ConfigError when
        a value or a channel is wrong)."""
        return self._query_settings(overrides)

    def _query_settings(self, overrides: dict[str, Any]) -> Settings:
        """The settings of one query: the knowledge base's with ``overrides``, checked. The same
        overrides again (an evaluation run, a server's clients) reuse the checked settings."""
        if not overrides:
            return self.settings
        overrides = {current_name(k): v for k, v in overrides.items()}
        try:
            key = json.dumps(overrides, sort_keys=True, allow_nan=True)
        except (TypeError, ValueError):
            key = None
        with self._override_lock:
            cached = self._override_cache.get(key) if key is not None else None
        if cached is not None and cached[0] is self.settings:
            return cached[1]
        bad = sorted(k for k, v in overrides.items() if k in NOT_PER_QUERY and v is not None)
        if bad:
            raise ConfigError(f"index settings cannot change per query: {', '.join(bad)}")
        settings = self.settings.replace(**overrides)
        Retriever.check(settings)
        if key is not None:
            with self._override_lock:
                if len(self._override_cache) >= OVERRIDE_CACHE:
                    self._override_cache.pop(next(iter(self._override_cache)))
                self._override_cache[key] = (self.settings, settings)
        return settings

    # ------------------------------------------------------------------ manage
    def delete(self, ids: Iterable[str] = (), *, source: str | None = None) -> list[str]:
        """Delete documents (by id, or all with a source path) with all their parents and
        children, in one commit. Returns the ids deleted; unknown ids raise."""
        ids = list(ids)
        with self._writer("delete") as writer:
            if source is not None:
                found = [d.doc_id for d in writer.find_documents(source)]
                if not found:
                    raise NotFound(f"no document with source {source!r}")
                ids.extend(found)
            if not ids:
                raise InputError("nothing to delete: give document ids or a source")
            known = writer.get_documents(ids)
            missing = [i for i in ids if i not in known]
            if missing:
                raise NotFound(f"unknown document id(s): {', '.join(missing[:10])}")
            with writer.begin() as txn:
                for i in dict.fromkeys(ids):
                    txn.delete_document(i)
        return list(dict.fromkeys(ids))

    def copy_to(self, path: str | Path, *, progress: ProgressFactory | None = None,
                **store: Any) -> KnowledgeBase:
        """Copy this knowledge base to a new one at ``path`` on another store (``store_kind="milvus",
        store_uri=...`` or ``store_kind="lancedb"``) without re-embedding: documents, parents,
        children, their terms and vectors go over as stored, in one commit. The copy keeps every
        other setting. Returns the new knowledge base."""
        settings = copy_settings(self.settings, Path(path), store)
        with self.reading() as src:
            dest = copy_store(src, Path(path), settings, progress)
        kb = KnowledgeBase(Path(path), settings, dest)
        kb._embedder = self._embedder
        return kb

    def document(self, doc_id: str) -> tuple[StoredDocument, list[StoredParent]] | None:
        """A stored document and its sections in order (summary parents left out), or None."""
        with self.reading() as store:
            doc = store.get_documents([doc_id]).get(doc_id)
            if doc is None:
                return None
            parents = store.get_document_parents([doc_id]).get(doc_id, [])
        return _public(doc), [_public_section(sp) for sp in parents if not sp.parent.synthetic]

    def view(self, doc_id: str) -> dict[str, Any] | None:
        """How a document was read (``kb.files.document_view``): its heading tree, its parents
        (sections) with their pages or slides and tables, every entry of its small index, the pages
        read by OCR; None for an unknown id. What ``ragsift show`` prints and the web page shows."""
        with self.reading() as store:
            doc = store.get_documents([doc_id]).get(doc_id)
            if doc is None:
                return None
            parents = store.get_document_parents([doc_id]).get(doc_id, [])
            entries = store.get_entries([doc_id]).get(doc_id, [])
        return document_view(_public(doc), parents, entries)

    def sections(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]:
        """Whole sections (parents) by id: what a passage was cut from."""
        with self.reading() as store:
            return {k: _public_section(sp) for k, sp in store.get_parents(list(parent_ids)).items()}

    def documents(self) -> dict[str, StoredDocument]:
        """The stored documents by id (``StoredDocument``: source, title, counts, metadata)."""
        with self.reading() as store:
            return {k: _public(d) for k, d in store.get_documents().items()}

    def file_paths(self, doc_ids: Iterable[str] | None = None) -> dict[str, str]:
        """Where on this machine the file of each document (of ``doc_ids``, or all) was read
        from, by document id: the absolute path that is a file's identity and what a sync
        mirrors by. The operator's: no other method, face or filter gives it (a caller sees a
        document's ``source``). Documents not read from a file here (records added from code,
        uploads) have none."""
        with self.reading() as store:
            docs = store.get_documents(list(doc_ids) if doc_ids is not None else None)
        return {k: p for k, d in docs.items() if isinstance(p := d.metadata.get(PATH_KEY), str)}

    def list_documents(self, offset: int = 0, limit: int = 50, *, q: str | None = None, sort: str = "source",
                       order: str = "asc") -> tuple[int, list[StoredDocument]]:
        """A page of the stored documents, and how many match in all: what every face lists.

        ``q`` keeps the documents whose source or title holds every word of it (case- and
        width-insensitive: "Guide", "guide" and "ｇｕｉｄｅ" are one; Chinese as written,
        "手册" finds "星云音箱手册"). ``sort`` is one of ``DOCUMENT_SORTS`` (``generation``: the
        commit that wrote it, so ``order="desc"`` puts the newest first), ``order`` ``asc`` or
        ``desc``; ties go by source, then id."""
        if sort not in DOCUMENT_SORTS:
            raise InputError(f"sort must be one of {', '.join(DOCUMENT_SORTS)}; got {sort[:50]!r}")
        if order not in ("asc", "desc"):
            raise InputError(f"order must be asc or desc; got {order[:50]!r}")
        docs = sorted(self.documents().values(), key=lambda d: (d.source, d.doc_id))
        words = _folded(q or "").split()
        if words:
            docs = [d for d in docs if all(w in _folded(f"{d.source}\n{d.title}") for w in words)]
        key = DOCUMENT_SORTS[sort]
        if key is not None:  # a stable sort: equal keys stay in (source, id) order
            docs.sort(key=key, reverse=order == "desc")
        elif order == "desc":
            docs.reverse()
        return len(docs), docs[offset:offset + limit]

    # ------------------------------------------------------------------ upkeep
    def optimize(self) -> dict[str, Any]:
        """Compact the store and remove the table versions of generations no longer kept
        (``keep_generations``); LanceDB commits this as a generation of the same documents."""
        with self._writer("optimize") as writer:
            done = writer.optimize()
            writer.save_search_indexes()
            return done

    def check(self) -> CheckReport:
        """Read the committed generation whole and check it, and which kept generations a
        restore can go back to (``check_knowledge_base`` works on one that cannot open)."""
        return check_store(self.path, self.settings)

    def stats(self) -> dict[str, Any]:
        """Counts, generation, store details and the settings in force (by group)."""
        with self.reading() as store:
            st = store.stats()
        return _with_settings(st, self.settings, self.analyzer.name)

    @staticmethod
    def committed_stats(path: str | Path) -> dict[str, Any] | None:
        """``stats()`` of the knowledge base at ``path`` without opening its store, where its
        backend reads what the last commit recorded (``StoreBackend.committed_stats``: the embedded
        store's manifest records its counts at every commit since they were); None otherwise (then
        open it). The settings file is checked against the store's record as ``open`` checks it."""
        path = Path(path)
        try:
            return KnowledgeBase._committed_stats(path)
        except OSError as e:
            raise StoreError(f"cannot open the knowledge base at {path}: {os_reason(e, path)}") from None

    @staticmethod
    def _committed_stats(path: Path) -> dict[str, Any] | None:
        sfile = path / SETTINGS_FILE
        if not sfile.exists():
            return None
        settings = Settings.load(sfile)
        st = committed_stats(path, settings)
        if st is None:
            return None
        check_identity(settings, stored_identity(path, settings), sfile)
        return _with_settings(st, settings, analyzer_for(settings.index.analyzer).name)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _why_nothing(store: Store, where: Any) -> list[str]:
    """Why a query found nothing, where it can be told (``Result.warnings``): the knowledge base
    is empty, or its filter asks for values no document holds (``filters.missing_values``)."""
    docs = store.get_documents()
    if not docs:
        return [EMPTY_KNOWLEDGE_BASE]
    asked = {name for name, _ in asked_values(where)}
    if not asked:
        return []
    held: dict[str, set[Any]] = {name: set() for name in asked if name != "lang"}
    for d in docs.values():
        for name, values in held.items():
            value = getattr(d, name) if name in ("doc_id", "source", "title", "format") else d.metadata.get(name)
            for v in value if isinstance(value, list) else [value]:
                if v is not None and isinstance(v, (str, int, float, bool)):
                    values.add(v)
    return missing_values(where, held)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


__all__ = ["KnowledgeBase", "SETTINGS_FILE", "check_knowledge_base", "restore_knowledge_base", "rewrite_settings"]
