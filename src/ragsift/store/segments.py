"""Segments of an embedded store: a generation's children as a list of immutable parts.

A segment holds the children (and parents) written by the commits ``lo + 1 .. hi``: every row
carries the generation that wrote it (``gen``), and a document's rows are all written by one
commit. A segment's in-memory indexes (``ragsift.store.memindex``) are built once, from one
scan of ``gen > lo AND gen <= hi``, and kept by a reader across generations: a commit adds one
small segment, which is all a reader has to build at its first query after it. Segments merge
in tiers chosen by the writer (``plan``); one of ``SAVE_MIN`` children or more is built and saved
by the writer before it commits, so readers map it from disk instead of building it.

Nothing in a segment changes after it is built. What a later generation changes is which of its
rows are live: a row is live while its document's current ``gen`` (in the small documents table)
is the row's own ``gen``; a rewrite gives the document a newer one and a delete removes it
(``dead_documents``, ``live_mask``). Rows are matched to the table by the table's stable row ids (Lance
``_rowid`` of a table created with stable row ids), which compaction does not change.

BM25 keeps its statistics global (``BM25Stats``): the number of live rows, their average length
and each query term's document frequency are summed over the segments' live rows, every term
weight is computed from them at query time, and terms are added in one order for every segment,
so a row scores the same float32 value as in one merged index. In a base of several languages
they are kept per language (Chinese, English, other: each row's ``lang``): a row is scored with
the statistics of the rows of its own language, as if each language had an index of its own.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsift.store.arrow_views import booleans, index_array, mask_array, numbers, string_array
from ragsift.store.base import StoredHit, query_terms
from ragsift.store.memindex import (
    BM25_B,
    BM25_K1,
    LANGUAGE_GROUPS,
    UNKNOWN_LANGUAGE,
    BM25Index,
    Rows,
    SegmentHits,
    saved_folder,
    top_k,
)

# a language's own BM25 statistics need this many live rows; a smaller one is scored with the
# statistics of the whole base (with N = 2 every idf would be below 0.7, its rows ranked last)
LANGUAGE_MIN_ROWS = 100
SAVE_MIN = 16_384  # segments of this many children or more are built and saved by the writer
TIER = 2  # the newest two segments merge while the newer holds at least 1/TIER of the older


def plan(segments: list[list[int]], lo: int, hi: int, added: int,
         count: Callable[[int, int], int]) -> list[list[int]]:
    """The segments after a commit of generation ``hi`` (the one before: ``lo``) that wrote
    ``added`` children: a new segment for them, then the newest two merged while the newer is at
    least half the older (each child is rebuilt O(log n) times over the store's life; at most
    O(log n) segments). ``count(lo, hi)``: the live children of a merged range."""
    out = [list(s) for s in segments]
    if added:
        out.append([lo, hi, added])
    while len(out) >= 2 and out[-1][2] * TIER >= out[-2][2]:
        a, b = out[-2], out[-1]
        out[-2:] = [[a[0], b[1], count(a[0], b[1])]]
    return out


@dataclass(frozen=True)
class SegmentSpec:
    """A segment a manifest lists: its name (its saved folders' prefix), generations and rows."""

    name: str
    lo: int
    hi: int
    rows: int
    where: str | None


def segment_specs(manifest: dict[str, Any]) -> list[SegmentSpec]:
    """The segments of a committed generation. A store created before segments (no stable row
    ids) is one segment of the whole table per generation, read again at each."""
    if manifest.get("stable_row_ids") and isinstance(manifest.get("segments"), list):
        epoch = int(manifest.get("epoch", 0))
        return [SegmentSpec(f"s{epoch}-{lo:010d}-{hi:010d}", int(lo), int(hi), int(n), f"gen > {lo} AND gen <= {hi}")
                for lo, hi, n in manifest["segments"]]
    g = int(manifest["generation"])
    return [SegmentSpec(f"{g:010d}", 0, g, -1, None)] if g else []


@dataclass
class Segment:
    """One segment: its hit rows and the indexes built over them, in its own row order."""

    name: str
    lo: int
    hi: int
    where: str | None  # the scan of its rows (None: the whole table, one generation)
    cache: Path  # where its saved indexes live (``<cache>/<name>-<what>``)
    saving: bool  # whether its indexes are saved (large segments)
    rows: Rows
    read_at: int  # the generation its rows were read at (-1: unknown)
    indexes: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def cache_dir(self, what: str) -> Path:
        return self.cache / f"{self.name}-{what}"

    def index(self, key: str, build: Callable[[], Any]) -> Any:
        return memo(self.indexes, self.lock, key, build)


_MISSING = object()


def memo(cache: dict[Any, Any], lock: threading.RLock, key: Any, build: Callable[[], Any]) -> Any:
    """``cache[key]``, built under ``lock`` by the first caller that misses it (a value may be None)."""
    found = cache.get(key, _MISSING)
    if found is _MISSING:
        with lock:
            found = cache.get(key, _MISSING)
            if found is _MISSING:
                found = cache[key] = build()
    return found


def scan(table: Any, columns: list[str], where: str | None, row_ids: bool = True, most: int | None = None) -> pa.Table:
    """These columns of the rows ``where`` selects (all rows when None), with ``_rowid``. ``most``: a
    bound on how many there are, known beforehand (else they are counted first: one more scan)."""
    q = table.search()
    if where is not None:
        q = q.where(where)
    q = q.select(columns)
    if row_ids:
        q = q.with_row_id(True)
    if most is None:
        most = table.count_rows(where) if where else table.count_rows()
    return q.limit(max(1, most)).to_arrow()


def load_rows(table: Any, name: str, where: str | None, cache: Path, saving: bool,
              columns: list[str], generation: int, most: int | None = None) -> tuple[Rows, int]:
    """A segment's hit rows and the generation they were read at (every row live then): from its
    saved file when there is one, else scanned from ``table`` (of ``generation``) and saved when
    ``saving`` (indexes saved beside them use this row order)."""
    path = cache / f"{name}-rows" / "rows.arrow"
    if not path.exists():
        tbl = scan(table, columns, where, most=most)
        if not saving:
            return Rows(tbl), generation
        tbl = tbl.replace_schema_metadata({"generation": str(generation)})
        with saved_folder(path.parent) as tmp, pa.OSFile(str(tmp / path.name), "wb") as sink, \
                pa.ipc.new_file(sink, tbl.schema) as w:
            w.write_table(tbl)
    # saved (by another process first, perhaps): its row order is the one its indexes use
    tbl = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    return Rows(tbl), int((tbl.schema.metadata or {}).get(b"generation", b"-1"))


def aligned(table: Any, seg: Segment, columns: list[str]) -> pa.Table:
    """These columns of a segment's rows, in the segment's row order. Rows deleted since the
    segment was read are absent from the table now: they come back null (never searched: they
    are not live)."""
    tbl = scan(table, columns, seg.where, most=seg.rows.n if seg.where is not None else None)  # rows only die
    ids = numbers(tbl.column("_rowid"), np.uint64)
    tbl = tbl.drop_columns(["_rowid"])
    rows = seg.rows
    if rows.ordered_row_ids is not None and np.array_equal(ids, rows.ordered_row_ids):
        return tbl
    pos = rows.positions_of_row_ids(ids)
    keep = pos >= 0
    inverse = np.full(rows.n, -1, np.int64)
    inverse[pos[keep]] = np.flatnonzero(keep)
    take = index_array(inverse, valid=inverse >= 0)
    return tbl.take(take)


def dead_documents(rows: Rows, doc_ids: pa.Array, doc_gens: np.ndarray) -> frozenset[str]:
    """A segment's documents whose rows are dead: a row is live while its document's current
    generation (``doc_ids`` / ``doc_gens``: the whole documents table) is the row's own."""
    if rows.gens is None or not rows.n:
        return frozenset()
    names, _, gens = rows.documents()
    pos = numbers(pc.index_in(names, value_set=doc_ids), np.int64, fill=-1)
    current = np.where(pos >= 0, doc_gens[np.maximum(pos, 0)] if len(doc_gens) else -1, -1)
    return frozenset(names.filter(mask_array(current != gens)).to_pylist())


def live_mask(rows: Rows, dead: frozenset[str]) -> np.ndarray | None:
    """The rows not of these documents, as a mask (None: all)."""
    if not dead or not rows.n:
        return None
    mask = ~booleans(pc.is_in(rows.doc_ids, value_set=string_array(sorted(dead))))
    return None if mask.all() else mask


class BM25Stats:
    """BM25's statistics over the live rows of every segment of one generation: N, the average
    row length, and each term's document frequency (cached per term).

    Kept per language when two languages or more have ``LANGUAGE_MIN_ROWS`` live rows each
    (``per_language``; languages as ``Rows.lang_groups``): each such language's N, average length
    and document frequencies, and a term then weighs one idf per language, so a Chinese row's
    score does not depend on how many English rows there are or how long they are
    (``benchmarks/bm25_languages.py`` measured the shared statistics' cost to Chinese questions in
    a mixed base). The rows of a smaller language, and rows of no recorded language (written
    before rows had one), are scored with the statistics of every row. A
    base of one language (or one and a few rows of others) keeps one set, the same floats as
    before. ``per_language=False``: one set whatever the languages (what
    the stores did before; kept for the benchmarks that measure the difference)."""

    def __init__(self, parts: Sequence[tuple[BM25Index, np.ndarray | None]], per_language: bool = True) -> None:
        self.parts = parts
        self.n, total = 0, 0.0
        counts = np.zeros(LANGUAGE_GROUPS, np.int64)
        lengths = np.zeros(LANGUAGE_GROUPS, np.float64)
        for ix, live in parts:  # each segment's live rows read once
            groups, dl = ix.rows.lang_groups(), ix.dl
            if live is not None:
                groups, dl = groups[live], dl[live]
            self.n += len(dl)
            total += float(dl.sum())
            counts += np.bincount(groups, minlength=LANGUAGE_GROUPS)
            lengths += np.bincount(groups, weights=np.asarray(dl, np.float64), minlength=LANGUAGE_GROUPS)
        self.avgdl: float | np.ndarray = total / self.n if self.n else 1.0
        self._own = counts >= LANGUAGE_MIN_ROWS  # languages scored with their own statistics
        self._own[UNKNOWN_LANGUAGE] = False  # rows of no recorded language: the whole base's
        self.per_language = per_language and int(self._own.sum()) > 1
        if self.per_language:
            self.n_by_language = np.where(self._own, counts, self.n)
            self.avgdl = np.where(self._own, lengths / np.maximum(counts, 1), self.avgdl)
        self._df: dict[str, int | np.ndarray] = {}
        self._lock = threading.Lock()

    def df(self, term: str) -> int | np.ndarray:
        """The term's document frequency (per language: an array in ``Rows.lang_groups``' codes)."""
        found = self._df.get(term)
        if found is None:
            if self.per_language:
                by = sum((ix.live_df_by_language(term, live) for ix, live in self.parts),
                         np.zeros(LANGUAGE_GROUPS, np.int64))
                found = np.where(self._own, by, by.sum())  # a small language: the whole base's
            else:
                found = sum(ix.live_df(term, live) for ix, live in self.parts)
            with self._lock:
                if len(self._df) > 100_000:
                    self._df.clear()
                self._df[term] = found
        return found

    def weights(self, terms: str) -> list[tuple[str, float | np.ndarray]]:
        """The query's distinct terms with their weights (idf; per language an array, 0 where the
        language has no live row with the term), in the one order every segment adds them in:
        highest weight first, then by term. A term asked twice counts once (``query_terms``)."""
        items: list[tuple[str, float | np.ndarray]] = []
        for t in query_terms(terms):
            df = self.df(t)
            if not self.per_language:
                if df:
                    idf = np.float32(np.log(1.0 + (self.n - df + 0.5) / (df + 0.5)))
                    items.append((t, float(idf)))
                continue
            dfs = np.asarray(df, np.float64)
            if dfs.any():
                n = self.n_by_language.astype(np.float64)
                per = np.where(dfs > 0, np.log(1.0 + (n - dfs + 0.5) / (dfs + 0.5)), 0.0).astype(np.float32)
                items.append((t, per))
        return sorted(items, key=lambda x: (-(x[1] if isinstance(x[1], float) else float(np.max(x[1]))), x[0]))


def norm_of(index: BM25Index, avgdl: float | np.ndarray) -> np.ndarray:
    """Each row's length normalisation ``k1 (1 - b + b len / avglen)`` for this average length (per
    language: each row's language's)."""
    avg = (avgdl or 1.0) if np.ndim(avgdl) == 0 else np.asarray(avgdl, np.float64)[index.rows.lang_groups()]
    return (BM25_K1 * (1 - BM25_B + BM25_B * index.dl.astype(np.float64) / avg)).astype(np.float32)


def merge_hits(parts: list[SegmentHits], k: int) -> list[StoredHit]:
    """The k best hits of several segments' results (ties: the older segment's first); hits are
    built for those k rows only."""
    parts = [p for p in parts if len(p.idx)]
    if len(parts) <= 1:
        return SegmentHits(parts[0].rows, parts[0].idx[:k], parts[0].scores[:k]).hits() if parts else []
    scores = np.concatenate([np.asarray(p.scores, np.float64) for p in parts])
    part = np.repeat(np.arange(len(parts)), [len(p.idx) for p in parts])
    at = np.concatenate([np.arange(len(p.idx)) for p in parts])
    order = top_k(scores, k)
    hits: list[StoredHit | None] = [None] * len(order)
    for j, p in enumerate(parts):
        mine = np.flatnonzero(part[order] == j)
        pick = at[order[mine]]
        for slot, hit in zip(mine.tolist(), p.rows.hits(p.idx[pick], p.scores[pick])):
            hits[slot] = hit
    return [h for h in hits if h is not None]


def kth_score(parts: list[SegmentHits], k: int) -> float:
    """The k-th best score of several segments' results (-1 while they hold fewer than k rows): a
    floor the next segment's rows must reach to enter the merged top k."""
    if sum(len(p.idx) for p in parts) < k:
        return -1.0
    scores = np.concatenate([p.scores for p in parts])
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])
