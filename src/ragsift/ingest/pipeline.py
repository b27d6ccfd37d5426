"""The ingest pipeline: inputs -> documents -> parents and entries -> vectors and terms -> the
store, in one transaction or in checkpoints.

    files or records      ``documents_of_files`` / ``documents_of_records``: loaded, each id once
    -> new or changed     ``IngestRun._to_write``: unchanged ones (content hash) skipped
    -> split              ``splitter.split_document``: parents and chunks
    -> small index        ``SmallIndex.extra`` (sentences, keys, summaries, keywords, entities),
                          ``SmallIndex.tree`` (RAPTOR), in batches of whole documents
    -> represented        ``Representer``: dense vectors (an entry that ``shares`` another's
                          takes them), extra embedders' vectors, learned sparse vectors, terms
    -> written            ``txn.put_document``; committed at the end or at each checkpoint

``IngestRun`` holds one ingest's state (the open transaction, the pending batch, the counts);
the knowledge base gives it a writer store and a report, and gets the report back.
"""
from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from ragsift.config import Settings
from ragsift.ingest.loaders import LoadLimits, as_record, doc_id_for, iter_files, read_file, record_document
from ragsift.ingest.small_index import SmallIndex, make_summarizer
from ragsift.ingest.splitter import SplitSettings, index_text, split_document
from ragsift.models.embedders import Embedder, load_embedder
from ragsift.models.llm import llm_for
from ragsift.store.base import IndexedChild, Store, StoredDocument, relabeled
from ragsift.text.analyzer import Analyzer
from ragsift.text.clean import clean_str
from ragsift.text.lang import entry_languages
from ragsift.types import PATH_KEY, Child, Document, IngestReport, Parent, Skipped

log = logging.getLogger(__name__)
EMBED_BATCH = 64  # entries embedded at a time
INGEST_GROUP = 256  # documents looked up (stored or changed) at a time by a streaming (checkpointed) ingest

# (total, description) -> object with update(n), close(); total None: not known (a checkpointed ingest)
ProgressFactory = Callable[[int | None, str], Any]


def phase(progress: ProgressFactory | None, total: int | None, name: str) -> Any:
    """The progress of one phase of an ingest ("reading", "splitting", "writing"), when the
    factory reports every phase (its ``phases`` is true: ``console.PhaseProgress``); None
    otherwise (a factory without it sees the embedding only, as it always did)."""
    if progress is None or not getattr(progress, "phases", False):
        return None
    return progress(total, name)


class FileInput(NamedTuple):
    """A file to load: the path read, the source it is named by, and its identity (``file_path``),
    recorded with its documents as ``PATH_KEY``."""

    path: Path
    source: str
    identity: str


Input = Skipped | FileInput  # a file to load, or what is not loaded and why


# ------------------------------------------------------------------ inputs
def load_limits(settings: Settings) -> LoadLimits:
    ing = settings.ingest
    return LoadLimits(int(ing.max_file_mb * 1024 * 1024), ing.max_file_pages, ing.max_file_chars,
                      ing.max_file_seconds, ing.file_seconds, ing.file_seconds_per_page, ing.max_reader_mb, ocr=ing.ocr)


# PATH_KEY (``types``): a file's document records the file's absolute path there, its identity;
# internal (``types.public_metadata``): no caller sees it, no filter names it


def file_path(p: Path) -> str:
    """A file's identity: its absolute path, links resolved, in POSIX form."""
    return p.resolve().as_posix()


def within(path: str, folder: str) -> bool:
    """Whether the absolute ``path`` is the absolute ``folder`` or under it (POSIX forms)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


RESERVED_PATH = (f"metadata {PATH_KEY!r} is ragsift's own (where a file is on the server, never shown nor "
                 "filterable); give the value another name (e.g. 'doc_path')")


def known_sources(store: Store) -> dict[str, str]:
    """Each file the knowledge base holds a document of (by its absolute path) -> the source it
    was first named by: a file ingested again through its folder, alone, relatively or absolutely,
    keeps its name, so it stays one document."""
    out: dict[str, str] = {}
    for d in store.get_documents().values():
        p = d.metadata.get(PATH_KEY)
        if isinstance(p, str) and d.format != "jsonl":
            out.setdefault(p, d.source)
    return out


def input_files(paths: Sequence[str | Path], prefix: str, known: Mapping[str, str] | None = None,
                follow_outside_links: bool = False) -> Iterator[Input]:
    """The files to load with their sources, in order, and (as ``Skipped``) what is not loaded
    and why; nothing is read yet. A file the knowledge base knows (``known``: absolute path ->
    source) keeps its source; another's source is its path relative to the directory given (or,
    for a file, its own directory), with ``prefix`` in front.

    A directory's files stay inside it: a symbolic link to a file outside it is skipped with its
    reason, unless ``follow_outside_links`` (the operator's setting); a link so followed is known
    by where it sits in the directory (its parents resolved), not by its target, so the folder's
    sync owns it (and deletes its document when the link goes)."""
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            yield Skipped(str(root), "no such file or directory")
            continue
        base = root if root.is_dir() else root.parent
        top = file_path(root) if root.is_dir() else None
        for f in iter_files(root, follow_outside_links):
            if isinstance(f, tuple):  # not a file to load, and why
                path, reason = f
                yield Skipped(prefix + (path.relative_to(base).as_posix() if path != base else path.name), reason)
                continue
            where = file_path(f)
            if top is not None and not within(where, top):  # a link followed out of the folder
                where = (f.parent.resolve() / f.name).as_posix()
            yield FileInput(f, (known or {}).get(where) or prefix + f.relative_to(base).as_posix(), where)


def load_input(item: Input, report: IngestReport, limits: LoadLimits, record_paths: bool = True) -> list[Document]:
    """The documents of one input file (what it skips goes into the report); each records the
    file's identity (``PATH_KEY``) unless ``record_paths`` is off (uploads, whose folder is
    temporary). The key is ragsift's: a ``path`` the file gives itself (front matter, a JSONL
    row's metadata) is not kept. The path is not part of a document's content hash."""
    if isinstance(item, Skipped):
        report.skipped.append(item)
        return []
    path, source, where = item
    loaded = read_file(path, source, limits)  # in a reading process of its own, within its limits
    report.skipped.extend(loaded.skipped)
    report.ocr_pages += sum(len(d.metadata.get("ocr_pages") or ()) for d in loaded.documents)
    if not record_paths:
        return [d if PATH_KEY not in d.metadata else
                replace(d, metadata={k: v for k, v in d.metadata.items() if k != PATH_KEY}) for d in loaded.documents]
    return [replace(d, metadata={**d.metadata, PATH_KEY: where}) for d in loaded.documents]


def documents_of_files(items: list[Input], report: IngestReport, limits: LoadLimits,
                       streaming: bool, record_paths: bool = True,
                       progress: ProgressFactory | None = None) -> Iterable[Document]:
    """The documents of the input files. Not ``streaming``: every file loaded now, in a list
    (the "reading" phase of ``progress``). ``streaming``: one file loaded at a time, each
    document id once (where the same id comes twice, only its last occurrence: what a full load
    keeps)."""
    if not streaming:
        bar = phase(progress, len(items), "reading")
        docs = []
        for item in items:
            docs += load_input(item, report, limits, record_paths)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return docs
    return _stream(items, report, limits, record_paths)


def _stream(items: list[Input], report: IngestReport, limits: LoadLimits, record_paths: bool) -> Iterator[Document]:
    last = last_occurrences(items, limits)
    for i, item in enumerate(items):
        for j, d in enumerate(load_input(item, report, limits, record_paths)):
            if last is None or last.get(d.doc_id, (i, j)) == (i, j):
                yield d


def last_occurrences(items: list[Input], limits: LoadLimits) -> dict[str, tuple[int, int]] | None:
    """Where each document id occurs last, as (input file, document in it), or None when no id
    can occur twice. A file that is not JSONL holds one document, whose id comes from its source;
    only JSONL files and the files whose id can be taken twice are read for this (their ids are
    kept, not their texts)."""
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
        return [d.doc_id for d in load_input(items[i], IngestReport(), limits)]

    found = {i: ids(i) for i in jsonl}
    in_jsonl = {d for found_ids in found.values() for d in found_ids}
    for i, d in fixed.items():
        found[i] = ids(i) if taken[d] > 1 or d in in_jsonl else [d]
    last: dict[str, tuple[int, int]] = {}
    for i in sorted(found):
        for j, d in enumerate(found[i]):
            last[d] = (i, j)
    return last


def documents_of_records(records: Iterable[Any], source: str | None, report: IngestReport) -> Iterator[Document]:
    """Documents held in code: mappings or document objects (``loaders.as_record``), each id
    once (a second document with the same id is skipped with its reason, and so is one whose
    metadata names ``PATH_KEY``, ragsift's own). A document is named by its own ``source``, else
    by ``source``, else (None) by its title, else its id: what a person reads it by."""
    seen: set[str] = set()
    for i, row in enumerate(records):
        row = as_record(row)
        src = clean_str(_record_source(row, source))  # an id or title with a lone surrogate names it too
        # a record skipped is told by its place in the batch: documents[3] (or the source given)
        given = str(row.get("source") or source or "") if isinstance(row, Mapping) else source or ""
        where = clean_str(f"{given or 'documents'}[{i}]")
        item = record_document(dict(row) if isinstance(row, Mapping) else row, where, src, seen, fmt="text")
        if isinstance(item, Document) and PATH_KEY in item.metadata:  # ragsift's own: a file's identity
            seen.discard(item.doc_id)
            item = Skipped(where, RESERVED_PATH)
        if isinstance(item, Document):
            yield item
        else:
            report.skipped.append(item)


def _record_source(row: Any, source: str | None) -> str:
    """What names a record: its own source, else the one given for all, else its title, else its id."""
    if not isinstance(row, Mapping):
        return source or "documents"
    given = row.get("source") or source
    if given:
        return str(given)
    title, rid = row.get("title"), row.get("_id", row.get("id"))
    name = title if isinstance(title, str) and title.strip() else rid
    return " ".join(str(name).split())[:200] if name is not None and str(name).strip() else "documents"


# ------------------------------------------------------------------ representing entries
class Representer:
    """Every representation an entry is stored with: the knowledge base's dense vector, the
    extra embedders' vectors, the learned sparse vector, the analyzer's terms, the language."""

    def __init__(self, settings: Settings, analyzer: Analyzer, embedder: Embedder) -> None:
        self.settings, self.analyzer, self.embedder = settings, analyzer, embedder
        self.seconds = 0.0  # spent embedding

    def entries(self, texts: list[str], children: Sequence[Child], vectors: Any | None = None) -> list[IndexedChild]:
        """``children`` ready to store, represented by ``texts`` (their indexed texts). An entry
        that ``shares`` another's vectors (found in the same batch) takes them; ``vectors``,
        given, are the dense vectors of all of them."""
        at = {c.child_id: i for i, c in enumerate(children)}
        source = [at[c.shares] if c.shares else i for i, c in enumerate(children)]
        own = [i for i, j in enumerate(source) if i == j]
        slot = {i: n for n, i in enumerate(own)}
        own_texts = [texts[i] for i in own]
        t = time.perf_counter()
        if vectors is None:
            vectors = self.embedder.embed_passages(own_texts) if own_texts else None
        else:
            vectors = [vectors[i] for i in own]
        extra, sparse = self._others(own_texts)
        self.seconds += time.perf_counter() - t
        langs = entry_languages([c.text for c in children], [c.doc_id for c in children])
        out = []
        for i, c in enumerate(children):
            k = slot[source[i]]
            assert vectors is not None  # k found: there are own texts, so they were embedded
            out.append(IndexedChild(c, self.analyzer.analyze(texts[i]), vectors[k],
                                    {n: v[k] for n, v in extra.items()}, sparse[k] if sparse else None,
                                    langs[i]))
        return out

    def _others(self, texts: list[str]) -> tuple[dict[str, Any], list | None]:
        """Vectors of the extra embedders and learned sparse vectors, for the texts indexed."""
        if not texts:
            return {}, None
        ix = self.settings.index
        extra = {name: load_embedder(name, self.settings.embedding).embed_passages(texts)
                 for name in ix.extra_embedders}
        sparse = None
        if ix.sparse_encoder:
            from ragsift.models.sparse import load_sparse_encoder
            sparse = load_sparse_encoder(ix.sparse_encoder).encode_passages(texts)
        return extra, sparse


# ------------------------------------------------------------------ one ingest
@dataclass
class _Batch:
    """Documents split and waiting to be represented and written."""

    items: list[tuple[Document, list[Parent], list[Child]]]
    entries: int = 0


class IngestRun:
    """One ingest on a writer store: new and changed documents written whole, in one transaction
    (or one per checkpoint), with every entry of their small index.

    Not ``streaming``: the documents are held whole (the same id twice: the last one wins), split
    up front (the progress total is the number of entries) and written in one transaction.
    ``streaming`` (checkpoints on): they are read as they are written, ``INGEST_GROUP`` looked up
    at a time; the progress total is None. A transaction begins when the first document needs
    writing and is committed at the end; with ``checkpoint_documents`` / ``checkpoint_seconds``
    also after a batch of whole documents once the count or the time says so. An error rolls back
    the open transaction only: earlier checkpoints stay."""

    def __init__(self, settings: Settings, analyzer: Analyzer, embedder: Callable[[], Embedder], writer: Store,
                 report: IngestReport, progress: ProgressFactory | None = None) -> None:
        self.settings, self.analyzer, self.load_embedder = settings, analyzer, embedder
        self.writer, self.report, self.progress = writer, report, progress
        ix = settings.index
        self.split = SplitSettings(ix.parent_max_tokens, ix.child_tokens, ix.child_overlap_tokens)
        self.txn: Any = None
        self.streaming = False
        self.batch = _Batch([])
        self.written = 0  # documents written since the last commit
        self.last_commit = time.monotonic()
        self.parents = self.children = 0
        self.bar: Any = None
        self.embedded = 0  # entries embedded (the embedding phase's count)
        self.committed_since_bar = False
        self.rep: Representer | None = None
        self.small: SmallIndex | None = None
        self.deletes: list[str] = []  # documents to delete in the last transaction (sync: files gone)
        self.moves: list[tuple[str, Document]] = []  # (stored id, its new document): written without re-embedding

    def run(self, docs: Iterable[Document], streaming: bool, t0: float) -> IngestReport:
        self.streaming = streaming
        total: int | None = None
        if streaming:
            todo: Iterable[tuple[Document, list, list]] = (
                item for group in _groups(docs, INGEST_GROUP) for item in self._to_write(group))
        else:
            unique = list({d.doc_id: d for d in docs}.values())
            bar = phase(self.progress, len(unique), "splitting")
            todo = list(self._to_write(unique, bar))
            if bar is not None:
                bar.close()
            total = sum(len(children) for _, _, children in todo)
        try:
            for d, parents, children in todo:
                self._add(d, parents, children, total)
            self._write()
            self._move_and_delete()
            if self.txn is not None:
                self._commit()
        except BaseException:
            if self.txn is not None:  # roll back the open transaction; committed checkpoints stay
                try:
                    self.txn.abort()
                except Exception as e:  # the next writer rolls back; the error to see is the first
                    log.warning("could not roll back at once (%s); the next writer will", e)
            raise
        finally:
            if self.bar is not None:
                self.bar.close()
        return self._finish(t0)

    def _to_write(self, docs: list[Document], bar: Any = None) -> Iterator[tuple[Document, list[Parent], list[Child]]]:
        """The documents among ``docs`` to write (new or changed), split into parents and
        chunks; unchanged ones and ones over ``max_document_chunks`` go into the report.
        ``bar``: the splitting phase's progress, one a document."""
        report = self.report
        stored = self.writer.get_documents([d.doc_id for d in docs]) if docs else {}
        todo = []
        for d in docs:
            report.sources[d.doc_id] = d.source
            old = stored.get(d.doc_id)
            if old is not None and old.content_hash == d.content_hash:
                report.unchanged.append(d.doc_id)
                if _relabel(old, d):  # a file's path or name to record; its vectors as stored
                    self.moves.append((old.doc_id, d))
                    report.relabeled.append(d.doc_id)
            else:
                todo.append(d)
                (report.updated if old is not None else report.added).append(d.doc_id)
        if bar is not None:
            bar.update(len(docs) - len(todo))  # unchanged: nothing to split
        limit = self.settings.ingest.max_document_chunks
        for d in todo:
            parents, children = split_document(d, self.split)
            if bar is not None:
                bar.update(1)
            if len(children) > limit:  # skipped, its stored version (if any) kept
                report.skipped.append(Skipped(d.source if d.format != "jsonl" else f"{d.source}:{d.doc_id}",
                                              f"{len(children)} chunks; the limit is {limit} (setting "
                                              "max_document_chunks)"))
                (report.added if d.doc_id in report.added else report.updated).remove(d.doc_id)
                continue
            yield d, parents, children

    def _add(self, d: Document, parents: list[Parent], chunks: list[Child], total: int | None) -> None:
        """One split document into the batch (with its small-index entries); the batch written
        when it is full or a checkpoint is due."""
        if self.small is None:  # the models load when the first document needs them
            self.bar = self.progress(total, "embedding") if self.progress else None
            self.rep = Representer(self.settings, self.analyzer, self.load_embedder())
            self.small = SmallIndex(self.settings, make_summarizer(self.settings, lambda: llm_for(self.settings.llm),
                                                                   self.report))
        self.parents += len(parents)
        self.children += len(chunks)
        entries = chunks + self.small.extra(parents, chunks)
        self.batch.items.append((d, parents, entries))
        self.batch.entries += len(entries)
        every = self.settings.ingest.checkpoint_documents
        if self.batch.entries >= EMBED_BATCH or (every and self.written + len(self.batch.items) >= every):
            self._write()

    def _write(self) -> None:
        """Represent and store the batch; commit when a checkpoint is due."""
        if not self.batch.items:
            return
        if self.txn is None:
            self.txn = self.writer.begin()
        self._put(self.batch.items)
        self.written += len(self.batch.items)
        self.batch = _Batch([])
        ing = self.settings.ingest
        if ((ing.checkpoint_documents and self.written >= ing.checkpoint_documents)
                or (ing.checkpoint_seconds and time.monotonic() - self.last_commit >= ing.checkpoint_seconds)):
            self._commit()

    def _put(self, items: list[tuple[Document, list[Parent], list[Child]]]) -> None:
        """Embed a batch of documents (every entry at once) and put each into the transaction, with
        its RAPTOR tree when the small index has one."""
        assert self.rep is not None and self.small is not None
        before = self.rep.seconds
        headings = self.settings.index.index_headings
        texts, children = [], []
        for d, parents, entries in items:
            pmap = {p.parent_id: p for p in parents}
            for c in entries:
                texts.append(index_text(d, pmap[c.parent_id], c, headings))
                children.append(c)
        indexed = iter(self.rep.entries(texts, children))
        for d, parents, entries in items:
            mine = [next(indexed) for _ in entries]
            if self.small.raptor:
                t = time.perf_counter()
                more_parents, more = self.small.tree(d, parents, mine, self.rep.embedder)
                self.rep.seconds += time.perf_counter() - t
                more_texts = [index_text(d, p, ic.child, headings) for p, ic in zip(more_parents, more)]
                parents = parents + more_parents
                mine += self.rep.entries(more_texts, [ic.child for ic in more], [ic.vector for ic in more])
            self.txn.put_document(d, parents, mine)
        self.report.embed_seconds += self.rep.seconds - before
        self.embedded += len(texts)
        if self.bar is not None:
            if self.committed_since_bar:  # a checkpoint's "writing" phase took the line: embedding again
                self.bar = self.progress(None, "embedding") if self.progress else None
                self.committed_since_bar = False
                if self.bar is not None:
                    self.bar.update(self.embedded - len(texts))
            if self.bar is not None:
                self.bar.update(len(texts))

    def _move_and_delete(self) -> None:
        """Renamed and relabeled documents written under their new names from what is stored (no
        re-embedding), then the documents to delete, in the open (or a new) transaction."""
        if not (self.moves or self.deletes):
            return
        if self.txn is None:
            self.txn = self.writer.begin()
        exported = {d.doc_id: (d, ps, cs) for d, ps, cs in self.writer.export(doc_ids=[o for o, _ in self.moves])}
        for old_id, new in self.moves:
            if old_id in exported:
                self.txn.put_document(*relabeled(exported[old_id], new))
                if new.doc_id != old_id:
                    self.txn.delete_document(old_id)
        for doc_id in self.deletes:
            self.txn.delete_document(doc_id)

    def _commit(self) -> None:
        bar = phase(self.progress, None, "writing")
        self.report.generation = self.txn.commit()
        if bar is not None:
            bar.close()
            self.committed_since_bar = True
        self.report.checkpoints += 1
        self.txn, self.written, self.last_commit = None, 0, time.monotonic()
        if self.streaming:
            log.info("ingest: checkpoint, generation %d (%d documents written so far)", self.report.generation,
                     len(self.report.added) + len(self.report.updated))

    def _finish(self, t0: float) -> IngestReport:
        report = self.report
        if not report.checkpoints:  # nothing to write
            report.generation = self.writer.generation
        if self.small is not None:
            report.parents = self.small.parents + self.parents
            report.children = self.small.entries + self.children
        report.seconds = time.perf_counter() - t0
        if report.checkpoints:
            log.info("ingest: generation %d (%d commits), %d added, %d updated, %d unchanged, %d skipped, "
                     "%d children in %.1fs", report.generation, report.checkpoints, len(report.added),
                     len(report.updated), len(report.unchanged), len(report.skipped), report.children,
                     report.seconds)
        return report


def _relabel(old: StoredDocument, new: Document) -> bool:
    """Whether an unchanged file's document must be written again for its name: the file's path
    is not recorded yet (a knowledge base made before paths were), or the source differs."""
    path = new.metadata.get(PATH_KEY)
    return new.format != "jsonl" and isinstance(path, str) and (old.metadata.get(PATH_KEY) != path
                                                                or old.source != new.source)


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
