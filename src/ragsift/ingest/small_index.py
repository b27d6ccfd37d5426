"""The small index: what is searched to find a big chunk.

Every entry is a child row with a ``kind``; a hit on any of them leads to its parent (or, for
the returned unit, to its span, its window, its merged ancestor or its document).

- ``chunk``: sentence-aligned windows of ~``child_tokens`` (the default small index).
- ``sentence``: one entry per sentence, for sentence-window retrieval.
- ``keys``: a parent's extracted key sentences (TextRank over its sentences), no model needed.
- ``summary``: a parent's summary written by the language model (``llm`` set at ingest).
- ``keywords`` / ``entities``: a chunk's key words and phrases (jieba TF-IDF for Chinese,
  RAKE-style phrases for English) / its named entities (people, places, organisations,
  products), one entry per chunk with its span: the keyword and entity channels search them.
- ``parent``: the whole section as an entry of its own (``small_index`` parents), embedded beside
  its chunks: the big and the small searched together (multi-granularity). For short documents
  (one section) it is the document. The embedder reads as much of it as it takes (minilm 256
  model tokens, e5-small 512); BM25 reads all of it.
- ``raptor``: a summary tree per document (RAPTOR, Sarthi et al., ICLR 2024): the document's
  chunks are clustered by their vectors and each cluster summarised, then the summaries are
  clustered and summarised again, up to ``raptor_levels``. Each summary is stored as a
  parent of its own (position >= ``SYNTHETIC_POSITION``, heading path naming its level and the
  sections it covers) with one ``raptor`` entry, so it is found, returned and versioned like any
  section. Summaries come from the language model when one is set, else they are extractive.

Which kinds a knowledge base holds is an index setting (``small_index``); which kinds a query
searches is a query setting (``index_kinds``), so one knowledge base serves every strategy.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ragsift.config import EntryKind, Settings
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens, cut_to_tokens
from ragsift.types import SYNTHETIC_POSITION, Child, Document, Parent

log = logging.getLogger(__name__)

# one per chunk, found by its words: it shares its chunk's vectors (``Child.shares``)
DERIVED_KINDS = (EntryKind.KEYWORDS, EntryKind.ENTITIES)
KEY_SENTENCES = 3
KEYWORDS = 10  # key words and phrases per chunk
RAPTOR_CLUSTER = 5  # about this many nodes per cluster
SUMMARY_TOKENS = 200  # an extractive or model summary is cut to this
SUMMARY_INPUT_TOKENS = 1200  # what the model reads of a cluster


def sentence_entries(parent: Parent) -> list[Child]:
    """One entry per sentence of the parent (its exact span)."""
    out = []
    for i, (s, e) in enumerate(sentence_spans(parent.text)):
        text = parent.text[s:e]
        if text.strip():
            out.append(Child(f"{parent.parent_id}s{i}", parent.parent_id, parent.doc_id, i, s, e, text,
                             count_tokens(text), kind="sentence"))
    return out


def whole_parent_entry(parent: Parent, text: str, kind: str, suffix: str) -> Child:
    """An entry with its own text (key sentences, a summary) that points at the whole parent."""
    return Child(f"{parent.parent_id}{suffix}", parent.parent_id, parent.doc_id, 0, 0, len(parent.text), text,
                 count_tokens(text), kind=kind)


def key_sentence_text(text: str, k: int = KEY_SENTENCES) -> str:
    from ragsift.text.textrank import key_sentences

    spans = key_sentences(text, k)
    return cut_to_tokens(" ".join(text[s:e].strip() for s, e in spans), SUMMARY_TOKENS)


def keys_entry(parent: Parent) -> Child | None:
    text = key_sentence_text(parent.text)
    return whole_parent_entry(parent, text, "keys", "k") if text.strip() else None


def kmeans(vectors: np.ndarray, k: int, seed: int = 0, iterations: int = 25) -> np.ndarray:
    """Spherical k-means (cosine) with k-means++ seeding; deterministic for a seed."""
    n = len(vectors)
    x = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    if k >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    centres = [x[rng.integers(n)]]
    for _ in range(1, k):
        d = 1.0 - np.max(x @ np.array(centres).T, axis=1)
        d = np.clip(d, 0, None)
        p = d / d.sum() if d.sum() > 0 else np.full(n, 1.0 / n)
        centres.append(x[rng.choice(n, p=p)])
    c = np.array(centres)
    labels = np.full(n, -1)
    for _ in range(iterations):
        new = np.argmax(x @ c.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = x[labels == j]
            if len(members):
                m = members.sum(axis=0)
                c[j] = m / max(np.linalg.norm(m), 1e-12)
    return labels


@dataclass
class _Node:
    text: str
    vector: np.ndarray
    positions: tuple[int, ...]  # the sections (parent positions) it covers


def raptor_tree(doc: Document, parents: Sequence[Parent], chunks: Sequence[Child], vectors: np.ndarray,
                summarize: Callable[[list[str]], str], embed: Callable[[list[str]], np.ndarray],
                levels: int = 3) -> tuple[list[Parent], list[Child], list[np.ndarray]]:
    """Summary parents, their ``raptor`` entries and the entries' vectors for one document."""
    pos = {p.parent_id: p.position for p in parents}
    nodes = [_Node(c.text, vectors[i], (pos[c.parent_id],)) for i, c in enumerate(chunks)]
    out_parents: list[Parent] = []
    out_children: list[Child] = []
    out_vectors: list[np.ndarray] = []
    for level in range(1, levels + 1):
        if len(nodes) < 3:
            break
        k = max(1, math.ceil(len(nodes) / RAPTOR_CLUSTER))
        labels = kmeans(np.stack([n.vector for n in nodes]), k)
        clusters = [[n for n, lab in zip(nodes, labels) if lab == j] for j in range(k)]
        clusters = sorted((c for c in clusters if c), key=lambda c: min(min(n.positions) for n in c))
        to_summarize = [c for c in clusters if len(c) > 1]
        if not to_summarize:
            break
        texts = [summarize([n.text for n in c]) for c in to_summarize]
        vecs = embed(texts)
        made = []
        for c, text, vec in zip(to_summarize, texts, vecs):
            covered = tuple(sorted({p for n in c for p in n.positions}))
            j = len(out_parents)
            pid = f"{doc.doc_id}#r{level}.{j}"
            sections = ", ".join(str(p) for p in covered[:20]) + (" ..." if len(covered) > 20 else "")
            heading = (doc.title or doc.source, f"summary, level {level}, of sections {sections}")
            parent = Parent(pid, doc.doc_id, SYNTHETIC_POSITION + j, heading, text, count_tokens(text))
            out_parents.append(parent)
            out_children.append(whole_parent_entry(parent, text, "raptor", "c0"))
            out_vectors.append(np.asarray(vec, np.float32))
            made.append(_Node(text, np.asarray(vec, np.float32), covered))
        nodes = made + [c[0] for c in clusters if len(c) == 1]
    return out_parents, out_children, out_vectors


def extractive_summary(texts: list[str]) -> str:
    return key_sentence_text("\n".join(texts), k=4)


def make_summarizer(settings: Settings, llm_loader: Callable[[], Any], report) -> Callable[[list[str]], str]:
    """Summaries for the small index: by the language model when ``settings.llm.model`` is set (an
    extractive one when a call fails, counted in the report), else extractive key sentences."""
    if not settings.llm.model:
        def extractive(texts: list[str]) -> str:
            report.summaries += 1
            return extractive_summary(texts)
        return extractive
    from ragsift.cancel import Deadline
    from ragsift.errors import RagsiftError
    from ragsift.text.lang import detect_language
    from ragsift.text.prompts import clean_answer, get_prompt

    def by_model(texts: list[str]) -> str:
        report.summaries += 1
        text = cut_to_tokens("\n\n".join(texts), SUMMARY_INPUT_TOKENS)
        prompt = get_prompt("summary", detect_language(text), settings.llm.prompts)
        try:
            out = clean_answer(llm_loader().generate(prompt.messages(text=text), temperature=0.0,
                                                     max_tokens=2 * SUMMARY_TOKENS,
                                                     deadline=Deadline(settings.timeout("summary"))))
            if out.strip():
                return cut_to_tokens(out, SUMMARY_TOKENS)
        except RagsiftError as e:
            log.warning("summary by the language model failed (%s); using key sentences", e)
        report.summary_fallbacks += 1
        return extractive_summary(texts)
    return by_model


class SmallIndex:
    """Builds the entries a knowledge base's ``small_index`` asks for, beside its chunks."""

    def __init__(self, settings: Settings, summarize: Callable[[list[str]], str]) -> None:
        opts = set(settings.index.small_index)
        self.sentences, self.keys = EntryKind.SENTENCE in opts, EntryKind.KEYS in opts
        self.summaries, self.raptor = EntryKind.SUMMARY in opts, EntryKind.RAPTOR in opts
        self.keywords, self.entities = EntryKind.KEYWORDS in opts, EntryKind.ENTITIES in opts
        self.parents_too = EntryKind.PARENT in opts
        self.levels = settings.index.raptor_levels
        self.summarize = summarize
        self.parents = 0  # summary parents made (raptor)
        self.entries = 0  # entries made besides chunks

    def extra(self, parents: Sequence[Parent], chunks: Sequence[Child] = ()) -> list[Child]:
        out: list[Child] = []
        if self.keywords or self.entities:
            from ragsift.text.entities import entities
            from ragsift.text.keywords import keywords

            for c in chunks:
                if self.keywords and (words := keywords(c.text, KEYWORDS)):
                    out.append(replace(c, child_id=c.child_id + "w", text=", ".join(w for w, _ in words),
                                       kind="keywords", shares=c.child_id))
                if self.entities and (names := entities(c.text)):
                    out.append(replace(c, child_id=c.child_id + "n", text=", ".join(n for n, _ in names),
                                       kind="entities", shares=c.child_id))
        chunks_of: dict[str, list[Child]] = {}
        for c in chunks:
            chunks_of.setdefault(c.parent_id, []).append(c)
        for p in parents:
            if self.parents_too and p.text.strip():  # the big beside the small: the whole section, embedded
                entry = whole_parent_entry(p, p.text, "parent", "P")
                mine = chunks_of.get(p.parent_id, [])
                if len(mine) == 1 and mine[0].text == p.text and not mine[0].context:
                    entry = replace(entry, shares=mine[0].child_id)  # one chunk is the whole: the same vector
                out.append(entry)
            if self.sentences:
                out += sentence_entries(p)
            if self.keys and (k := keys_entry(p)) is not None:
                out.append(k)
            if self.summaries:
                text = self.summarize([p.text])
                if text.strip():
                    out.append(whole_parent_entry(p, text, "summary", "m"))
        self.entries += len(out)
        return out

    def tree(self, doc: Document, parents: Sequence[Parent], indexed: Sequence[Any],
             embedder: Any) -> tuple[list[Parent], list[Any]]:
        """The document's RAPTOR tree over its chunk entries (IndexedChild); returns the summary
        parents and their entries, as IndexedChild with vectors (terms are left to the caller)."""
        from ragsift.store.base import IndexedChild

        chunks = [ic for ic in indexed if ic.child.kind == "chunk"]
        if len(chunks) < 3:
            return [], []
        ps, cs, vs = raptor_tree(doc, parents, [ic.child for ic in chunks], np.stack([ic.vector for ic in chunks]),
                                 self.summarize, embedder.embed_passages, self.levels)
        self.parents += len(ps)
        self.entries += len(cs)
        return ps, [IndexedChild(c, "", v) for c, v in zip(cs, vs)]
