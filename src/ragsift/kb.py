"""KnowledgeBase: the Python API. Open a directory, ingest files, ask questions."""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ragsift.cancel import Deadline, RWLock
from ragsift.config import INDEX_KEYS, NOT_PER_QUERY, Settings, StoreKind
from ragsift.errors import ConfigError, RagsiftError, StoreError
from ragsift.ingest.loaders import LoadLimits, as_record, doc_id_for, iter_files, load_file, record_document
from ragsift.ingest.small_index import DERIVED_KINDS, SmallIndex, make_summarizer
from ragsift.ingest.splitter import SplitSettings, index_text, split_document
from ragsift.models.embedders import Embedder, load_embedder
from ragsift.models.llm import llm_for
from ragsift.retrieve.pipeline import Retriever
from ragsift.retrieve.search import SearchRound
from ragsift.store import check_store, default_store_name, embedded_identity, open_store, restore_store
from ragsift.store.base import CheckReport, IndexedChild, Store, StoredDocument, StoredParent
from ragsift.store.filters import parse_filter
from ragsift.text.analyzer import DEFAULT_ANALYZER, analyzer_for
from ragsift.text.lang import detect_language
from ragsift.types import Document, IngestReport, Result, Skipped

log = logging.getLogger(__name__)
SETTINGS_FILE = "ragsift.toml"
EMBED_BATCH = 64
INGEST_GROUP = 256  # documents looked up (stored or changed) at a time by a streaming (checkpointed) ingest
OVERRIDE_CACHE = 128  # checked settings kept for repeated per-query overrides

# (total, description) -> object with update(n), close(); total None: not known (a checkpointed ingest)
ProgressFactory = Callable[[int | None, str], Any]


class KnowledgeBase:
    """A knowledge base in one directory: its settings (``ragsift.toml``), and the embedded
    LanceDB store or the name of its collections on a Milvus server (``store="milvus",
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

    Settings are named by their flat names (``ragsift.config``): ``unit="window"``,
    ``fusion="weighted"``, ``llm="openai:qwen2.5-7b"``.

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
    def open(cls, path: str | Path, *, create: bool = True, **overrides: Any) -> "KnowledgeBase":
        """Open the knowledge base at ``path``, creating it (with ``overrides`` as its settings)
        when ``create`` and there is none. On an existing one, ``overrides`` change the saved
        query defaults for this session; an index setting that differs raises ConfigError."""
        path = Path(path)
        sfile = path / SETTINGS_FILE
        if sfile.exists():
            settings = Settings.load(sfile)
            for k, v in overrides.items():
                asked = tuple(v) if isinstance(v, list) else v
                if k in INDEX_KEYS and v is not None and asked != settings.get(k):
                    raise ConfigError(f"this knowledge base was built with {k}={_shown(settings.get(k))}; "
                                      f"it cannot change to {_shown(asked)} (create a new knowledge base)")
            settings = settings.replace(**{k: v for k, v in overrides.items() if k not in INDEX_KEYS})
            Retriever.check(settings)
            store = open_store(path, settings)
            try:
                _check_identity(settings, store.manifest.get("identity"), sfile)
            except ConfigError:
                store.close()
                raise
        else:
            if not create:
                raise StoreError(f"no knowledge base at {path}")
            if path.exists() and path.is_file():
                raise StoreError(f"{path} is a file, not a knowledge-base directory")
            recorded = embedded_identity(path)
            if recorded is not None:  # a store without its settings file: never made again with defaults
                shown = ", ".join(f"{k}={_shown(v)}" for k, v in recorded.items() if k in IDENTITY_SHOWN)
                raise ConfigError(f"{sfile} is missing, but {path} holds a knowledge base"
                                  + (f" (made with {shown})" if shown else "")
                                  + "; put its settings file back, or run `ragsift --kb "
                                  f"{path} check --rewrite-settings` to write the settings its store recorded")
            settings = Settings().replace(**overrides)
            Retriever.check(settings)
            if settings.store.kind is StoreKind.MILVUS and not settings.store.name:
                settings = settings.replace(store_name=default_store_name(path))
            dim = load_embedder(settings.index.embedder, settings.embedding).dim
            vectors = {name: load_embedder(name, settings.embedding).dim for name in settings.index.extra_embedders}
            path.mkdir(parents=True, exist_ok=True)
            store = open_store(path, settings, dim=dim, vectors=vectors)
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
               progress: ProgressFactory | None = None) -> IngestReport:
        """Ingest files or directories: by default in one transaction (one new generation).

        A document's id comes from its path relative to the directory given (or, for a file,
        its own directory), with ``prefix`` in front: ingesting ``docs/`` and then
        ``docs/a.md`` names the same document. JSONL rows keep their own ``_id``.
        Unchanged documents are skipped; changed ones replace their old parents and children.

        With ``checkpoint_documents`` or ``checkpoint_seconds`` set (settings of the ``ingest``
        group), the ingest commits a generation of whole documents every N documents written or
        M seconds (a checkpoint), so a kill or an error loses only what was written since the
        last one, and running the same ingest again skips what the checkpoints hold (unchanged
        by content hash) and goes on from there. Files are then loaded, split and written as
        they come: what is held at once is one file's documents (at most ``max_file_mb``), one
        batch of documents and the ids of the documents seen (see ``_ingest_with``).
        """
        t0 = time.perf_counter()
        if isinstance(paths, (str, Path)):
            paths = [paths]
        report = IngestReport()
        items = list(self._input_files(paths, prefix))
        if self._checkpointing():
            return self._ingest(self._stream_files(items, report), report, t0, progress, streaming=True)
        docs: list[Document] = []
        for item in items:
            docs.extend(self._load(item, report))
        return self._ingest(docs, report, t0, progress)

    def _input_files(self, paths: Sequence[str | Path], prefix: str) -> Iterator[Skipped | tuple[Path, str]]:
        """The files to load with their sources, in order, and (as ``Skipped``) what is not
        loaded and why; nothing is read yet."""
        for raw in paths:
            root = Path(raw)
            if not root.exists():
                yield Skipped(str(root), "no such file or directory")
                continue
            base = root if root.is_dir() else root.parent
            for f in iter_files(root):
                if isinstance(f, tuple):  # not a file to load, and why
                    path, reason = f
                    yield Skipped(prefix + (path.relative_to(base).as_posix() if path != base else path.name), reason)
                    continue
                yield f, prefix + f.relative_to(base).as_posix()

    def _load(self, item: Skipped | tuple[Path, str], report: IngestReport) -> list[Document]:
        """The documents of one input file (what it skips goes into the report)."""
        if isinstance(item, Skipped):
            report.skipped.append(item)
            return []
        path, source = item
        loaded = load_file(path, source, self._load_limits())
        report.skipped.extend(loaded.skipped)
        return loaded.documents

    def _load_limits(self) -> LoadLimits:
        ing = self.settings.ingest
        return LoadLimits(int(ing.max_file_mb * 1024 * 1024), ing.max_file_pages, ing.max_file_chars,
                          ing.max_file_seconds)

    def _stream_files(self, items: list[Skipped | tuple[Path, str]], report: IngestReport) -> Iterator[Document]:
        """The documents of the input files, one file loaded at a time, each document id once:
        where the same id comes twice, only its last occurrence (what a full load keeps)."""
        last = self._last_occurrences(items)
        for i, item in enumerate(items):
            for j, d in enumerate(self._load(item, report)):
                if last is None or last.get(d.doc_id, (i, j)) == (i, j):
                    yield d

    def _last_occurrences(self, items: list[Skipped | tuple[Path, str]]) -> dict[str, tuple[int, int]] | None:
        """Where each document id occurs last, as (input file, document in it), or None when no
        id can occur twice. A file that is not JSONL holds one document, whose id comes from its
        source; only JSONL files and the files whose id can be taken twice are read for this
        (their ids are kept, not their texts)."""
        fixed: dict[int, str] = {}  # input file -> the id of its one document (if it loads)
        jsonl: list[int] = []
        for i, item in enumerate(items):
            if isinstance(item, Skipped):
                continue
            if item[0].suffix.lower() == ".jsonl":
                jsonl.append(i)
            else:
                fixed[i] = doc_id_for(item[1])
        taken = Counter(fixed.values())
        if (not jsonl or (len(jsonl) == 1 and not fixed)) and all(n == 1 for n in taken.values()):
            return None

        def ids(i: int) -> list[str]:
            return [d.doc_id for d in self._load(items[i], IngestReport())]

        found = {i: ids(i) for i in jsonl}
        in_jsonl = {d for found_ids in found.values() for d in found_ids}
        for i, d in fixed.items():
            found[i] = ids(i) if taken[d] > 1 or d in in_jsonl else [d]
        last: dict[str, tuple[int, int]] = {}
        for i in sorted(found):
            for j, d in enumerate(found[i]):
                last[d] = (i, j)
        return last

    def add_documents(self, documents: Iterable[Any], *, source: str = "api",
                      progress: ProgressFactory | None = None) -> IngestReport:
        """Ingest documents held in code or a database, by default in one transaction. Each is a
        mapping with ``id`` (or ``_id``), ``text``, and optionally ``title``, ``metadata`` (a flat
        mapping of filterable values) and ``source`` (default ``source``), or an object with
        those attributes: a ragsift ``Document``, a LangChain ``Document`` (``page_content``,
        ``metadata``, ``id``), a LlamaIndex node (``text``, ``metadata``, ``id_``) or a Haystack
        ``Document`` (``content``, ``meta``, ``id``). A document whose id is stored already
        replaces it (unless unchanged); a bad one is skipped with its reason. With a checkpoint
        setting (see ``ingest``), ``documents`` is consumed as it is written (an iterator is
        never held whole) and committed in checkpoints."""
        t0 = time.perf_counter()
        report = IngestReport()
        docs = self._records(documents, source, report)
        if self._checkpointing():
            return self._ingest(docs, report, t0, progress, streaming=True)
        return self._ingest(list(docs), report, t0, progress)

    @staticmethod
    def _records(documents: Iterable[Any], source: str, report: IngestReport) -> Iterator[Document]:
        seen: set[str] = set()  # a second document with the same id is skipped
        for i, row in enumerate(documents):
            row = as_record(row)
            src = str(row.get("source") or source) if isinstance(row, Mapping) else source
            item = record_document(dict(row) if isinstance(row, Mapping) else row, f"{src}[{i}]", src, seen,
                                   fmt="text")
            if isinstance(item, Document):
                yield item
            else:
                report.skipped.append(item)

    def _checkpointing(self) -> bool:
        ing = self.settings.ingest
        return bool(ing.checkpoint_documents or ing.checkpoint_seconds)

    def _ingest(self, docs: Iterable[Document], report: IngestReport, t0: float,
                progress: ProgressFactory | None, streaming: bool = False) -> IngestReport:
        """Split, embed and store documents on a store object of its own."""
        with self._writer("ingest", report) as writer:
            report = self._ingest_with(writer, docs, report, t0, progress, streaming)
            if report.checkpoints and writer.save_search_indexes():  # a large store: readers map, not build
                report.seconds = time.perf_counter() - t0
            return report

    @contextmanager
    def _writer(self, what: str, report: IngestReport | None = None) -> Iterator[Store]:
        """A store object of its own for one write. A failure that is not one of ours (a full
        disk, an I/O error, the store's own exception) becomes one StoreError saying that
        nothing was committed and which generation the knowledge base stays at; after an
        ingest's checkpoints (``report.checkpoints``), that they are kept and only the rest was
        rolled back (one of ours gets the same words added)."""
        with self._write_lock:
            writer = open_store(self.path, self.settings)
            try:
                yield writer
            except RagsiftError as e:
                if report is not None and report.checkpoints:
                    e.args = (f"{e}; {_checkpoints_kept(report, writer)}",)
                raise
            except Exception as e:
                if report is not None and report.checkpoints:
                    raise StoreError(f"{what} failed: {_first_line(e)}; {_checkpoints_kept(report, writer)}") from e
                raise StoreError(f"{what} failed: {_first_line(e)}; nothing was committed and the knowledge "
                                 f"base stays at generation {_committed_generation(writer)}") from e
            finally:
                try:
                    writer.close()
                finally:
                    self._refresh()

    def _ingest_with(self, writer: Store, docs: Iterable[Document], report: IngestReport, t0: float,
                     progress: ProgressFactory | None, streaming: bool = False) -> IngestReport:
        """Write the documents that are new or changed, whole documents at a time.

        Not ``streaming``: ``docs`` is held whole (the same id twice: the last one wins), split
        up front (the progress total is the number of children) and written in one transaction.
        ``streaming`` (checkpoints on): ``docs`` yields each id once and is read as it is
        written, ``INGEST_GROUP`` documents looked up at a time; the progress total is None.

        Either way a transaction is begun when the first document needs writing, and committed
        at the end; with ``checkpoint_documents`` / ``checkpoint_seconds`` it is also committed
        (and a new one begun on the same writer) after a batch of whole documents, with their
        small-index entries and RAPTOR tree, has been put into it and the count or the time
        says so. An error rolls back the open transaction only: earlier checkpoints stay."""
        ing = self.settings.ingest
        cfg = SplitSettings(self.settings.index.parent_max_tokens, self.settings.index.child_tokens,
                            self.settings.index.child_overlap_tokens)
        total: int | None = None
        if streaming:
            todo: Iterable[tuple[Document, list, list]] = (
                item for group in _groups(docs, INGEST_GROUP) for item in self._to_write(writer, group, report, cfg))
        else:
            # the same document twice (e.g. a directory and a file in it): the last one wins
            todo = list(self._to_write(writer, list({d.doc_id: d for d in docs}.values()), report, cfg))
            total = sum(len(children) for _, _, children in todo)
        txn = None
        bar = embedder = entries = None
        pending: list[tuple[Document, list, list]] = []
        n_pending = written = 0  # children pending; documents written since the last commit
        last_commit = time.monotonic()
        parents = children = 0

        def write() -> None:
            nonlocal txn, pending, n_pending, written
            if not pending:
                return
            if txn is None:
                txn = writer.begin()
            report.embed_seconds += self._write(txn, pending, embedder, entries, bar)
            written += len(pending)
            pending, n_pending = [], 0
            due = ((ing.checkpoint_documents and written >= ing.checkpoint_documents)
                   or (ing.checkpoint_seconds and time.monotonic() - last_commit >= ing.checkpoint_seconds))
            if due:
                commit()

        def commit() -> None:
            nonlocal txn, written, last_commit
            report.generation = txn.commit()
            report.checkpoints += 1
            txn, written, last_commit = None, 0, time.monotonic()
            if streaming:
                log.info("ingest: checkpoint, generation %d (%d documents written so far)", report.generation,
                         len(report.added) + len(report.updated))

        try:
            for d, doc_parents, doc_children in todo:
                if entries is None:
                    bar = progress(total, "embedding") if progress else None
                    embedder = self.embedder()
                    entries = SmallIndex(self.settings, make_summarizer(self.settings, lambda: llm_for(self.settings.llm),
                                                                        report))
                parents += len(doc_parents)
                children += len(doc_children)
                pending.append((d, doc_parents, doc_children + entries.extra(doc_parents, doc_children)))
                n_pending += len(pending[-1][2])
                if n_pending >= EMBED_BATCH or (ing.checkpoint_documents
                                                and written + len(pending) >= ing.checkpoint_documents):
                    write()
            write()
            if txn is not None:
                commit()
        except BaseException:
            if txn is not None:  # roll back the open transaction; committed checkpoints stay
                try:
                    txn.abort()
                except Exception as e:  # the next writer rolls back; the error to see is the first
                    log.warning("could not roll back at once (%s); the next writer will", e)
            raise
        finally:
            if bar is not None:
                bar.close()
        if not report.checkpoints:  # nothing to write
            report.generation = writer.generation
        if entries is not None:
            report.parents = entries.parents + parents
            report.children = entries.entries + children
        report.seconds = time.perf_counter() - t0
        if report.checkpoints:
            log.info("ingest: generation %d (%d commits), %d added, %d updated, %d unchanged, %d skipped, "
                     "%d children in %.1fs", report.generation, report.checkpoints, len(report.added),
                     len(report.updated), len(report.unchanged), len(report.skipped), report.children,
                     report.seconds)
        return report

    def _to_write(self, writer: Store, docs: list[Document], report: IngestReport,
                  cfg: SplitSettings) -> Iterator[tuple[Document, list, list]]:
        """The documents among ``docs`` to write (new or changed), split into parents and
        children; unchanged ones and ones over ``max_document_chunks`` go into the report."""
        stored = writer.get_documents([d.doc_id for d in docs]) if docs else {}
        todo = []
        for d in docs:
            old = stored.get(d.doc_id)
            if old is not None and old.content_hash == d.content_hash:
                report.unchanged.append(d.doc_id)
            else:
                todo.append(d)
                (report.updated if old is not None else report.added).append(d.doc_id)
        limit = self.settings.ingest.max_document_chunks
        for d in todo:
            parents, children = split_document(d, cfg)
            if len(children) > limit:  # skipped, its stored version (if any) kept
                report.skipped.append(Skipped(d.source if d.format != "jsonl" else f"{d.source}:{d.doc_id}",
                                              f"{len(children)} chunks; the limit is {limit} (setting "
                                              "max_document_chunks)"))
                (report.added if d.doc_id in report.added else report.updated).remove(d.doc_id)
                continue
            yield d, parents, children

    def _write(self, txn, pending, embedder: Embedder, entries: "SmallIndex", bar) -> float:
        """Embed and store a batch of documents with every entry of their small index."""
        if not pending:
            return 0.0
        texts, source = [], []  # source: the entry whose vectors an entry takes (itself, or its chunk)
        for d, parents, children in pending:
            pmap = {p.parent_id: p for p in parents}
            at = {}
            for c in children:
                at[c.child_id] = len(texts)
                texts.append(index_text(d, pmap[c.parent_id], c, self.settings.index.index_headings))
                # keyword and entity entries are found by BM25 only: they share their chunk's vectors
                source.append(at[c.child_id[:-1]] if c.kind in DERIVED_KINDS else len(texts) - 1)
        own = [i for i, j in enumerate(source) if i == j]
        slot = {i: n for n, i in enumerate(own)}
        t = time.perf_counter()
        own_texts = [texts[i] for i in own]
        vectors = embedder.embed_passages(own_texts) if own_texts else None
        extra, sparse = self._representations(own_texts)
        spent = time.perf_counter() - t
        i = 0
        for d, parents, children in pending:
            indexed = []
            for c in children:
                k = slot[source[i]]
                indexed.append(IndexedChild(c, self.analyzer.analyze(texts[i]), vectors[k],
                                            {n: v[k] for n, v in extra.items()}, sparse[k] if sparse else None,
                                            detect_language(c.text)))
                i += 1
            if entries.raptor:
                t = time.perf_counter()
                more_parents, more = entries.tree(d, parents, indexed, embedder)
                more_texts = [index_text(d, p, ic.child, self.settings.index.index_headings)
                              for p, ic in zip(more_parents, more)]
                more_extra, more_sparse = self._representations(more_texts)
                spent += time.perf_counter() - t
                parents = parents + more_parents
                indexed += [IndexedChild(ic.child, self.analyzer.analyze(more_texts[j]), ic.vector,
                                         {n: v[j] for n, v in more_extra.items()},
                                         more_sparse[j] if more_sparse else None, detect_language(ic.child.text))
                            for j, ic in enumerate(more)]
            txn.put_document(d, parents, indexed)
        if bar is not None:
            bar.update(len(texts))
        return spent

    def _representations(self, texts: list[str]) -> tuple[dict[str, Any], list | None]:
        """Vectors of the extra embedders and learned sparse vectors, for the texts indexed."""
        if not texts:
            return {}, None
        ix = self.settings.index
        extra = {name: load_embedder(name, self.settings.embedding).embed_passages(texts) for name in ix.extra_embedders}
        sparse = None
        if ix.sparse_encoder:
            from ragsift.models.sparse import load_sparse_encoder
            sparse = load_sparse_encoder(ix.sparse_encoder).encode_passages(texts)
        return extra, sparse

    # ------------------------------------------------------------------ query
    def query(self, question: str, *, filter: dict[str, Any] | None = None, deadline: Deadline | None = None,
              **overrides: Any) -> Result:
        """Answer a question with ranked passages (parent sections by default) and a trace.

        ``filter`` is a metadata filter (``ragsift.store.filters``). ``overrides`` are settings
        by flat name (``ragsift.config``), for this query only: channels, fusion, rrf_k,
        weights, normalization, unit, index_kinds, max_parents, token_budget, channel_depth,
        channel_timeout_s / channel_timeouts; with a language model (``llm``): hyde_* settings and
        the hyde / hyde_bm25 / multi_query channels, rewrite, rerank, multihop and hop_* settings.
        ``deadline``: cancelling it (a client that went away) stops the query's channels.
        """
        settings = self._query_settings(overrides)
        with self.reading():
            where = parse_filter(filter, self.store.fields(), settings.query.max_filter_nodes)
            result = self.retriever.retrieve(question, settings, where, filter, deadline=deadline)
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

    def search_round(self, question: str, **overrides: Any) -> SearchRound:
        """One retrieval round before expansion: each channel's ranking with raw scores, the
        fused order and what was found (for tuning and evaluation)."""
        settings = self._query_settings(overrides)
        with self.reading():
            return self.retriever.searcher.search(question, settings, None)

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
                    raise RagsiftError(f"no document with source {source!r}")
                ids.extend(found)
            if not ids:
                raise RagsiftError("nothing to delete: give document ids or a source")
            known = writer.get_documents(ids)
            missing = [i for i in ids if i not in known]
            if missing:
                raise RagsiftError(f"unknown document id(s): {', '.join(missing[:10])}")
            with writer.begin() as txn:
                for i in dict.fromkeys(ids):
                    txn.delete_document(i)
        return list(dict.fromkeys(ids))

    def copy_to(self, path: str | Path, *, progress: ProgressFactory | None = None,
                **store: Any) -> "KnowledgeBase":
        """Copy this knowledge base to a new one at ``path`` on another store (``store="milvus",
        store_uri=...`` or ``store="lancedb"``) without re-embedding: documents, parents,
        children, their terms and vectors go over as stored, in one commit. The copy keeps every
        other setting. Returns the new knowledge base."""
        bad = set(store) - {"store", "store_uri", "store_name", "store_index"}
        if bad:
            raise ConfigError(f"only store settings can change in a copy, not {', '.join(sorted(bad))}")
        path = Path(path)
        if (path / SETTINGS_FILE).exists():
            raise StoreError(f"{path} already holds a knowledge base; copy into a new directory")
        settings = self.settings.replace(store_name="", **store)
        if settings.store.kind is StoreKind.LANCEDB:
            settings = settings.replace(store_uri="", store_name="")
        elif not settings.store.name:
            settings = settings.replace(store_name=default_store_name(path))
        path.mkdir(parents=True, exist_ok=True)
        with self.reading() as src:
            vectors = {name: int(v["dim"]) for name, v in src.manifest.get("vectors", {}).items()}
            dest = open_store(path, settings, dim=src.dim, vectors=vectors)
            if dest.generation != 0:
                raise StoreError(f"the destination store already holds a knowledge base (generation {dest.generation})")
            total = src.stats()["documents"]
            bar = progress(total, "copying") if progress else None
            try:
                with dest.begin() as txn:
                    for doc, parents, children in src.export():
                        txn.put_document(doc, parents, children)
                        if bar is not None:
                            bar.update(1)
            finally:
                if bar is not None:
                    bar.close()
        settings.save(path / SETTINGS_FILE)
        kb = KnowledgeBase(path, settings, dest)
        kb._embedder = self._embedder
        return kb

    def document(self, doc_id: str) -> tuple[StoredDocument, list[StoredParent]] | None:
        """A stored document and its sections in order (summary parents left out), or None."""
        with self.reading() as store:
            doc = store.get_documents([doc_id]).get(doc_id)
            if doc is None:
                return None
            parents = store.get_document_parents([doc_id]).get(doc_id, [])
        return doc, [sp for sp in parents if not sp.parent.synthetic]

    def sections(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]:
        """Whole sections (parents) by id: what a passage was cut from."""
        with self.reading() as store:
            return store.get_parents(list(parent_ids))

    def documents(self):
        """The stored documents by id (``StoredDocument``: source, title, counts, metadata)."""
        with self.reading() as store:
            return store.get_documents()

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
        st["settings"] = self.settings.to_dict()
        st["analyzer"] = {"name": self.analyzer.name, "current": self.analyzer.name == DEFAULT_ANALYZER}
        if self.analyzer.name != DEFAULT_ANALYZER:
            st["analyzer"]["note"] = (f"made with the BM25 analyzer {self.analyzer.name}, which it keeps; "
                                      f"re-ingest into a new knowledge base for {DEFAULT_ANALYZER}")
        return st

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "KnowledgeBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return (text.splitlines()[0][:300] if text else type(e).__name__)


def _checkpoints_kept(report: IngestReport, writer: Store) -> str:
    return (f"the {report.checkpoints} checkpoint(s) this ingest committed are kept (the knowledge base is at "
            f"generation {_committed_generation(writer)}) and only what was written since the last one was "
            "rolled back; run the same ingest again to resume (unchanged documents are skipped)")


def _groups(items: Iterable[Any], n: int) -> Iterator[list[Any]]:
    """``items`` in lists of ``n`` (the last may be shorter), read as they are needed."""
    group: list[Any] = []
    for item in items:
        group.append(item)
        if len(group) >= n:
            yield group
            group = []
    if group:
        yield group


def _committed_generation(store: Store) -> int | str:
    """The generation committed now (re-read: the failure may have come after the commit)."""
    try:
        store.refresh()
        return store.generation
    except Exception:
        return "its last committed one"


#: the identity settings named when a settings file is missing (the rest are in the store's manifest)
IDENTITY_SHOWN = ("embedder", "analyzer", "child_tokens", "small_index")


def _check_identity(settings: Settings, recorded: dict[str, Any] | None, sfile: Path) -> None:
    """A settings file that disagrees with what the store recorded at creation (edited, emptied)
    is an error naming each setting; a store made before identities were recorded takes the
    file's (it records them at its next commit)."""
    if not recorded:
        return
    mine = settings.identity()
    wrong = [k for k in INDEX_KEYS if k in recorded and k in mine and _same(recorded[k]) != _same(mine[k])]
    if wrong:
        raise ConfigError(f"{sfile} does not match the knowledge base it belongs to: "
                          + "; ".join(f"{k} is {_shown(mine[k])} there, but the knowledge base was built with "
                                      f"{_shown(recorded[k])}" for k in wrong)
                          + ". Index settings cannot change after creation: restore them in the file (`ragsift "
                            "check --rewrite-settings` writes back what the store recorded), or create a new "
                            "knowledge base")


def _same(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def rewrite_settings(path: str | Path) -> Settings:
    """Write ``ragsift.toml`` of an embedded knowledge base from the index settings its store
    recorded at creation (query defaults go back to the package's); for a settings file that
    was lost, emptied or edited. Returns the settings written."""
    path = Path(path)
    recorded = embedded_identity(path)
    if recorded is None:
        raise StoreError(f"no embedded knowledge base at {path} (manifest.json missing)")
    if not recorded:
        raise StoreError(f"the store at {path} was made before ragsift recorded its settings; its settings file "
                         "cannot be rebuilt from it")
    settings = Settings().replace(**{k: v for k, v in recorded.items() if k in INDEX_KEYS})
    settings.save(path / SETTINGS_FILE)
    return settings


def _shown(v: Any) -> str:
    return repr(list(v) if isinstance(v, tuple) else str(v) if isinstance(v, str) else v)


def check_knowledge_base(path: str | Path) -> CheckReport:
    """Check the knowledge base at ``path`` without opening it: a damaged settings file,
    manifest or data file is a problem in the report, naming the file."""
    path = _existing(path)
    settings, trouble = _settings_of(path)
    report = check_store(path, settings)
    if trouble:
        report.problems.insert(0, trouble)
    return report


def restore_knowledge_base(path: str | Path, generation: int | None = None) -> int:
    """Commit a kept generation (default: the newest that checks out) as the newest one;
    returns its new number. For a knowledge base that a damaged manifest or data file keeps
    from opening, or to undo a commit."""
    settings, _ = _settings_of(_existing(path))
    return restore_store(path, settings, generation)


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not (path / SETTINGS_FILE).exists() and not (path / "manifest.json").exists():
        raise StoreError(f"no knowledge base at {path}")
    return path


def _settings_of(path: Path) -> tuple[Settings, str | None]:
    """The settings of a knowledge base, or (when its file is damaged) the defaults (an
    embedded store) and what is wrong."""
    try:
        return Settings.load(path / SETTINGS_FILE), None
    except ConfigError as e:
        return Settings(), str(e)
