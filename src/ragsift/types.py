"""Value objects that flow through ragsift: documents, parents, children, hits, results.

All are frozen dataclasses; nothing in ragsift mutates a caller's objects.

**One concept, its names.** The words differ by layer for one reason each; this is where they meet:

- a *section* at the faces (CLI, HTTP, MCP, the page) is a ``Parent`` here (``parent_id``; the
  ``parent`` unit): a document's heading path and its text, what is returned whole;
- an *entry* (``EntryKind``, ``index_kinds``, ``get_entries``) is a row of the small index that
  points to a section: a ``Child`` here (``child_id``, ``IndexedChild`` in the store, the
  ``child`` unit), of one ``EntryKind``: a ``chunk`` of the section's text (the default), a
  sentence, its key sentences, a summary or a RAPTOR node, its keywords or entities, the whole
  section (``parent``); the store's ``child_id`` column and the wire's ``child`` keep the old
  word, compatibly;
- a *ranking* is ``Ranking`` (below): ids and scores, best first, whatever is ranked;
- a *passage* is what a query returns (``Passage``): a unit's text, packed into the budget.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

#: a ranking: (id, score) pairs, best first; the ids are units (a parent, entry or document id: a
#: query's ``unit``) or documents. Each channel's list, fusion's, reranking's and multi-hop's are one.
Ranking = list[tuple[str, float]]


@dataclass(frozen=True)
class Document:
    """One loaded source document, before splitting."""

    doc_id: str
    source: str  # path relative to the ingest root, or file name for JSONL rows
    title: str
    text: str  # normalised text; Markdown-style '#' headings carry the structure
    content_hash: str
    format: str  # md, txt, html, pdf, jsonl
    metadata: dict[str, Any] = field(default_factory=dict)


# parents at or past this position are summaries (a RAPTOR tree's nodes), not sections
SYNTHETIC_POSITION = 1_000_000

#: the metadata key where a file's document records the file's absolute path on the server: its
#: identity, and what a sync mirrors by (``ingest.pipeline``). It is the operator's, kept for
#: ragsift itself: no face shows it and no filter names it (``public_metadata``); the operator
#: reads it with ``KnowledgeBase.file_paths``. A caller sees the document's ``source`` instead:
#: its path relative to the folder it was ingested from, or the name it was ingested under.
PATH_KEY = "path"
#: metadata ragsift keeps for itself (name -> why a filter may not name it)
#: what a query of an empty knowledge base says (``Result.warnings``), in every face
EMPTY_KNOWLEDGE_BASE = ("the knowledge base holds no documents: ingest some first (`ragsift ingest PATH`, "
                        "KnowledgeBase.ingest, or POST /v1/files)")
INTERNAL_METADATA: dict[str, str] = {
    PATH_KEY: "where a file is on the server is the operator's, kept for ragsift itself (a file's identity and "
              "sync); filter by source, the name a document was ingested under (its path in its folder)",
}


def public_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A document's metadata as any caller sees it: without what ragsift keeps for itself
    (``INTERNAL_METADATA``). The one place that decides it: passages, document listings,
    documents and their views are made with it."""
    if not any(k in metadata for k in INTERNAL_METADATA):
        return metadata
    return {k: v for k, v in metadata.items() if k not in INTERNAL_METADATA}


def located(location: tuple[str, int, int] | None) -> dict[str, Any] | None:
    """A location as JSON: {"page": 3} or {"pages": [3, 5]}, {"slide": 2}, ... (None when unknown)."""
    if not location:
        return None
    kind, first, last = location
    return {kind: first} if first == last else {f"{kind}s": [first, last]}


def cite_location(location: tuple[str, int, int]) -> str:
    """A location as a citation says it: "p. 37", "pp. 3-5", "slide 2", "slides 2-4"."""
    kind, first, last = location
    short = {"page": ("p.", "pp.")}.get(kind, (kind, f"{kind}s"))
    return f"{short[0]} {first}" if first == last else f"{short[1]} {first}-{last}"


@dataclass(frozen=True)
class Parent:
    """A big chunk: a heading section (or paragraph group) that is returned to the user, or a
    summary that stands in for several (``synthetic``: at or past ``SYNTHETIC_POSITION``)."""

    parent_id: str
    doc_id: str
    position: int
    heading_path: tuple[str, ...]
    text: str
    tokens: int
    #: where it is in the source: ("page", first, last) in a PDF, ("slide", first, last) in a deck
    location: tuple[str, int, int] | None = None

    @property
    def synthetic(self) -> bool:
        """A summary parent (RAPTOR), not a section of the document."""
        return self.position >= SYNTHETIC_POSITION


@dataclass(frozen=True)
class Child:
    """An entry of the small index, searched to find its parent (``ragsift.ingest.small_index``).

    For ``chunk`` and ``sentence`` entries ``text == parent.text[start:end]``. ``keys``,
    ``summary`` and ``raptor`` entries have text of their own and span their whole parent."""

    child_id: str
    parent_id: str
    doc_id: str
    position: int
    start: int
    end: int
    text: str
    tokens: int
    kind: str = "chunk"
    #: the entry whose vectors this one takes instead of its own ("" for its own): keyword and
    #: entity entries are found by their words and share their chunk's vectors (not stored)
    shares: str = ""
    #: text indexed with the entry but not part of it: the header rows of the table a chunk cut
    #: from a larger table lies in (not stored)
    context: str = ""


@dataclass(frozen=True)
class Hit:
    """One child found by one channel, with the channel's raw score."""

    child_id: str
    parent_id: str
    doc_id: str
    score: float
    rank: int  # 1-based, within the channel, after parent dedup
    start: int = 0  # the child's span in its parent's text
    end: int = 0

    def to_dict(self) -> dict[str, Any]:
        # written out: dataclasses.asdict walks and deep-copies every field, 3 ms of a traced
        # SciFact answer's ~260 hits (tests/kb/test_kb.py holds it equal to asdict)
        return {"child_id": self.child_id, "parent_id": self.parent_id, "doc_id": self.doc_id,
                "score": self.score, "rank": self.rank, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class ChannelTrace:
    """What one retrieval channel did for one query."""

    name: str
    hits: tuple[Hit, ...]
    elapsed_ms: float
    error: str | None = None
    raw_children: int = 0  # children returned by the store before parent dedup

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "error": self.error,
            "raw_children": self.raw_children,
            "hits": [h.to_dict() for h in self.hits],
        }


@dataclass(frozen=True)
class Span:
    """A matched child inside its parent's text: ``parent.text[start:end]``."""

    child_id: str
    start: int
    end: int
    channels: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"child_id": self.child_id, "start": self.start, "end": self.end,
                "channels": list(self.channels)}


@dataclass(frozen=True)
class Passage:
    """A passage returned for a question: the context-complete unit handed to an LLM.

    What it is depends on the query's ``unit`` (``self.unit``): a parent section (default), a
    child chunk, a sentence window, a whole document, or, with auto-merging, whichever level
    was merged to. ``text`` is what to put in the prompt (cut around the best match and marked
    ``truncated`` when it alone exceeds the token budget); ``matched`` are the spans in ``text``
    that the channels found, with the channels that found each; ``sentences`` the sentences inside
    them that best match the question (``retrieve.highlight``); ``score`` is the fused score
    (a rank artefact: compare within one result only; the first passage of a weighted fusion
    always scores 1); ``provenance`` says which multi-hop hop and query found it. ``parent_id`` /
    ``doc_id`` / ``source`` / ``heading_path`` locate it.

    What a caller can threshold, the same on any question:

    - ``similarity``: the cosine similarity (-1 to 1) of the question's vector and the vector of
      the passage's best entry, from the ``dense`` channel (None when that channel did not return
      any of its entries, or did not run);
    - ``term_match``: the share (0 to 1) of the question's distinct search terms (the BM25
      analyzer's) that occur in the passage, its title or its heading path (None for a question
      without terms);
    - ``scores``: per channel that found it, the channel's own score of its best entry (dense: the
      cosine similarity; bm25: the BM25 score, which grows with the terms matched and their
      rarity in this knowledge base, so compare it within one knowledge base only).
    """

    rank: int
    parent_id: str
    doc_id: str
    source: str
    title: str
    heading_path: tuple[str, ...]
    text: str
    tokens: int
    score: float  # fused score (RRF or weighted); a rank artefact, never a probability
    matched: tuple[Span, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False
    provenance: tuple[dict[str, Any], ...] = ()  # multi-hop: {hop, query, rank} for each hop that found it
    unit: str = "parent"  # what this passage is: parent, child, window, document (auto: the level merged to)
    location: tuple[str, int, int] | None = None  # ("page" | "slide", first, last) where the source has them
    sentences: tuple[Span, ...] = ()  # inside ``matched``: the sentences that best match the question
    scores: dict[str, float] = field(default_factory=dict)  # channel -> its own score of the best entry
    term_match: float | None = None  # share of the question's terms in the passage (0 to 1)

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def similarity(self) -> float | None:
        """The dense channel's cosine similarity of the question and the passage's best entry."""
        return self.scores.get("dense")

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "parent_id": self.parent_id,
            "doc_id": self.doc_id,
            "source": self.source,
            "title": self.title,
            "heading_path": list(self.heading_path),
            "score": self.score,
            "similarity": self.similarity,
            "term_match": self.term_match,
            "scores": self.scores,
            "tokens": self.tokens,
            "unit": self.unit,
            "truncated": self.truncated,
            "matched": [s.to_dict() for s in self.matched],
            "sentences": [s.to_dict() for s in self.sentences],
            "metadata": self.metadata,
            "provenance": list(self.provenance),
            "location": located(self.location),
            "text": self.text,
        }


@dataclass(frozen=True)
class Trace:
    """How a result was found.

    - ``channels``: per channel, its hits (deduplicated by unit, with raw scores and ranks), the
      entries the store returned, its time and its error (a failed channel adds nothing);
    - ``fusion``: the mode and its parameters (k, or weights and normalization); ``fused``: the
      unit ids with fused scores, before reranking;
    - ``transforms``: the rewrite and the shared LLM steps (HyDE hypotheses, multi-query queries);
    - ``rerank``: the reranker's score per judged unit; ``multihop``: every hop's queries, new
      units and gain, and why it stopped; ``strategy``: a named strategy's settings, or what the
      router (``strategy = "auto"``) chose and why; ``packing``: the budget, the unit, what was skipped
      and (auto-merging) what merged;
    - ``units``: each id the trace shows (the sections of the channels' hits, the fused units)
      named as a reader knows it: ``{"source", "heading_path", "location"}``;
    - ``timings_ms``: per stage and ``total``; ``generation``: the committed state searched.
    """

    query: str
    language: str
    channels: tuple[ChannelTrace, ...]
    fusion: dict[str, Any]
    filter: dict[str, Any] | None
    generation: int
    timings_ms: dict[str, float]
    fused: tuple[tuple[str, float], ...] = ()  # (unit id, fused score), best first, before reranking
    packing: dict[str, Any] = field(default_factory=dict)
    transforms: dict[str, Any] = field(default_factory=dict)  # rewrite, HyDE hypotheses, multi-query
    rerank: dict[str, Any] | None = None  # reranker, judged units and their scores
    multihop: dict[str, Any] | None = None  # every hop's queries, new units and gain; why it stopped
    strategy: dict[str, Any] | None = None  # a named strategy's settings; auto: its choice and reason
    units: dict[str, dict[str, Any]] = field(default_factory=dict)  # unit id -> source, heading_path, location
    trace_id: str = field(default_factory=lambda: uuid.uuid4().hex)  # names this query in logs and metadata

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace_id": self.trace_id,
            "query": self.query,
            "language": self.language,
            "generation": self.generation,
            "filter": self.filter,
            "fusion": self.fusion,
            "channels": [c.to_dict() for c in self.channels],
            "fused": [{"parent_id": p, "score": s} for p, s in self.fused],
            "packing": self.packing,
            "transforms": self.transforms,
            "rerank": self.rerank,
            "multihop": self.multihop,
            "strategy": self.strategy,
            "units": self.units,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }


@dataclass(frozen=True)
class Match:
    """How well a result's passages match its question (``retrieve.confidence``).

    ``no_good_match`` is set when nothing matched well: the question has no searchable content
    (only emoji, punctuation, symbols: then no passages are returned), the knowledge base holds
    nothing to search, or no passage reaches ``min_similarity`` (dense) nor ``min_term_match``
    (terms), and nothing reaches ``min_standout`` (how far the dense channel's best stands out of the rest of its
    list); ``reason`` says which, in a sentence. ``similarity`` and ``term_match`` are the best of the
    passages', ``standout`` the dense channel's (None when unknown), beside the thresholds they were
    judged by."""

    no_good_match: bool = False
    reason: str = ""
    similarity: float | None = None
    term_match: float | None = None
    standout: float | None = None
    cross_language: bool = False  # the dense channel's best is in another language than the question
    min_similarity: float | None = None
    min_term_match: float | None = None
    min_standout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"no_good_match": self.no_good_match, "reason": self.reason, "similarity": self.similarity,
                "term_match": self.term_match, "standout": self.standout, "cross_language": self.cross_language,
                "min_similarity": self.min_similarity,
                "min_term_match": self.min_term_match, "min_standout": self.min_standout}


@dataclass(frozen=True)
class Result:
    """Passages for a question, best first, and the trace of how they were found; with none, the
    ``warnings`` that say why where it can be told. ``match`` says whether anything matched well
    (``no_good_match``, and why). ``to_dict()`` gives them as JSON-ready values; ``to_context()``
    the text for a prompt."""

    query: str
    passages: tuple[Passage, ...]
    trace: Trace
    #: why nothing was found, when that can be told: the knowledge base is empty, or a filter asks
    #: for a value no document holds (``no document has source "guide.md" (did you mean ...?)``)
    warnings: tuple[str, ...] = ()
    match: Match = field(default_factory=Match)

    @property
    def no_good_match(self) -> bool:
        """Nothing matched the question well (``match.reason`` says why): the passages, if any, are weak."""
        return self.match.no_good_match

    def to_dict(self, trace: bool = True) -> dict[str, Any]:
        d: dict[str, Any] = {"query": self.query, "trace_id": self.trace.trace_id,
                             "no_good_match": self.match.no_good_match, "match": self.match.to_dict(),
                             "passages": [p.to_dict() for p in self.passages], "warnings": list(self.warnings)}
        if trace:
            d["trace"] = self.trace.to_dict()
        return d

    def to_context(self, token_budget: int | None = None, *, citations: bool = True) -> str:
        """The passages as context for an LLM prompt, best first, each headed by its citation
        ``[n] source › heading path`` (n is the passage's rank); with ``token_budget``, passages
        are added whole while they fit (the first is cut to the budget if it alone is over)."""
        from ragsift.text.tokens import count_tokens, cut_to_tokens

        blocks: list[str] = []
        used = 0
        for p in self.passages:
            head = f"[{p.rank}] {p.source}" + (f" › {' > '.join(p.heading_path)}" if p.heading_path else "")
            if p.location:
                head += f" ({cite_location(p.location)})"
            block = f"{head}\n{p.text}" if citations else p.text
            n = count_tokens(block)
            if token_budget is not None and used + n > token_budget:
                if blocks:
                    break
                block = cut_to_tokens(block, token_budget, " …")
                n = token_budget
            blocks.append(block)
            used += n
        return "\n\n".join(blocks)


@dataclass(frozen=True)
class Skipped:
    """A file (or JSONL line) that was not ingested, and why."""

    path: str
    reason: str


#: what a file's document id looks like (``ingest.loaders.base.doc_id_for``): derived from its source
_FILE_ID = re.compile(r"d-[0-9a-f]{16}")


def document_name(doc_id: str, source: str) -> str:
    """How a person is told which document: its source (``zh/a.md``); a record, one of several a
    source can hold (a JSONL row, a document added from code), its source and its id beside
    (``faq.jsonl (faq-7)``); the id alone when the source is not known."""
    if not source:
        return doc_id
    if source == doc_id or _FILE_ID.fullmatch(doc_id):
        return source
    return f"{source} ({doc_id})"


@dataclass
class IngestReport:
    """What an ingest did. Mutable while the ingest runs; returned when it ends.

    ``added``, ``updated``, ``unchanged``, ``deleted`` and ``relabeled`` hold document ids (what a
    program passes back: ``delete``, ``view``); ``sources`` names each of them by its source (the
    file's path in its folder), ``name(id)`` / ``names(ids)`` as a person reads it, and
    ``str(report)`` (``lines()``) is the report in words: counts, then each file renamed, deleted
    and skipped by name. ``renamed`` entries are ``{"from": id, "to": id, "from_source": ...,
    "source": ...}``."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    parents: int = 0
    children: int = 0
    generation: int = 0  # the last generation this ingest committed (or the one it found, if nothing changed)
    checkpoints: int = 0  # generations this ingest committed: 1 by default, more with checkpoints, 0 if none
    seconds: float = 0.0
    embed_seconds: float = 0.0
    summaries: int = 0  # summaries written (small_index summaries / raptor)
    summary_fallbacks: int = 0  # of them, extractive because the language model failed
    renamed: list[dict[str, str]] = field(default_factory=list)  # {from, to, from_source, source}: not re-embedded
    relabeled: list[str] = field(default_factory=list)  # unchanged documents whose path or source was recorded
    ocr_pages: int = 0  # pages (and images) read by OCR
    dry_run: bool = False  # nothing was written: what would change
    sources: dict[str, str] = field(default_factory=dict)  # document id -> source, for every id named above

    def name(self, doc_id: str) -> str:
        """A document of the report as a person reads it (``document_name``)."""
        return document_name(doc_id, self.sources.get(doc_id, ""))

    def names(self, doc_ids: list[str]) -> list[str]:
        return [self.name(i) for i in doc_ids]

    def lines(self) -> list[str]:
        """The report in words: counts, then every document renamed, deleted or skipped by its
        name (and, in a dry run, every one to add or update), one a line."""
        lines = [f"generation {self.generation}: {len(self.added)} added, {len(self.updated)} updated, "
                 f"{len(self.unchanged)} unchanged, {len(self.skipped)} skipped; "
                 f"{self.parents} parents, {self.children} children in {self.seconds:.1f}s "
                 f"(embedding {self.embed_seconds:.1f}s)"
                 + (f"; {self.checkpoints} generations committed (checkpoints)" if self.checkpoints > 1 else "")]
        if self.dry_run:
            lines[0] = (f"dry run (nothing written): {len(self.added)} to add, {len(self.updated)} to update, "
                        f"{len(self.unchanged)} unchanged, {len(self.renamed)} renamed, "
                        f"{len(self.deleted)} to delete, {len(self.skipped)} skipped")
        elif self.deleted or self.renamed:
            lines[0] += f"; {len(self.renamed)} renamed (not re-embedded), {len(self.deleted)} deleted"
        if self.ocr_pages:
            lines[0] += f"; {self.ocr_pages} pages read by OCR"
        if self.dry_run:
            lines += [f"  add {n}" for n in self.names(self.added)]
            lines += [f"  update {n}" for n in self.names(self.updated)]
        for r in self.renamed:
            lines.append(f"  renamed {r.get('from_source') or r['from']} -> {r['source']}")
        lines += [f"  {'delete' if self.dry_run else 'deleted'} {n}" for n in self.names(self.deleted)]
        lines += [f"  skipped {s.path}: {s.reason}" for s in self.skipped]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = [asdict(s) for s in self.skipped]
        return d
