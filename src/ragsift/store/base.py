"""The store interface. The embedded LanceDB store and the scale-out Milvus store implement it;
a store that fuses dense and BM25 in its own engine also implements ``HybridSearch``.

Guarantees every implementation gives:

- **One generation, one commit.** Everything a write transaction adds or deletes (documents,
  parents, children, vectors, terms) becomes visible together when ``commit()`` returns, as
  generation N+1. Readers never see part of a transaction. A process killed at any moment
  leaves the last committed generation intact; the next writer rolls back the leftovers.
- **No orphans.** Deleting or replacing a document removes all its parents and children in
  the same commit. A committed child always has its parent, written in the same generation.
- **Filters are values.** Filters arrive parsed (``ragsift.store.filters``) and are rendered
  with every value quoted as a literal.
"""
from __future__ import annotations

import datetime
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ragsift.store.filters import INT64_MAX, INT64_MIN, Node, iso_date, parse_iso_date
from ragsift.types import INTERNAL_METADATA, Child, Document, Parent, located

# Filter fields every knowledge base has; document metadata adds more. ``lang`` is the language
# detected for each entry ("zh", "en" or "other"), so a filter on it keeps an entry's own
# language, whatever its document says: a document's metadata ``lang`` is kept but not filterable.
BUILTIN_FIELDS = {"doc_id": "string", "source": "string", "title": "string", "format": "string", "lang": "string"}


def known_fields(recorded: dict[str, str]) -> dict[str, str]:
    """The filterable fields of a store whose manifest records these metadata fields: the
    recorded ones (less a built-in name recorded before it was built in, and what ragsift keeps
    for itself, ``INTERNAL_METADATA``, that a knowledge base made before recorded), then the
    built-in ones."""
    return {**{k: t for k, t in recorded.items() if k not in BUILTIN_FIELDS and k not in INTERNAL_METADATA},
            **BUILTIN_FIELDS}


@dataclass
class CheckReport:
    """What a store check found: the committed generation, every problem (each naming what is
    damaged: a file, a table version, a row), the counts, and the generations a restore can
    go back to (newest last)."""

    store: str
    generation: int | None = None
    problems: list[str] = field(default_factory=list)
    restorable: list[int] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "store": self.store, "generation": self.generation, "problems": self.problems,
                "restorable": self.restorable, "counts": self.counts}


@dataclass(frozen=True)
class StoredHit:
    child_id: str
    parent_id: str
    doc_id: str
    score: float  # higher is better; cosine similarity for dense, BM25 for bm25
    start: int
    end: int
    lang: str = ""  # the entry's language (zh, en, other) detected at ingest; "" when stored before
    #: the store's own score when ``score`` is a mix of scaled ones (``retrieve.whole``); None: ``score`` is it
    raw: float | None = None

    @property
    def raw_score(self) -> float:
        """The store's score (cosine similarity for dense, BM25 for bm25), whatever ranked the hit."""
        return self.score if self.raw is None else self.raw


def heading_json(p: Parent) -> str:
    """What a store keeps in a parent's ``heading`` column: its heading path as a JSON list, or
    with a location an object ``{"path": [...], "location": [kind, first, last]}``."""
    path = list(p.heading_path)
    if p.location is None:
        return json.dumps(path, ensure_ascii=False)
    return json.dumps({"path": path, "location": list(p.location)}, ensure_ascii=False)


def read_heading(raw: str) -> tuple[tuple[str, ...], tuple[str, int, int] | None]:
    """A parent's heading path and location from its ``heading`` column (``heading_json``)."""
    if not raw or raw == "[]":  # no heading (most sections of plain text): nothing to decode
        return (), None
    v = json.loads(raw)
    if isinstance(v, dict):
        loc = v.get("location")
        return tuple(v.get("path") or ()), (str(loc[0]), int(loc[1]), int(loc[2])) if loc else None
    return tuple(v), None


def read_metadata(raw: str | None) -> dict[str, Any]:
    """A ``metadata`` column's JSON object (most are empty: nothing to decode)."""
    return json.loads(raw) if raw and raw != "{}" else {}


class ParentLabel(NamedTuple):
    """What names a section in a trace (``Store.parent_labels``): its document's source, its
    heading path and its location, without its text."""
    source: str
    heading_path: tuple[str, ...]
    location: tuple[str, int, int] | None


@dataclass(frozen=True)
class StoredParent:
    parent: Parent
    source: str
    title: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The section as every face shows it (HTTP, MCP)."""
        p = self.parent
        return {"parent_id": p.parent_id, "doc_id": p.doc_id, "source": self.source, "title": self.title,
                "heading_path": list(p.heading_path), "location": located(p.location), "text": p.text,
                "tokens": p.tokens}


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    source: str
    title: str
    format: str
    content_hash: str
    generation: int
    parents: int
    children: int
    metadata: dict[str, Any]


@dataclass(frozen=True)
class IndexedChild:
    """A child ready to store: the child, its analyzed BM25 terms, its dense vector, and the
    knowledge base's other representations: a vector per extra embedder (by name) and a
    learned sparse vector (token id -> weight)."""

    child: Child
    terms: str
    vector: np.ndarray
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    sparse: dict[int, float] | None = None
    lang: str = ""  # the entry's language (``ragsift.text.lang``)


def query_terms(terms: str) -> list[str]:
    """A query's distinct analyzer terms, in the order first asked. Every store scores BM25 over
    these: a term asked twice counts once (Robertson's query-term saturation at k3 = 0). Counting
    it again (as Lucene does) let a long statement's repeated words outweigh its rare ones: 2.7
    points of BM25's nDCG@10 on LawBench statements; seven other sets move by at most 0.5
    (docs/benchmarks.md)."""
    return list(dict.fromkeys(terms.split()))


class WriteTransaction(Protocol):
    generation: int  # the generation this transaction will commit as

    def put_document(self, doc: Document, parents: Sequence[Parent],
                     children: Sequence[IndexedChild]) -> None:
        """Add a document, replacing any earlier version of the same doc_id."""

    def delete_document(self, doc_id: str) -> bool:
        """Remove a document with all its parents and children. False if it is not stored."""

    def commit(self) -> int:
        """Make everything visible at once; returns the new generation."""

    def abort(self) -> None:
        """Drop everything this transaction wrote."""

    def __enter__(self) -> WriteTransaction:
        """Use in a ``with`` block: commit on a clean exit, abort on an exception."""

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None: ...


class TransactionBase:
    """What every store's write transaction shares: use once, commit on a clean ``with`` exit,
    abort on an exception; deleting a document from what this transaction buffered or wrote,
    and from what is committed (``_stored``, removed at commit: ``_doomed``)."""

    _done: bool
    _pending_docs: set[str]  # doc ids with rows buffered by this transaction
    _stored: set[str]  # committed doc ids
    _doomed: set[str]  # committed doc ids this transaction replaces or deletes

    def _drop_pending(self, doc_id: str) -> None:  # pragma: no cover - each store implements it
        """Forget the buffered rows of a document."""
        raise NotImplementedError

    def _drop_written(self, doc_id: str) -> bool:
        """Remove rows this transaction already wrote for a document; True if there were some."""
        return False

    def delete_document(self, doc_id: str) -> bool:
        """Remove a document with all its parents and children. False if it is not stored."""
        self._check_open()
        existed = doc_id in self._pending_docs
        if existed:
            self._pending_docs.discard(doc_id)
            self._drop_pending(doc_id)
        existed = self._drop_written(doc_id) or existed
        if doc_id in self._stored:
            self._stored.discard(doc_id)
            self._doomed.add(doc_id)
            existed = True
        return existed

    def commit(self) -> int:  # pragma: no cover - each store implements it
        raise NotImplementedError

    def abort(self) -> None:  # pragma: no cover - each store implements it
        raise NotImplementedError

    def _check_open(self) -> None:
        if self._done:
            from ragsift.errors import StoreError

            raise StoreError("this write transaction is already committed or aborted")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            if not self._done:
                self.commit()
        else:
            try:
                self.abort()
            except Exception as e:  # the next writer rolls back; the error to see is the first
                logging.getLogger(__name__).warning("could not roll back at once (%s); the next writer will", e)


class ManifestStore:
    """What both stores share around their manifest (the committed generation, the vector
    columns, the filter fields): picking up a newer one, and the fields a filter may name."""

    generation: int
    manifest: dict[str, Any]
    #: the settings fixed at creation (``Settings.identity``): written into the manifest when the
    #: store is made, and at the next commit of a store made before it was recorded
    identity: dict[str, Any] | None = None

    def manifest_to_commit(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """``manifest`` with the identity added where it is not recorded yet."""
        if self.identity and "identity" not in manifest:
            manifest["identity"] = dict(self.identity)
        return manifest

    def _load_manifest(self) -> None:  # pragma: no cover - each store implements it
        raise NotImplementedError

    def _manifest_changed(self) -> bool:  # pragma: no cover - each store implements it
        raise NotImplementedError

    def stale(self) -> bool:
        """Whether a newer generation was committed (by another process or store object)."""
        return self._manifest_changed()

    def refresh(self) -> bool:
        """Pick up a generation committed by another process. True if it changed."""
        if not self._manifest_changed():
            return False
        old = self.generation
        self._load_manifest()
        return self.generation != old

    def fields(self) -> dict[str, str]:
        """Filterable fields and their types: the built-in ones, then the metadata fields seen
        (a metadata field recorded under a built-in name before that name was built in loses;
        one ragsift keeps for itself, ``path``, recorded by a knowledge base made before, is none)."""
        return known_fields(self.manifest.get("fields") or {})


class Store(Protocol):
    generation: int
    dim: int
    manifest: dict[str, Any]  # the committed generation's manifest (vector columns, fields, identity)

    def fields(self) -> dict[str, str]: ...

    def refresh(self) -> bool:
        """Pick up a generation committed by another process. True if it changed."""

    def stale(self) -> bool:
        """Whether ``refresh`` would pick up a newer generation."""

    def search_dense(self, vector: np.ndarray, k: int, where: Node | None,
                     kinds: Sequence[str] = ("chunk",), using: str = "") -> list[StoredHit]:
        """The ``k`` entries of the given kinds nearest by cosine similarity, on the main
        vectors or (``using``) on an extra embedder's."""

    def search_bm25(self, terms: str, k: int, where: Node | None,
                    kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        """The ``k`` entries of the given kinds with the best BM25 score for analyzer terms
        (each distinct term once: ``query_terms``)."""

    def search_sparse(self, query: dict[int, float], k: int, where: Node | None,
                      kinds: Sequence[str] = ("chunk",)) -> list[StoredHit]:
        """The ``k`` entries with the largest dot product with a learned sparse query vector."""

    def count_children(self, parent_ids: Iterable[str], kind: str = "chunk") -> dict[str, int]:
        """How many entries of ``kind`` each parent has (auto-merging measures shares with it)."""

    def languages(self) -> dict[str, int]:
        """How many chunks there are of each language (``zh``, ``en``, ``other``) in the committed
        generation; {} when the entries were stored without languages."""

    def get_parents(self, parent_ids: Iterable[str]) -> dict[str, StoredParent]: ...

    def parent_labels(self, parent_ids: Iterable[str]) -> dict[str, ParentLabel]:
        """The source, heading path and location of each parent found (``get_parents`` without
        the text and metadata: what a trace names its sections by)."""

    def get_document_parents(self, doc_ids: Iterable[str]) -> dict[str, list[StoredParent]]:
        """All parents of each document, in document order."""

    def get_documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, StoredDocument]: ...

    def document_titles(self) -> list[tuple[str, str]]:
        """(document id, title) of each document of the committed generation with a title: two
        columns read, where ``get_documents()`` decodes every document (seconds at a million)."""

    def find_documents(self, source: str) -> list[StoredDocument]: ...

    def begin(self) -> WriteTransaction: ...

    def stats(self) -> dict[str, Any]: ...

    def check(self) -> CheckReport:
        """Read the committed generation whole and check it (``CheckReport``)."""
        ...

    def optimize(self) -> dict[str, Any]:
        """Compact, and remove what no kept generation needs; returns what was done."""
        ...

    def save_search_indexes(self) -> bool:
        """Build and save what readers of the committed generation would otherwise build at their
        first query (large embedded stores); whether anything was built."""
        ...

    def check_integrity(self) -> list[str]:
        """Problems found (children without parents, counts that disagree); empty when sound."""

    def export(self, batch: int = 100, doc_ids: Sequence[str] | None = None
               ) -> Iterator[tuple[Document, list[Parent], list[IndexedChild]]]:
        """Every committed document (or those of ``doc_ids``) with its parents and indexed
        children (terms and vectors as stored), for copying a knowledge base to another store, or
        a document under another name, without re-embedding. ``Document.text`` is empty: the
        parents hold the text."""

    def get_entries(self, doc_ids: Sequence[str]) -> dict[str, list[Child]]:
        """The small-index entries of documents, in order, without their vectors (a document's
        chunks and the rest, as ``ragsift show`` lists them); an entry's text is its parent's
        span (entries with text of their own keep an empty text)."""

    def close(self) -> None: ...


@runtime_checkable
class HybridSearch(Protocol):
    """A store that fuses dense and BM25 in its own engine (Milvus' hybrid search): what the
    channel ``engine_hybrid`` runs on (``store_fusion = "engine"``). A backend whose stores
    implement it says so in its registration (``StoreBackend.provides``), so a query is checked
    before a store opens; the channel checks the store it gets with ``isinstance``."""

    def search_hybrid(self, vector: np.ndarray, terms: str, k: int, where: Node | None, *,
                      fusion: str = "rrf", rrf_k: int = 60, weights: Sequence[float] = (0.5, 0.5),
                      depth: int = 100, kinds: Sequence[str] = ("chunk",),
                      normalize: bool = True) -> list[StoredHit]:
        """The ``k`` best entries of dense and BM25 (analyzer ``terms``) fused in the engine:
        ``fusion`` "rrf" (with ``rrf_k``) or "weighted" (``weights``: dense, bm25; scores
        normalized first with ``normalize``), over the top ``depth`` of each."""


def entry_of(r: dict[str, Any]) -> Child:
    """A stored child row as an entry without its text."""
    return Child(r["child_id"], r["parent_id"], r["doc_id"], int(r["position"]), int(r["start"]), int(r["end"]), "",
                 int(r["tokens"]), kind=r.get("kind") or "chunk")


def entry_order(c: Child) -> tuple[int, str, int, int]:
    """Entries in document order: by parent (its number in the id), then position in it."""
    m = re.search(r"#[pr](\d+)", c.parent_id)
    return (int(m.group(1)) if m else 0, c.parent_id, c.start, c.position)


def relabeled(exported: tuple[Document, list[Parent], list[IndexedChild]], new: Document
              ) -> tuple[Document, list[Parent], list[IndexedChild]]:
    """A stored document under another id, source or metadata (a renamed file), its parents'
    and entries' ids renamed with it, its vectors and terms as stored: written without
    re-embedding. The text stays the parents' (``new.text`` is not used)."""
    old, parents, children = exported
    a, b = old.doc_id, new.doc_id

    def moved(x: str) -> str:
        return b + x[len(a):] if x.startswith(a) else x
    ps = [replace(p, parent_id=moved(p.parent_id), doc_id=b) for p in parents]
    cs = [replace(ic, child=replace(ic.child, child_id=moved(ic.child.child_id), parent_id=moved(ic.child.parent_id),
                                    doc_id=b)) for ic in children]
    return new, ps, cs


def exported_document(d: StoredDocument) -> Document:
    """A stored document as a Document to write elsewhere (its text lives in its parents)."""
    return Document(d.doc_id, d.source, d.title, "", d.content_hash, d.format, dict(d.metadata))


def export_children(rows: Iterable[dict[str, Any]], parents: Sequence[Parent],
                    vectors: dict[str, str] | None = None) -> list[IndexedChild]:
    """Stored child rows (ids, position, span, tokens, terms, vectors, ``sparse`` as a dict) of
    one document as IndexedChild objects in document order; a child's text is its parent's
    text[start:end]. ``vectors`` maps extra embedder names to their row keys."""
    texts = {p.parent_id: p.text for p in parents}
    out = [IndexedChild(Child(r["child_id"], r["parent_id"], r["doc_id"], r["position"], r["start"], r["end"],
                              texts[r["parent_id"]][r["start"]:r["end"]], r["tokens"], r.get("kind") or "chunk"),
                        r["terms"], np.asarray(r["vector"], np.float32),
                        {name: np.asarray(r[col], np.float32) for name, col in (vectors or {}).items()},
                        r.get("sparse"), r.get("lang") or "") for r in rows]
    order = {p.parent_id: p.position for p in parents}
    return sorted(out, key=lambda ic: (order[ic.child.parent_id], ic.child.position))


LANGUAGES = ("zh", "en", "other")  # what ragsift.text.lang.detect_language says


def export_documents(store: Store, batch: int, child_rows: Callable[[list[str]], Iterable[dict[str, Any]]],
                     vectors: dict[str, str], doc_ids: Sequence[str] | None = None
                     ) -> Iterator[tuple[Document, list[Parent], list[IndexedChild]]]:
    """``Store.export`` for any store: documents (those of ``doc_ids``, or all) in batches, with
    their parents and the child rows ``child_rows(doc_ids)`` reads (``sparse`` already a dict;
    ``vectors`` maps extra embedder names to row keys)."""
    docs = list(store.get_documents(doc_ids).values()) if doc_ids is not None else list(store.get_documents().values())
    for i in range(0, len(docs), batch):
        part = docs[i:i + batch]
        ids = [d.doc_id for d in part]
        parents = store.get_document_parents(ids)
        by_doc: dict[str, list[dict[str, Any]]] = {}
        for r in child_rows(ids):
            by_doc.setdefault(r["doc_id"], []).append(r)
        for d in part:
            ps = [sp.parent for sp in parents.get(d.doc_id, [])]
            yield exported_document(d), ps, export_children(by_doc.get(d.doc_id, []), ps, vectors)


FIELD_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def metadata_field_type(value: Any) -> str | None:
    """A metadata value's filter type: string, int, float, bool, date (a ``date`` or
    ``datetime``, stored as ISO 8601 text) or list (of strings); None: kept, not filterable."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if INT64_MIN <= value <= INT64_MAX else None  # a store holds 64-bit integers
    if isinstance(value, float):
        return "float" if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "date"
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return "list"
    return None


def metadata_json(metadata: dict[str, Any]) -> str:
    """Document metadata as stored: JSON, dates as ISO text."""
    return json.dumps(metadata, ensure_ascii=False, default=lambda v: iso_date(v) if isinstance(
        v, (datetime.date, datetime.datetime)) else str(v))


def filterable_values(fields: dict[str, str], metadata: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The metadata values a store indexes for filters, and the fields seen for the first time.

    A field's type is fixed by its first value; later values of another type stay in the
    document metadata but are not filterable (an int is accepted in a float field; ISO 8601 text
    in a date field is that date, as JSON (a JSONL file, the HTTP API) carries dates; a date in a
    string field is its ISO text). What ragsift keeps for itself (``INTERNAL_METADATA``) is kept in
    the metadata, never indexed for filters."""
    values: dict[str, Any] = {}
    new: dict[str, str] = {}
    for key, value in metadata.items():
        ftype = metadata_field_type(value)
        if ftype is None or not FIELD_NAME_RE.match(key) or key in BUILTIN_FIELDS or key in INTERNAL_METADATA:
            continue
        known = fields.get(key) or new.get(key)
        if known is None:
            new[key] = known = ftype
        if known == "date" and ftype == "string":
            parsed = parse_iso_date(value)
            if parsed is not None:
                value, ftype = parsed, "date"
        elif known == "string" and ftype == "date":
            value, ftype = iso_date(value), "string"
        if known == ftype or (known == "float" and ftype == "int"):
            values[key] = float(value) if known == "float" else iso_date(value) if known == "date" \
                else list(value) if known == "list" else value
    return values, new


def integrity_problems(parents: list[dict[str, Any]], children: list[dict[str, Any]],
                       docs: dict[str, StoredDocument]) -> list[str]:
    """Check rows (``parent_id, doc_id, gen`` / ``child_id, parent_id, doc_id, gen``) against
    the documents: every child has its parent of the same generation, every parent its
    document, and the counts agree."""
    problems = []
    pmap = {p["parent_id"]: p for p in parents}
    for c in children:
        p = pmap.get(c["parent_id"])
        if p is None:
            problems.append(f"child {c['child_id']} has no parent {c['parent_id']}")
        elif p["gen"] != c["gen"]:
            problems.append(f"child {c['child_id']} (gen {c['gen']}) and parent (gen {p['gen']}) differ")
    for p in parents:
        if p["doc_id"] not in docs:
            problems.append(f"parent {p['parent_id']} has no document {p['doc_id']}")
    counts: dict[str, list[int]] = {}
    for p in parents:
        counts.setdefault(p["doc_id"], [0, 0])[0] += 1
    for c in children:
        counts.setdefault(c["doc_id"], [0, 0])[1] += 1
    for d in docs.values():
        got = counts.get(d.doc_id, [0, 0])
        if got != [d.parents, d.children]:
            problems.append(f"document {d.doc_id}: expected {d.parents}/{d.children} "
                            f"parents/children, found {got[0]}/{got[1]}")
    return problems
